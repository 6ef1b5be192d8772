"""How the engine treats its pooled connections, and the lock of a read-then-write."""

from __future__ import annotations

import hashlib
import time
from typing import Any

from sqlalchemy import Table, event, exc, text
from sqlalchemy.engine import Engine
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import Session, scoped_session

LAST_CHECKIN = "last_checkin"


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


@compiles(Table, "sqlite")
def _sqlite_table_with_hint(element: Table, compiler: Any, **kw: Any) -> str:
    """SQLite's `INDEXED BY`: SQLAlchemy keeps `Select.with_hint(table, text, "sqlite")`
    but its SQLite compiler writes nothing for it, so a table with a hint is written here
    as `table <hint>` (e.g. `INDEXED BY ix_name`, which SQLite refuses to run when that
    index cannot serve the query, rather than silently choosing another)."""
    hints = kw.pop("fromhints", None) or {}
    rendered = compiler.visit_table(element, **kw)
    hint = hints.get(element)
    return f"{rendered} {hint}" if hint and kw.get("asfrom") else str(rendered)


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
