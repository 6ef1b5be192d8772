"""How the engine treats its pooled connections."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import event, exc
from sqlalchemy.engine import Engine

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
