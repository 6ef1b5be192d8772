"""Keyset pagination of list reads (docs/contract/wire.md, Pagination).

A list has one stable `Order`: its sort keys, the last of them unique (the primary key),
so that every row has exactly one place. A `Page` is the first `limit` rows whose key
comes after the key of the previous page's last row (`WHERE (k1, k2) < (:k1, :k2)` for
a newest-first list), never an offset: rows added or deleted between two requests move
no other row, so a row present throughout is listed once, neither twice nor skipped. (A
row whose own sort key changes, a note with new activity, moves with it.) The API turns
a page's last key into an opaque cursor (api.pages); services only see keys.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import Select, and_, literal, or_, tuple_
from sqlalchemy.sql import operators
from sqlalchemy.sql.elements import ColumnElement, UnaryExpression

from app.errors import ValidationFailed
from app.extensions import db

T = TypeVar("T")
Key = tuple[Any, ...]

FOREIGN_CURSOR = "Not a cursor of this list; start again without it."


@dataclass(frozen=True)
class Page:
    """The page a client asked for: at most `limit` rows after the row whose sort key is
    `after` (None: from the start)."""

    limit: int
    after: Key | None = None


@dataclass(frozen=True)
class Listing(Generic[T]):
    """What a list read returns: its items; `truncated` when a cap cut an unpaged read;
    `next_after`, on a page that is not the last, the key the next page starts after."""

    items: list[T]
    truncated: bool = False
    next_after: Key | None = None

    def with_items(self, items: list[Any]) -> Listing[Any]:
        """The same listing, its items replaced by their views (one per item)."""
        return Listing(items, self.truncated, self.next_after)


def foreign_cursor() -> ValidationFailed:
    return ValidationFailed({"cursor": [FOREIGN_CURSOR]})


class Order:
    """A list's stable order, as it is written for ORDER BY: `Order(Note.last_activity_utc
    .desc(), Note.id.desc())`. The last key must be unique."""

    def __init__(self, *keys: Any) -> None:
        self.clauses = keys
        self.keys: list[tuple[ColumnElement[Any], bool]] = []
        for key in keys:
            if isinstance(key, UnaryExpression) and key.modifier in (
                operators.desc_op,
                operators.asc_op,
            ):
                self.keys.append((key.element, key.modifier is operators.desc_op))
            else:
                self.keys.append((key, False))

    def after(self, key: Key) -> ColumnElement[bool]:
        """Rows that come after the row with this key. One row-value comparison when every
        key runs the same way (an index serves it), else its expanded form."""
        self._check(key)
        values = [
            literal(value, type_=expression.type)
            for (expression, _), value in zip(self.keys, key, strict=True)
        ]
        expressions = [expression for expression, _ in self.keys]
        directions = {descending for _, descending in self.keys}
        if len(directions) == 1:
            left, right = tuple_(*expressions), tuple_(*values)
            return left < right if directions == {True} else left > right
        alternatives = []
        for index, (expression, descending) in enumerate(self.keys):
            equal = [expressions[before] == values[before] for before in range(index)]
            beyond = expression < values[index] if descending else expression > values[index]
            alternatives.append(and_(*equal, beyond))
        return or_(*alternatives)

    def _check(self, key: Key) -> None:
        """A key of this order: as many values as keys, each of its key's type (a cursor
        is signed, so only an order changed since it was made can fail here)."""
        if len(key) != len(self.keys):
            raise foreign_cursor()
        for (expression, _), value in zip(self.keys, key, strict=True):
            try:
                expected = expression.type.python_type
            except NotImplementedError:
                continue
            if not isinstance(value, expected):
                raise foreign_cursor()


def read_list(
    statement: Select,
    order: Order,
    *,
    page: Page | None = None,
    cap: int | None = None,
    params: dict[str, Any] | None = None,
    scalars: bool = False,
) -> Listing[Any]:
    """`statement` (a SELECT without ORDER BY) in `order`: one `page` when the client
    asked for one, else every row, or the first `cap` (`truncated` when more matched).
    With `scalars`, each row's first column (the entity)."""
    if page is not None:
        return read_page(statement, order, page, params, scalars=scalars)
    statement = statement.order_by(*order.clauses)
    if cap is not None:
        statement = statement.limit(cap + 1)
    result = db.session.execute(statement, params or {})
    rows = list(result.scalars() if scalars else result.all())
    if cap is None:
        return Listing(rows)
    return Listing(rows[:cap], truncated=len(rows) > cap)


def read_page(
    statement: Select,
    order: Order,
    page: Page,
    params: dict[str, Any] | None = None,
    *,
    scalars: bool = False,
) -> Listing[Any]:
    """One page of `statement` (a SELECT without ORDER BY) in `order`: its rows (with
    `scalars`, each row's first column, e.g. the entity), and the key of the last one when
    more follow. The keys are read as extra columns of the same statement."""
    width = len(statement.column_descriptions)
    keyed = statement.add_columns(
        *(expression.label(f"page_key_{n}") for n, (expression, _) in enumerate(order.keys))
    )
    if page.after is not None:
        keyed = keyed.where(order.after(page.after))
    keyed = keyed.order_by(*order.clauses).limit(page.limit + 1)
    result = db.session.execute(keyed, params or {})
    shape = _row_shape(tuple(result.keys())[:width])
    rows = list(result.all())
    more = len(rows) > page.limit
    rows = rows[: page.limit]
    items = [row[0] if scalars else shape(*row[:width]) for row in rows]
    next_after = tuple(rows[-1][width:]) if more else None
    return Listing(items, next_after=next_after)


@functools.lru_cache(maxsize=64)
def _row_shape(names: tuple[str, ...]) -> Any:
    """Rows without their key columns, read by name or position as the statement's own."""
    return collections.namedtuple("PageRow", names, rename=True)  # type: ignore[misc]


def page_of(items: Sequence[T], key: Callable[[T], Key], page: Page | None) -> Listing[T]:
    """One `page` (None: all) of a list already sorted by `key` in Python, for an order
    SQL cannot state alike on both databases (case-folded names): the same cursor rules,
    on lists of one caller's size (their teams, a tree's categories)."""
    if page is None:
        return Listing(list(items))
    after = page.after
    if after is not None and items:
        if len(after) != len(key(items[0])):
            raise foreign_cursor()
        try:
            items = [item for item in items if key(item) > after]
        except TypeError as error:  # a key of another shape
            raise foreign_cursor() from error
    chosen = list(items[: page.limit])
    more = len(items) > page.limit
    return Listing(chosen, next_after=key(chosen[-1]) if more else None)
