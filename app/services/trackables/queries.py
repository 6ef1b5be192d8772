"""The trackables' statements below the ORM, on the hot path of a code lookup: the codes a
typed code may be, with their trackable, in one statement; an access session opened or
refreshed in one; the recent misses counted for the alarm. Each is built once and runs
through app.platform.database.execute_by_driver (psycopg2 on PostgreSQL while FAST_PATHS
has `driver_statements`; otherwise SQLAlchemy Core on the session's connection). Rows, not
instances: `loaded` makes a trackable of a match's row."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple, cast

from sqlalchemy import Insert, Integer, Select, Table, bindparam, func, or_, select
from sqlalchemy.dialects import postgresql, sqlite

from app.extensions import db
from app.models.budget import BudgetSpend
from app.models.trackable import CodeKind, Trackable, TrackableAccessSession, TrackableCode
from app.platform.database import execute_by_driver, loaded, mapped_columns

CODES = cast(Table, TrackableCode.__table__)
TRACKABLES = cast(Table, Trackable.__table__)
TRACKABLE_COLUMNS = mapped_columns(Trackable)
_ID = [column.key for column in TRACKABLE_COLUMNS].index("id")
_PUBLIC_CODE = [column.key for column in TRACKABLE_COLUMNS].index("public_code")


class CodeMatch(NamedTuple):
    """A code row that matched, and its trackable's row (TRACKABLE_COLUMNS' order)."""

    code_hash: str
    kind: CodeKind
    trackable_row: tuple[Any, ...]

    @property
    def trackable_id(self) -> uuid.UUID:
        return cast(uuid.UUID, self.trackable_row[_ID])

    @property
    def public_code(self) -> str:
        return cast(str, self.trackable_row[_PUBLIC_CODE])

    def trackable(self) -> Trackable:
        """The trackable, as the session would have loaded it."""
        return loaded(db.session, Trackable, self.trackable_row)


def codes_matching(hashes: Sequence[str]) -> list[CodeMatch]:
    """Each code whose hash is one of `hashes`, with its trackable."""
    params = {f"hash_{index}": found for index, found in enumerate(hashes)}
    rows = execute_by_driver(db.session, _codes_matching(len(hashes)), params)
    return [CodeMatch(row[0], row[1], row[2:]) for row in rows]


def open_access_session(
    client_key: str, trackable_id: uuid.UUID, session_id: uuid.UUID, now: datetime
) -> uuid.UUID:
    """The id of the client's session for the trackable: `session_id`, opened now, or the
    one already there with its `last_used_utc` refreshed. One statement, which a
    concurrent twin cannot make twice."""
    params = {
        "id": session_id,
        "client_key": client_key,
        "trackable_id": trackable_id,
        "created_utc": now,
        "last_used_utc": now,
    }
    statement = _opening(db.session.get_bind().dialect.name)
    ((opened,),) = execute_by_driver(db.session, statement, params)
    return cast(uuid.UUID, opened)


def misses_since(budgets: tuple[str, str], since: datetime, threshold: int) -> int:
    """How many spends of the two miss budgets were made after `since`, counting at most
    `threshold`."""
    params = {"client": budgets[0], "account": budgets[1], "since": since, "threshold": threshold}
    ((total,),) = execute_by_driver(db.session, RECENT_MISSES, params)
    return int(total)


@functools.cache
def _codes_matching(count: int) -> Select[Any]:
    return (
        select(CODES.c.code_hash, CODES.c.kind, *TRACKABLE_COLUMNS)
        .join_from(CODES, TRACKABLES, TRACKABLES.c.id == CODES.c.trackable_id)
        .where(CODES.c.code_hash.in_([bindparam(f"hash_{index}") for index in range(count)]))
    )


@functools.cache
def _opening(dialect: str) -> Insert:
    """INSERT ... ON CONFLICT DO UPDATE of a session's `last_used_utc`, returning its id."""
    table = cast(Table, TrackableAccessSession.__table__)
    insert_into = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = insert_into(table).values(
        id=bindparam("id"),
        client_key=bindparam("client_key"),
        trackable_id=bindparam("trackable_id"),
        status_message="",
        created_utc=bindparam("created_utc"),
        last_used_utc=bindparam("last_used_utc"),
    )
    return statement.on_conflict_do_update(
        index_elements=[table.c.client_key, table.c.trackable_id],
        set_={"last_used_utc": statement.excluded.last_used_utc},
    ).returning(table.c.id)


RECENT_MISSES = select(func.count()).select_from(
    select(BudgetSpend.id)
    .where(
        or_(BudgetSpend.budget == bindparam("client"), BudgetSpend.budget == bindparam("account")),
        BudgetSpend.spent_utc > bindparam("since"),
    )
    .limit(bindparam("threshold", type_=Integer))
    .subquery()
)
