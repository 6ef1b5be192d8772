"""Anonymous reads from a PostgreSQL read replica (DATABASE_REPLICA_URL).

Only the routes in REPLICA_ENDPOINTS, only GET and HEAD, only for a caller who is not signed
in, and only while the replica is at most DATABASE_REPLICA_MAX_LAG_SECONDS behind, read from
the replica; everything else uses the primary. A caller who has just written gets the
`ln_wrote` cookie for longer than the lag allowed and reads the primary meanwhile: nobody is
served a replica that lacks their own write. Others may see someone else's change up to the
lag bound late. A replica that cannot be reached counts as too far behind; `/readyz`
reports the last lag measured.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flask import Flask, Response, current_app, g, has_request_context, request
from flask_sqlalchemy.session import Session as FlaskSession
from sqlalchemy import event, text
from sqlalchemy.engine import Connection, Engine

from app.platform.database.guard import answer_within

log = logging.getLogger(__name__)

BIND = "replica"
WROTE_COOKIE = "ln_wrote"
READ_METHODS = frozenset({"GET", "HEAD"})
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Public discovery and the public pages: what anonymous visitors read most.
REPLICA_ENDPOINTS = frozenset(
    {
        "notes.list_public_notes_in_bounds",
        "notes.list_public_notes_nearby",
        "notes.search_public_notes",
        "notes.get_public_note",
        "notes.list_note_comments",
        "notes.list_note_trackables",
        "notes.list_profile_notes_nearby",
        "notes.list_team_notes_nearby",
        "trackables.list_public_trackables",
        "pages.home",
        "pages.public_list",
        "pages.public_page",
        "pages.trackable_feed",
        "pages.group_feed",
    }
)
LAG_SQL = text(
    "SELECT CASE WHEN NOT pg_is_in_recovery() THEN 0.0"
    " WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0.0"
    " ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 1e9)"
    " END"
)


@dataclass
class LagReading:
    seconds: float | None  # None: the replica could not be reached
    at: float  # time.monotonic() of the reading


class ReplicaState:
    """The process's last lag reading, refreshed at most every `every` seconds."""

    def __init__(self, engine: Engine, config: Mapping[str, Any]) -> None:
        self.engine = engine
        self.max_lag = float(config["DATABASE_REPLICA_MAX_LAG_SECONDS"])
        self.every = float(config["DATABASE_REPLICA_LAG_CHECK_SECONDS"])
        self.deadline = float(config["DATABASE_CHECK_TIMEOUT_SECONDS"])
        self.reading = LagReading(None, float("-inf"))
        self._lock = threading.Lock()

    def lag(self) -> float | None:
        """The replica's lag in seconds (None when unreachable), measured again when the
        last reading is older than `every`."""
        reading = self.reading
        if time.monotonic() - reading.at < self.every:
            return reading.seconds
        with self._lock:
            if time.monotonic() - self.reading.at >= self.every:
                self.reading = LagReading(self._measure(), time.monotonic())
            return self.reading.seconds

    def usable(self) -> bool:
        lag = self.lag()
        return lag is not None and lag <= self.max_lag

    # Measured by each process at most every DATABASE_REPLICA_LAG_CHECK_SECONDS: zero when the
    # replica has replayed all it received, otherwise the age of the last transaction it replayed.
    def _measure(self) -> float | None:
        try:
            with answer_within(self.deadline), self.engine.connect() as connection:
                return float(connection.execute(LAG_SQL).scalar_one())
        except Exception as error:  # any failure: the primary serves
            log.warning("read replica unreachable, reading from the primary: %s", error)
            return None


class RoutingSession(FlaskSession):
    """The request session: on the replica while the request reads from it, or on the
    primary without a transaction (`read_without_transactions`), except while flushing
    (a write goes to the primary, in a transaction, whatever route it came from)."""

    def get_bind(self, mapper: Any = None, clause: Any = None, bind: Any = None, **kwargs: Any):  # type: ignore[no-untyped-def]
        if bind is None and not self._flushing:
            if reading_from_replica():
                return self._db.engines[BIND]
            if reading_without_transaction():
                reader: Engine = current_app.extensions[NO_TRANSACTION]
                return reader
        return super().get_bind(mapper=mapper, clause=clause, bind=bind, **kwargs)


def reading_from_replica() -> bool:
    return has_request_context() and bool(g.get("read_replica"))


def reading_without_transaction() -> bool:
    return has_request_context() and bool(g.get(NO_TRANSACTION))


def anonymous_public_read() -> bool:
    """A GET or HEAD of a public read (REPLICA_ENDPOINTS) by a caller not signed in."""
    return (
        request.method in READ_METHODS
        and request.endpoint in REPLICA_ENDPOINTS
        and "Authorization" not in request.headers
        and not any(check() for check in current_app.extensions.get(SIGNED_IN_CHECKS, ()))
    )


