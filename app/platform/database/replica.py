"""Anonymous reads from a PostgreSQL read replica (DATABASE_REPLICA_URL).

Only GET and HEAD of REPLICA_ENDPOINTS by a caller not signed in read the replica, and only
while it is within DATABASE_REPLICA_MAX_LAG_SECONDS: measured by WAL positions, never by
the replica's own word (a replica cut from the stream or paused still says it replayed all
it received). Each process samples the primary's `pg_current_wal_lsn()` and counts the
replica as far behind as the newest sample its replay has reached; an unreachable one as
too far. A write sets the `ln_wrote` cookie to the primary's LSN after it: its holder reads
the replica only once the replica has replayed that far.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flask import Flask, Response, current_app, g, has_request_context, request
from flask_sqlalchemy.session import Session as FlaskSession
from sqlalchemy import event, text
from sqlalchemy.engine import Connection, Engine

from app.platform.database.guard import answer_within
from app.platform.dependencies import record_replica_lag

log = logging.getLogger(__name__)

BIND = "replica"
WROTE_COOKIE = "ln_wrote"
# The cookie's value when the primary's position could not be read after the write: like any
# value that is not a WAL position, it keeps its holder on the primary while it lasts.
PRIMARY_ONLY = "primary"
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
PRIMARY_LSN_SQL = text("SELECT pg_current_wal_lsn()::text")
# Where the replica stands: in recovery, what it has replayed; otherwise (promoted, or a
# plain second database) its own position. Then the replay position alone (NULL on a server
# never in recovery) and its WAL receiver (the status needs pg_read_all_stats; the row not).
REPLICA_SQL = text(
    "SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()"
    " ELSE pg_current_wal_lsn() END::text,"
    " pg_last_wal_replay_lsn()::text, pg_is_in_recovery(),"
    " EXISTS (SELECT FROM pg_stat_wal_receiver),"
    " (SELECT status FROM pg_stat_wal_receiver)"
)
REPLAY_SQL = text("SELECT pg_last_wal_replay_lsn()::text")
LSN = re.compile(r"[0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8}")


def parse_lsn(value: str | None) -> int | None:
    """PostgreSQL's text form of a WAL position (`16/B374D848`) as a number; None for
    anything else (a cookie a client made up, an earlier release's `1`)."""
    if value is None or not LSN.fullmatch(value):
        return None
    high, low = value.split("/")
    return int(high, 16) << 32 | int(low, 16)


def format_lsn(lsn: int) -> str:
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


@dataclass(frozen=True)
class LagReading:
    # How far behind the primary the replica is at most, as of `at`: `at` minus the time of
    # the newest primary sample its position has reached (0: the sample just taken). When it
    # reached none (`bounded` False), the oldest sample's age: it is at least that far
    # behind. None: not measured (the replica, or the primary ever since, did not answer).
    seconds: float | None
    bounded: bool
    at: float  # time.monotonic() when the reading began (its primary sample's time)
    primary_lsn: int | None = None  # the primary's newest sample
    replay_lsn: int | None = None  # pg_last_wal_replay_lsn(): None when never in recovery
    receiving: bool | None = None  # a WAL receiver streams; None when not in recovery


class ReplicaState:
    """The process's view of the replica, measured again at most every `every` seconds:
    a short history of (time, primary LSN) samples, and the replica's position."""

    def __init__(
        self, engine: Engine, primary: Callable[[], Engine], config: Mapping[str, Any]
    ) -> None:
        self.engine = engine
        self.reader = autocommit_reader(engine)  # one round trip a reading, no BEGIN
        self.primary = primary
        self.max_lag = float(config["DATABASE_REPLICA_MAX_LAG_SECONDS"])
        self.every = float(config["DATABASE_REPLICA_LAG_CHECK_SECONDS"])
        self.deadline = float(config["DATABASE_CHECK_TIMEOUT_SECONDS"])
        self.reading = LagReading(None, False, float("-inf"))
        self.samples: deque[tuple[float, int]] = deque()
        self.reached: tuple[float, int] | None = None  # the newest sample it had reached
        self.replayed: int | None = None  # the replay position read last (cookie decisions)
        self._lock = threading.Lock()

    def current(self) -> LagReading:
        """The last reading, taken again when older than `every`."""
        reading = self.reading
        if time.monotonic() - reading.at < self.every:
            return reading
        with self._lock:
            if time.monotonic() - self.reading.at >= self.every:
                self.reading = self._measure()
            return self.reading

    def usable(self) -> bool:
        return self.within(self.current())

    def within(self, reading: LagReading) -> bool:
        """Within the bound now: the reading's lag plus its age (what the primary may have
        written since) is at most `max_lag`."""
        if reading.seconds is None or not reading.bounded:
            return False
        return reading.seconds + (time.monotonic() - reading.at) <= self.max_lag

    def has_replayed(self, lsn: int) -> bool:
        """Whether the replica has replayed the WAL up to `lsn`: by the last position read
        when that is far enough, else by reading it now."""
        known = self.replayed
        if known is not None and known >= lsn:
            return True
        try:
            with answer_within(self.deadline), self.reader.connect() as connection:
                self.replayed = parse_lsn(connection.execute(REPLAY_SQL).scalar_one())
        except Exception as error:  # any failure: the primary serves
            log.warning("read replica unreachable, reading from the primary: %s", error)
            return False
        return self.replayed is not None and self.replayed >= lsn

    def primary_lsn(self) -> int | None:
        """The primary's WAL position now (None when it does not answer in time)."""
        try:
            with answer_within(self.deadline), self.primary().connect() as connection:
                return parse_lsn(connection.execute(PRIMARY_LSN_SQL).scalar_one())
        except Exception as error:  # reported by the reading; the caller decides
            log.warning("the primary's WAL position was not read: %s", error)
            return None

    # The primary first, then the replica: a replica that reached the sample had everything
    # committed before the sample's time, so its lag is at most the sample's age.
    def _measure(self) -> LagReading:
        now = time.monotonic()
        primary = self.primary_lsn()
        if primary is not None:
            self.samples.append((now, primary))
        try:
            with answer_within(self.deadline), self.reader.connect() as connection:
                row = connection.execute(REPLICA_SQL).one()
        except Exception as error:  # any failure: the primary serves
            log.warning("read replica unreachable, reading from the primary: %s", error)
            self._forget(now)
            record_replica_lag(None)
            return LagReading(None, False, now, primary)
        position, replay, in_recovery, has_receiver, status = row
        self.replayed = parse_lsn(replay)
        seconds, bounded = self._against_samples(now, parse_lsn(position) or 0)
        record_replica_lag(seconds)
        receiving = (has_receiver and status in {None, "streaming"}) if in_recovery else None
        return LagReading(seconds, bounded, now, primary, self.replayed, receiving)

    def _against_samples(self, now: float, position: int) -> tuple[float | None, bool]:
        """The lag and whether it is an upper bound, for a replica at `position`."""
        kept = [*([self.reached] if self.reached else []), *self.samples]
        reached = [sample for sample in kept if sample[1] <= position]
        self.reached = max(reached) if reached else None
        self._forget(now)
        if self.reached is not None:
            return now - self.reached[0], True
        return (now - min(kept)[0] if kept else None), False

    # Samples older than the bound plus one check cannot put the replica within the bound
    # again; only the newest one it reached is kept beyond that, for an honest lag figure.
    def _forget(self, now: float) -> None:
        horizon = now - self.max_lag - self.every
        while len(self.samples) > 1 and self.samples[0][0] < horizon:
            self.samples.popleft()


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


def autocommit_reader(engine: Engine) -> Engine:
    """The engine with its pool, whose connections run each statement on its own in
    psycopg2's autocommit; every connection given back to the pool is switched out of it.
    Both are psycopg2's client-side flag: no statement is sent (SQLAlchemy's AUTOCOMMIT
    isolation level sends `SET default_transaction_isolation` when it restores the level,
    a round trip on the connection's next request that would cost what was saved)."""
    reader = engine.execution_options()

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

    return reader


# Why this reads the same rows: under READ COMMITTED every statement of a transaction takes its own
# snapshot anyway, and these routes write nothing (a read-only replica serves them); a write flushed
# from one would go to the primary in a transaction of its own, as from the replica. It saves the
# round trips of BEGIN and ROLLBACK.
def read_without_transactions(app: Flask, engine: Engine) -> None:
    """PostgreSQL: the anonymous public reads the primary serves run each statement on
    its own (`autocommit_reader`; the module notes say why that reads the same rows)."""
    if engine.dialect.name != "postgresql":
        return
    app.extensions[NO_TRANSACTION] = autocommit_reader(engine)

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
    # The cookie's outer limit: once it is gone, a replica within the bound has the write.
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
    """Choose the replica per request, and mark writers with the cookie. Called in the
    app context, before `read_without_transactions` (whose reader then samples the primary:
    one round trip, no BEGIN)."""
    primary: Engine = app.extensions["sqlalchemy"].engine
    state = ReplicaState(engine, lambda: app.extensions.get(NO_TRANSACTION, primary), app.config)
    app.extensions["read_replica"] = state
    sticky = int(float(app.config["DATABASE_REPLICA_STICKY_SECONDS"]))

    @app.before_request
    def choose_replica() -> None:
        # Set on every request: an app context shared by several requests (tests,
        # scripts) must not carry one request's choice into the next.
        g.read_replica = anonymous_public_read() and replica_serves(state)

    # Any successful POST, PUT, PATCH or DELETE, anonymous finders included, sets the cookie to
    # the primary's position after it (the route has committed), for at most
    # DATABASE_REPLICA_STICKY_SECONDS.
    @app.after_request
    def mark_writer(response: Response) -> Response:
        if request.method in WRITE_METHODS and response.status_code < 400:
            written = state.primary_lsn()
            response.set_cookie(
                WROTE_COOKIE,
                PRIMARY_ONLY if written is None else format_lsn(written),
                max_age=sticky,
                httponly=True,
                samesite="Lax",
                # Secure as the site's other cookies (TRACKABLE_ACCESS_COOKIE_SECURE).
                secure=bool(current_app.config.get("SESSION_COOKIE_SECURE")),
            )
        return response


def replica_serves(state: ReplicaState) -> bool:
    """Whether the replica may serve this anonymous read: within the bound, and for a
    writer's cookie only once it has replayed the position the cookie names."""
    if not state.usable():
        return False
    wrote = request.cookies.get(WROTE_COOKIE)
    if wrote is None:
        return True
    written = parse_lsn(wrote)  # anything else: the primary, while the cookie lasts
    return written is not None and state.has_replayed(written)


def replica_report(app: Flask) -> dict[str, Any] | None:
    """`/readyz`'s view of the replica: the lag at the last reading (an upper bound; null
    when not measured), whether reads use it now, its replay position against the
    primary's (null when never in recovery) and whether a WAL receiver streams."""
    state: ReplicaState | None = app.extensions.get("read_replica")
    if state is None:
        return None
    reading = state.current()
    return {
        "lagSeconds": None if reading.seconds is None else round(reading.seconds, 3),
        "maxLagSeconds": state.max_lag,
        "inUse": state.within(reading),
        "replayLsn": None if reading.replay_lsn is None else format_lsn(reading.replay_lsn),
        "primaryLsn": None if reading.primary_lsn is None else format_lsn(reading.primary_lsn),
        "receiving": reading.receiving,
    }
