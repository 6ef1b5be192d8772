"""How the engine treats its pooled connections, what a request answers while the
database is away, and the lock of a read-then-write."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from typing import Any

from flask import Flask, Response
from sqlalchemy import event, exc, make_url, text
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, scoped_session

from app.errors import problem

LAST_CHECKIN = "last_checkin"
RETRY_AFTER_SECONDS = 5


def engine_options(url: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """Engine settings that bound what a lost database can cost a request (PostgreSQL):
    opening a connection gives up after DATABASE_CONNECT_TIMEOUT_SECONDS, a statement
    after DATABASE_STATEMENT_TIMEOUT_SECONDS, waiting for a pooled connection after
    DATABASE_POOL_TIMEOUT_SECONDS. Without them a request could wait minutes on a host
    that does not answer, holding its worker. SQLite (a file) needs none."""
    if make_url(url).get_backend_name() != "postgresql":
        return {}
    statement_ms = int(float(config["DATABASE_STATEMENT_TIMEOUT_SECONDS"]) * 1000)
    return {
        "pool_timeout": float(config["DATABASE_POOL_TIMEOUT_SECONDS"]),
        "connect_args": {
            "connect_timeout": int(config["DATABASE_CONNECT_TIMEOUT_SECONDS"]),
            "options": f"-c statement_timeout={statement_ms}",
        },
    }


def database_unavailable(error: Exception) -> Response:
    """503 problem details, with Retry-After, for a request the database could not serve:
    it cannot be reached, dropped the connection, ran out of pooled connections or hit
    the statement timeout. Nothing was written (the request's transaction is rolled back
    by the server or by teardown), so the client may simply try again."""
    return problem(
        503,
        "Service unavailable",
        "The database is not reachable right now. Try again shortly.",
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


def is_outage(error: BaseException) -> bool:
    """Whether a database error means the server could not serve the request (rather than
    a fault of the request or of our SQL): no pooled connection in time, a dropped or
    refused connection, or one of the server driver's operational errors (unreachable,
    statement timeout, shutting down). SQLite's operational errors ("no such table",
    a locked file past its timeout) stay unexpected failures."""
    if isinstance(error, exc.TimeoutError):
        return True
    if isinstance(error, exc.DBAPIError) and error.connection_invalidated:
        return True
    original = error.orig if isinstance(error, exc.DBAPIError) else error
    try:
        import psycopg2
    except ImportError:  # pragma: no cover - psycopg2 is a dependency
        return False
    return isinstance(original, psycopg2.OperationalError | psycopg2.InterfaceError)


def register_outage_answers(app: Flask, unexpected: Callable[[Exception], Response]) -> None:
    """Database outages are 503 (above), not 500s with a ticket: a ticket would be stored
    in the database that is away, and the client should retry rather than report. Other
    database errors go to `unexpected` (the 500 with a tracked ticket)."""

    def answer(error: Exception) -> Response:
        return database_unavailable(error) if is_outage(error) else unexpected(error)

    errors: list[type[Exception]] = [exc.DBAPIError, exc.TimeoutError]
    try:  # discovery reads through the driver itself: its errors come unwrapped
        import psycopg2
    except ImportError:  # pragma: no cover - psycopg2 is a dependency
        pass
    else:
        errors.append(psycopg2.Error)
    for error in errors:
        app.register_error_handler(error, answer)


def enforce_foreign_keys(engine: Engine) -> None:
    """SQLite checks foreign keys (and runs their ON DELETE actions) only on connections
    that ask for it: every connection of the app's engine asks, so SQLite keeps the same
    references PostgreSQL keeps. (Migrations switch it off while Alembic's batch mode
    rebuilds tables, then check the keys: migrations/env.py.)"""
    if engine.dialect.name != "sqlite":
        return

    @event.listens_for(engine, "connect")
    def foreign_keys_on(dbapi_connection: Any, record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()


def ping_when_idle(engine: Engine, idle_seconds: float) -> None:
    """Check a pooled connection with a round trip before use, but only when it has sat
    idle in the pool for more than `idle_seconds`.

    A connection used moments ago is alive; pinging it on every checkout (SQLAlchemy's
    `pool_pre_ping`) costs a round trip per request, a large part of a fast read. A server
    that restarted while the pool was idle is caught by the ping; one that restarts between
    two requests fails the next request once, after which the broken connection is dropped
    (SQLAlchemy invalidates the whole pool; discovery's driver-level read, its own one).
    A failed ping raises `DisconnectionError`, so the pool connects afresh and retries.
    """
    if engine.dialect.name == "sqlite":  # a file, no server that can go away
        return

    @event.listens_for(engine, "checkin")
    def remember_checkin(dbapi_connection: Any, record: Any) -> None:
        record.info[LAST_CHECKIN] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def ping_if_idle(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        last = record.info.get(LAST_CHECKIN)
        if last is None or time.monotonic() - last <= idle_seconds:
            return  # just connected, or used moments ago
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as error:
            raise exc.DisconnectionError("the pooled connection did not answer") from error


def lock_for_write(session: Session | scoped_session[Any], key: str) -> None:
    """Serialise the use cases that read to decide a write under `key`, in this transaction.

    Call it before the reads that decide (is there a "Notes" root yet, would this move make
    a cycle, is this membership still pending); the lock is held until commit or rollback,
    so a concurrent request with the same key waits, then reads what the first one wrote and
    answers as a repeated request would.

    - PostgreSQL: a transaction-level advisory lock on a 64-bit hash of `key`, so only
      requests about the same thing wait for each other.
    - SQLite: `BEGIN IMMEDIATE` takes the database's write lock now, before the reads (its
      driver would begin the transaction only at the first write, after the reads have
      decided). A transaction that has already written holds that lock: nothing to do.

    Then pending changes are flushed and the session's loaded rows expired, so every row is
    read again under the lock: a row a concurrent request deleted meanwhile is gone (read
    ids before the call, and load rows again after it).
    """
    connection = session.connection()
    if connection.dialect.name == "sqlite":
        driver_connection = connection.connection.driver_connection
        if driver_connection is not None and not driver_connection.in_transaction:
            connection.exec_driver_sql("BEGIN IMMEDIATE")
    else:
        digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
        lock_id = int.from_bytes(digest, "big", signed=True)
        connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": lock_id})
    session.flush()
    session.expire_all()
