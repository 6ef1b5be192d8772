"""What a request answers while the database is away or collided with another: 503 with
Retry-After (not a 500 with a ticket), the breaker in front of the pool, a deadlock run
again once."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, overload

import psycopg2.errors
from flask import Flask, Response, current_app
from sqlalchemy import exc, text
from sqlalchemy.engine import Engine
from sqlalchemy.orm import (
    Session,
    scoped_session,
)

from app.error_codes import Code
from app.errors import problem
from app.platform.database.guard import (
    Breaker,
    DatabaseUnavailable,
    answer_within,
    guard_engine,
    is_unreachable,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

RETRY_AFTER_SECONDS = 5
# PostgreSQL's deadlock and serialization failure: the server answered, and ended this
# transaction so that a concurrent one could go on; running it again may well succeed.
CONFLICT_CODES = frozenset({"40P01", "40001"})


def guard_against_outages(app: Flask, engine: Engine) -> None:
    """PostgreSQL: the process's breaker (`app.extensions["database_breaker"]`) in front
    of the engine's pool, and the client-side deadlines (app.platform.database.guard)."""
    if engine.dialect.name != "postgresql":
        return
    breaker = Breaker(
        cooldown=float(app.config["DATABASE_BREAKER_COOLDOWN_SECONDS"]),
        probe_seconds=float(app.config["DATABASE_CHECK_TIMEOUT_SECONDS"]),
    )
    app.extensions["database_breaker"] = breaker
    guard_engine(engine, breaker)


def note_failure(error: BaseException) -> None:
    """Open the breaker when `error` says the database could not be reached."""
    breaker = current_app.extensions.get("database_breaker")
    if breaker is not None and is_unreachable(error):
        breaker.failed()


@overload
def check_database(session: Session | scoped_session[Any], config: Mapping[str, Any]) -> None: ...
@overload
def check_database(
    session: Session | scoped_session[Any], config: Mapping[str, Any], read: Callable[[], T]
) -> T: ...
def check_database(
    session: Session | scoped_session[Any],
    config: Mapping[str, Any],
    read: Callable[[], T] | None = None,
) -> T | None:
    """The readiness check: one round trip within DATABASE_CHECK_TIMEOUT_SECONDS (a
    connection opened for it too), through the breaker like any request; then `read`
    (what the probe reports besides), each of its round trips under the same deadline, so
    a database lost between the two cannot hold the probe for a socket timeout. The read
    ends here too, under that deadline: left to the request's teardown, giving the
    connection back (its ROLLBACK) would wait the socket timeout on a database lost since."""
    with answer_within(float(config.get("DATABASE_CHECK_TIMEOUT_SECONDS", 0.5))):
        try:
            session.execute(text("SELECT 1"))
            return read() if read is not None else None
        finally:
            session.rollback()


def database_unavailable(error: Exception) -> Response:
    """503 problem details, with Retry-After, for a request the database could not serve:
    it cannot be reached (or the breaker says so: app.platform.database.guard), dropped the
    connection, did not answer in time, ran out of pooled connections or hit the
    statement timeout. Nothing was written (the request's transaction is rolled back
    by the server or by teardown), so the client may simply try again."""
    return problem(
        503,
        "The database is not reachable right now. Try again shortly.",
        code=Code.DATABASE_UNAVAILABLE,
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


def is_conflict(error: BaseException) -> bool:
    """Whether PostgreSQL ended the transaction to let a concurrent one go on (a deadlock,
    a serialization failure): the request may be run again."""
    original = error.orig if isinstance(error, exc.DBAPIError) else error
    return getattr(original, "pgcode", None) in CONFLICT_CODES or isinstance(
        original, psycopg2.errors.DeadlockDetected | psycopg2.errors.SerializationFailure
    )


def database_conflict(error: Exception) -> Response:
    """503 problem details, with Retry-After, for a request that met a concurrent one in
    the database twice (a deadlock, run again once: `ServiceApp.dispatch_request`). The
    database was reachable; nothing was written."""
    log.warning("database conflict, not retried again: %s", error)
    return problem(
        503,
        "The request collided with a concurrent one in the database (a deadlock) and was "
        "not carried out. Try again.",
        code=Code.DATABASE_DEADLOCK,
        headers={"Retry-After": "1"},
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
    if original is not None and is_conflict(original):  # it answered: a conflict
        return False
    return isinstance(original, psycopg2.OperationalError | psycopg2.InterfaceError)


def register_outage_answers(app: Flask, unexpected: Callable[[Exception], Response]) -> None:
    """Database outages are 503 (above), not 500s with a ticket: a ticket would be stored
    in the database that is away, and the client should retry rather than report. Other
    database errors go to `unexpected` (the 500 with a tracked ticket)."""

    def answer(error: Exception) -> Response:
        if is_conflict(error):
            return database_conflict(error)
        if not is_outage(error):
            return unexpected(error)
        note_failure(error)
        return database_unavailable(error)

    app.register_error_handler(DatabaseUnavailable, database_unavailable)
    errors: list[type[Exception]] = [exc.DBAPIError, exc.TimeoutError]
    try:  # discovery reads through the driver itself: its errors come unwrapped
        import psycopg2
    except ImportError:  # pragma: no cover - psycopg2 is a dependency
        pass
    else:
        errors.append(psycopg2.Error)
    for error in errors:
        app.register_error_handler(error, answer)
