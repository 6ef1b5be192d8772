"""How the engine treats its pooled connections: its settings, SQLite's foreign keys and
index hints, the ping of a connection that sat idle, and the pool's metrics."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Table, event, exc, make_url
from sqlalchemy.engine import Engine
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.pool import Pool, QueuePool

from app.platform import metrics
from app.platform.database.guard import (
    deadline_connection,
)

LAST_CHECKIN = "last_checkin"
POOLERS = ("", "pgbouncer")  # DATABASE_POOLER: none, or PgBouncer in transaction mode


def engine_options(url: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """Engine settings that bound what a lost database can cost a request (PostgreSQL):
    opening a connection gives up after DATABASE_CONNECT_TIMEOUT_SECONDS, a statement
    after DATABASE_STATEMENT_TIMEOUT_SECONDS (on the server), any wait for an answer
    after DATABASE_SOCKET_TIMEOUT_SECONDS (on the client: a silent partition, which the
    server never sees; app.platform.database.guard), waiting for a pooled connection after
    DATABASE_POOL_TIMEOUT_SECONDS. TCP keepalives and its user timeout drop a connection
    whose peer is gone while idle in the pool. Without them a request could wait minutes
    on a host that does not answer, holding its worker. SQLite (a file) has one bound:
    how long a writer waits for another's lock (DATABASE_SQLITE_BUSY_TIMEOUT_SECONDS)."""
    backend = make_url(url).get_backend_name()
    if backend == "sqlite":
        return {"connect_args": {"timeout": float(config["DATABASE_SQLITE_BUSY_TIMEOUT_SECONDS"])}}
    if backend != "postgresql":
        return {}
    pooler = config.get("DATABASE_POOLER") or ""
    if pooler not in POOLERS:
        raise ValueError(f"DATABASE_POOLER={pooler} is not one of: {', '.join(POOLERS)}")
    statement_ms = int(float(config["DATABASE_STATEMENT_TIMEOUT_SECONDS"]) * 1000)
    connect_seconds = float(config["DATABASE_CONNECT_TIMEOUT_SECONDS"])
    socket_seconds = float(config["DATABASE_SOCKET_TIMEOUT_SECONDS"])
    connect_args: dict[str, Any] = {
        "connection_factory": deadline_connection(connect_seconds, socket_seconds),
        "connect_timeout": max(2, math.ceil(connect_seconds)),  # libpq's, when not ours
        "keepalives": 1,
        "keepalives_idle": max(1, math.ceil(socket_seconds / 2)),
        "keepalives_interval": 1,
        "keepalives_count": 3,
        "tcp_user_timeout": math.ceil(socket_seconds * 1000),
    }
    # PgBouncer in transaction mode refuses the `options` startup parameter: there the
    # statement timeout is the database role's own setting (DATABASE_POOLER).
    if not pooler:
        connect_args["options"] = f"-c statement_timeout={statement_ms}"
    return {
        "pool_timeout": float(config["DATABASE_POOL_TIMEOUT_SECONDS"]),
        "connect_args": connect_args,
    }


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


IN_USE = "metrics_in_use"  # on a pool entry's record_info: counted as checked out


def release_pools(engines: Iterable[Engine], *, close: bool) -> None:
    """Empty each engine's pool: closing its connections (the process that opened them), or
    only forgetting them (a forked worker: the sockets are the master's, and closing them
    here would end the master's sessions; app.platform.forking)."""
    for engine in engines:
        pool = engine.pool
        if isinstance(pool, QueuePool) and not (pool.checkedin() or pool.checkedout()):
            continue  # nothing held: no new pool (and no "Pool recreating" line)
        engine.dispose(close=close)


def measure_pool(engine: Engine) -> None:
    """Export the pool's use (app.platform.metrics): connections checked out now, and how
    long each checkout took (waiting for a free connection, opening one, its idle ping).

    Register after the checkout listeners that may refuse a connection (the breaker, the
    idle ping): a refused attempt is retried or fails before this one counts it. The mark
    on the entry makes each checkout count once, and its return (or detachment) once."""

    @event.listens_for(engine, "checkout")
    def count_checkout(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        if not record.record_info.get(IN_USE):
            record.record_info[IN_USE] = True
            metrics.DB_POOL_IN_USE.inc()

    @event.listens_for(engine, "checkin")
    @event.listens_for(engine, "detach")
    def count_return(dbapi_connection: Any, record: Any) -> None:
        if record is not None and record.record_info.pop(IN_USE, False):
            metrics.DB_POOL_IN_USE.dec()

    # The pool has no event before a checkout, so its class becomes a subclass timing
    # `connect()` (public; `recreate()`, on dispose, keeps the class).
    engine.pool.__class__ = _timed_pool_class(type(engine.pool))


_timed_pools: dict[type[Pool], type[Pool]] = {}


def _timed_pool_class(pool_class: type[Pool]) -> type[Pool]:
    if getattr(pool_class, "timed_checkout", False):
        return pool_class
    if pool_class not in _timed_pools:

        def connect(self: Pool) -> Any:
            started = time.perf_counter()
            try:
                return pool_class.connect(self)
            finally:
                metrics.DB_POOL_CHECKOUT_WAIT.observe(time.perf_counter() - started)

        timed = type(
            f"Timed{pool_class.__name__}",
            (pool_class,),
            {"connect": connect, "timed_checkout": True, "__module__": __name__},
        )
        _timed_pools[pool_class] = timed
    return _timed_pools[pool_class]
