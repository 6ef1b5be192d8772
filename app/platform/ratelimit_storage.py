"""Flask-Limiter's counters in the app's own database (`RATELIMIT_STORAGE_URI=database://`,
the default), so every worker and every instance of the service counts each limit once.

A deployment with Redis may use it instead (`redis://...`). This is a storage of the
`limits` library on its public extension point (`limits.storage.Storage`), for the fixed
windows every limit here uses.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from flask import Flask, Response, current_app
from limits.storage import Storage
from sqlalchemy import Engine, Table, case, delete, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import SQLAlchemyError

from app.error_codes import Code
from app.errors import problem
from app.models.ratelimit import RateLimitCounter

SCHEME = "database"
PURGE_EVERY = 500  # hits of a process between two removals of long-ended windows
PURGE_AFTER_SECONDS = 3600

table: Table = RateLimitCounter.__table__  # type: ignore[assignment]


# A limit's key holds what the client sent (an email address of any length); the row needs only to
# tell keys apart.
def stored_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


class DatabaseStorage(Storage):
    """Fixed-window counters in `rate_limit_counters`, one row per limit and client."""

    STORAGE_SCHEME = [SCHEME]  # noqa: RUF012 - the limits library's registry reads it

    def __init__(self, uri: str = f"{SCHEME}://", wrap_exceptions: bool = False, **options: Any):
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self._hits_since_purge = 0

    @property
    def base_exceptions(self) -> type[Exception]:
        return SQLAlchemyError

    @staticmethod
    def _engine() -> Engine:
        return current_app.extensions["sqlalchemy"].engine  # type: ignore[no-any-return]

    # One statement counts and reads the count at once (an upsert), on a pooled connection of its
    # own that commits at once: a request that fails afterwards still counts, and its rollback
    # undoes nothing.
    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        """Count `amount` hits in the key's window (a new one when it has ended) and
        return the window's count, in one statement."""
        now = time.time()
        engine = self._engine()
        dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
        statement = dialect.insert(table).values(
            key=stored_key(key), hits=amount, window_ends_epoch=now + expiry
        )
        ended = table.c.window_ends_epoch <= now
        statement = statement.on_conflict_do_update(
            index_elements=[table.c.key],
            set_={
                "hits": case((ended, amount), else_=table.c.hits + amount),
                "window_ends_epoch": case((ended, now + expiry), else_=table.c.window_ends_epoch),
            },
        ).returning(table.c.hits)
        with engine.begin() as connection:
            hits = int(connection.execute(statement).scalar_one())
            self._hits_since_purge += 1
            if self._hits_since_purge >= PURGE_EVERY:
                self._hits_since_purge = 0
                connection.execute(
                    delete(table).where(table.c.window_ends_epoch < now - PURGE_AFTER_SECONDS)
                )
        return hits

    def _window(self, key: str) -> tuple[int, float] | None:
        query = select(table.c.hits, table.c.window_ends_epoch).where(
            table.c.key == stored_key(key), table.c.window_ends_epoch > time.time()
        )
        with self._engine().connect() as connection:
            row = connection.execute(query).first()
        return (int(row.hits), float(row.window_ends_epoch)) if row else None

    def get(self, key: str) -> int:
        window = self._window(key)
        return window[0] if window else 0

    def get_expiry(self, key: str) -> float:
        window = self._window(key)
        return window[1] if window else time.time()

    def check(self) -> bool:
        try:
            with self._engine().connect() as connection:
                connection.execute(select(func.count()).select_from(table).limit(1))
        except SQLAlchemyError:
            return False
        return True

    def reset(self) -> int | None:
        with self._engine().begin() as connection:
            return connection.execute(delete(table)).rowcount

    def clear(self, key: str) -> None:
        with self._engine().begin() as connection:
            connection.execute(delete(table).where(table.c.key == stored_key(key)))


__all__ = ["SCHEME", "DatabaseStorage"]


# --- Redis away --------------------------------------------------------------------------

STORE_RETRY_AFTER_SECONDS = 5


def _redis_outage_errors() -> tuple[type[Exception], ...]:
    try:
        from redis import exceptions
    except ImportError:  # the `redis` extra is not installed: no Redis to lose
        return ()
    return (exceptions.ConnectionError, exceptions.TimeoutError)


def limits_unavailable(error: Exception | None = None) -> Response:
    """503 with Retry-After: a limited request cannot be counted, so it is not served
    (serving it uncounted would lift the sign-in and code-guessing limits while Redis is
    away). Nothing was done; a ticket would only report the outage again."""
    current_app.logger.warning("rate limits' store unreachable: %s", error or "no answer")
    return problem(
        503,
        "The rate limits cannot be counted right now; nothing was done. Try again shortly.",
        code=Code.RATE_LIMITS_UNAVAILABLE,
        headers={"Retry-After": str(STORE_RETRY_AFTER_SECONDS)},
    )


def register_store_outage_answer(app: Flask) -> None:
    """A Redis that holds the limits and cannot be reached is a 503, not a 500. Only with
    a Redis store: importing redis's client brings tracing's library with it."""
    if not str(app.config.get("RATELIMIT_STORAGE_URI", "")).startswith("redis"):
        return
    errors = _redis_outage_errors()
    for error in errors:
        app.register_error_handler(error, limits_unavailable)

    if not app.config.get("RATELIMIT_HEADERS_ENABLED"):
        return

    # Flask-Limiter reads the window for its headers after the view, where Flask hands an
    # error to none of the handlers above: a 500. Registered after the limiter, this hook
    # runs before its headers: it reads the window for them or, Redis lost, leaves them out.
    @app.after_request
    def limit_headers_or_none(response: Response) -> Response:
        """Redis lost since the request was counted: the request is done, so its answer
        is sent without the rate-limit headers rather than replaced by an error."""
        for limiter in app.extensions.get("limiter", ()):
            counted = limiter.current_limit
            if counted is None:
                continue
            try:
                _ = counted.window  # kept on the limit: its headers read no more
            except errors as error:
                current_app.logger.warning("rate limits' store lost after the count: %s", error)
                # `context` is public by name, private by its docstring: the pinned
                # Flask-Limiter (requirements/) is the one this was tested with.
                limiter.context.view_rate_limit = None
        return response


def store_answers(storage: Any) -> bool:
    """Whether the limits' store answers (`limits`' public `check`); the database store is
    the database's, which readiness checks on its own."""
    if isinstance(storage, DatabaseStorage):
        return True
    try:
        return bool(storage.check())
    except Exception:  # any error of the store's client means "not answering"
        return False
