"""A world of rows built once per worker and put back whenever a test wants it again: the
factories' and the API's work (users, teams, notes, trackables, unlocked codes) costs tens
of milliseconds a world, a few INSERTs of its rows a few. The rows come back exactly, keys
and secrets included, so the tokens and cookies issued while it was built stay good; what
is not a row (a client's cookies, a file) is the caller's to keep."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Table, select

from app.extensions import db
from tests.conftest import (
    _child_tables_first,
    _empty_all_tables,
    tables_with_rows,
    without_key_checks,
)

T = TypeVar("T")


@dataclass(frozen=True)
class Snapshot:
    """The rows of every table that held one, parent tables first."""

    tables: tuple[tuple[Table, tuple[dict[str, Any], ...]], ...]


def take() -> Snapshot:
    """The committed rows of the database now."""
    db.session.commit()
    written = tables_with_rows()
    connection = db.session.connection()
    tables = [table for index, table in enumerate(_child_tables_first()) if index in written]
    rows = tuple(
        (table, tuple(dict(row) for row in connection.execute(select(table)).mappings()))
        for table in reversed(tables)
    )
    db.session.commit()
    return Snapshot(rows)


def put_back(snapshot: Snapshot) -> None:
    """The database as it was when `snapshot` was taken: every table emptied, then the
    snapshot's rows written again; every object the session held is read again."""
    db.session.rollback()
    _empty_all_tables()
    without_key_checks()
    for table, rows in snapshot.tables:
        db.session.execute(table.insert(), list(rows))
    db.session.commit()


_kept: dict[str, tuple[Snapshot, Any]] = {}


def kept(name: str, build: Callable[[], T]) -> T:
    """The rows `build()` writes, as new, and the value it returns (keys and codes, not
    row objects, which outlive no session; the caller copies what it changes): built the
    first time in this worker, its snapshot put back after."""
    if name not in _kept:
        value = build()
        _kept[name] = take(), value
        return value
    snapshot, value = _kept[name]
    put_back(snapshot)
    return value
