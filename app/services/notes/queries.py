"""The notes' queries below the ORM: discovery's reads as plain rows, on PostgreSQL on a
connection of their own through the driver (while FAST_PATHS has `driver_cursor`), and a
sync push's new notes in one multi-row INSERT (`driver_statements`). With those off, the
same statements through SQLAlchemy Core on the session's connection."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, cast

from flask import current_app
from sqlalchemy import Select, Table
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.compiler import Compiled

from app.extensions import db
from app.models.note import Note
from app.platform import fast
from app.platform.database import (
    PreparedStatement,
    cursor_alone,
    insert_by_driver,
    prepared,
    prepared_statements_on,
    read_engine,
)

NOTES = cast(Table, Note.__table__)


def read_rows(
    statement: Select[Any],
    params: dict[str, Any],
    *,
    reused: bool = False,
    planned_once: bool = False,
) -> list[Sequence[Any]]:
    """The rows of one SELECT, as plain rows (no ORM result layer).

    `reused` says the statement object is built once and run for many requests, its
    numbers bound parameters (anonymous discovery). On PostgreSQL such a statement, when
    the request has no transaction open, takes the short way (`_run_alone`, while
    FAST_PATHS has `driver_cursor`);
    `planned_once` says one plan serves every request of it, so PostgreSQL plans it once
    per connection (`app.platform.database.prepared`). Every other read runs on the request's
    session, inside its transaction, so it sees what the request has flushed.
    """
    # A request that has not touched the session has no transaction (and needs no session).
    in_transaction = db.session.registry.has() and db.session().in_transaction()
    if (
        in_transaction
        or not reused
        or db.engine.dialect.name != "postgresql"
        or not fast.on("driver_cursor")
    ):
        return list(db.session.connection().execute(statement, params).all())
    if planned_once and prepared_statements_on(current_app.config):
        return _run_alone(prepared(statement, "discovery"), params)
    return _run_alone(_compiled(statement, db.engine.dialect), params)


@functools.lru_cache(maxsize=32)
def _compiled(statement: Select[Any], dialect: Dialect) -> Compiled:
    """A reused statement's SQL for one database dialect, compiled once."""
    return statement.compile(dialect=dialect)


def _run_alone(
    statement: Compiled | PreparedStatement, params: dict[str, Any]
) -> list[Sequence[Any]]:
    """One PostgreSQL statement on a pooled connection of its own, in autocommit, through
    the driver. Measured on the discovery benchmark (bench/README.md), each step spares
    time a fast read cannot afford:

    - autocommit: one statement already reads one consistent snapshot; BEGIN and ROLLBACK
      would add two round trips. psycopg2's own switch is client-side, whereas SQLAlchemy's
      AUTOCOMMIT isolation level costs a `SET default_transaction_isolation` on reset.
    - the SQL compiled once: SQLAlchemy's statement cache looks the whole statement up on
      every execution, and its result layer builds a row object per row. psycopg2 already
      returns every column as the API writes it (text ids and times, floats, booleans).
    - a `PreparedStatement` is also planned once per connection (app.platform.database).
    """
    with cursor_alone(read_engine(db.engine)) as (cursor, connection_info):
        if isinstance(statement, PreparedStatement):
            statement.run(cursor, connection_info, params)
        else:
            cursor.execute(statement.string, statement.construct_params(params))
        return list(cursor.fetchall())


def insert_notes(rows: Sequence[Mapping[str, Any]]) -> None:
    """New notes' rows, every row naming the same columns, in one statement per 1,000 rows
    (app.platform.database.insert_by_driver: pending objects flushed first, the table
    noted as written for the sync clock)."""
    insert_by_driver(db.session, NOTES, rows)