NO_TRANSACTION = "read_without_transaction"


# Why this reads the same rows: under READ COMMITTED every statement of a transaction takes its own
# snapshot anyway, and these routes write nothing (a read-only replica serves them); a write flushed
# from one would go to the primary in a transaction of its own, as from the replica. It saves the
# round trips of BEGIN and ROLLBACK.
def read_without_transactions(app: Flask, engine: Engine) -> None:
    """PostgreSQL: the anonymous public reads the primary serves run each statement on
    its own, in psycopg2's autocommit (the module notes say why that reads the same rows).

    The reader is the engine with its pool; a connection it takes is switched to
    autocommit, and every connection given back to the pool is switched out of it. Both
    are psycopg2's client-side flag: no statement is sent (SQLAlchemy's AUTOCOMMIT
    isolation level sends `SET default_transaction_isolation` when it restores the level,
    a round trip on the connection's next request that would cost what was saved)."""
    if engine.dialect.name != "postgresql":
        return
    reader = engine.execution_options()
    app.extensions[NO_TRANSACTION] = reader

    @event.listens_for(reader, "engine_connect")
    def without_transaction(connection: Connection) -> None:
        driver: Any = connection.connection.dbapi_connection
        if driver is not None and not driver.closed:  # a closed one fails at its statement
            driver.autocommit = True

    @event.listens_for(engine.pool, "checkin")
    def back_in_transactions(dbapi_connection: Any, record: Any) -> None:
        # None: a connection the pool invalidated (its reset failed: the server dropped
        # it); psycopg2 refuses the switch on a closed one.
        if dbapi_connection is not None and not dbapi_connection.closed:
            dbapi_connection.autocommit = False

    @app.before_request
    def read_without_transaction() -> None:
        # Set on every request: an app context shared by several requests (tests,
        # scripts) must not carry one request's choice into the next.
        setattr(g, NO_TRANSACTION, not reading_from_replica() and anonymous_public_read())


def read_engine(primary: Engine) -> Engine:
    """The engine a read outside the session (discovery's short way) should use."""
    if reading_from_replica():
        state: ReplicaState = current_app.extensions["read_replica"]
        return state.engine
    return primary


SIGNED_IN_CHECKS = "read_replica_signed_in_checks"


def primary_when(app: Flask, check: Callable[[], bool]) -> None:
    """Another sign that the caller is signed in (the website's session), registered by
    the layer that knows it."""
    app.extensions.setdefault(SIGNED_IN_CHECKS, []).append(check)


def replica_options(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """SQLALCHEMY_BINDS' entry for the replica, or None when there is none."""
    url = str(config.get("DATABASE_REPLICA_URL") or "")
    if not url:
        return None
    if not url.startswith(("postgresql", "postgres")):
        raise ValueError("DATABASE_REPLICA_URL must name a PostgreSQL server")
    if float(config["DATABASE_REPLICA_STICKY_SECONDS"]) <= float(
        config["DATABASE_REPLICA_MAX_LAG_SECONDS"]
    ):
        raise ValueError(
            "DATABASE_REPLICA_STICKY_SECONDS must be longer than "
            "DATABASE_REPLICA_MAX_LAG_SECONDS, or a writer could read the replica before it "
            "has their write"
        )
    return {"url": url}


def route_reads(app: Flask, engine: Engine) -> None:
    """Choose the replica per request, and mark writers with the cookie."""
    state = ReplicaState(engine, app.config)
    app.extensions["read_replica"] = state
    sticky = int(float(app.config["DATABASE_REPLICA_STICKY_SECONDS"]))

    @app.before_request
    def choose_replica() -> None:
        if WROTE_COOKIE not in request.cookies and anonymous_public_read() and state.usable():
            g.read_replica = True

    # Any successful POST, PUT, PATCH or DELETE, anonymous finders included, sets the cookie for
    # DATABASE_REPLICA_STICKY_SECONDS.
    @app.after_request
    def mark_writer(response: Response) -> Response:
        if request.method in WRITE_METHODS and response.status_code < 400:
            response.set_cookie(
                WROTE_COOKIE,
                "1",
                max_age=sticky,
                httponly=True,
                samesite="Lax",
                # Secure as the site's other cookies (TRACKABLE_ACCESS_COOKIE_SECURE).
                secure=bool(current_app.config.get("SESSION_COOKIE_SECURE")),
            )
        return response


def replica_report(app: Flask) -> dict[str, Any] | None:
    """`/readyz`'s view of the replica: the last lag measured and whether reads use it."""
    state: ReplicaState | None = app.extensions.get("read_replica")
    if state is None:
        return None
    lag = state.lag()
    return {
        "lagSeconds": None if lag is None else round(lag, 3),
        "maxLagSeconds": state.max_lag,
        "inUse": lag is not None and lag <= state.max_lag,
    }
