"""What a lost PostgreSQL server (refused, reset or silent) may cost: a deadline on every
wait for it, and a per-process breaker that fails the requests after a failure at once.

libpq waits for an answer without limit, and a silent partition is not noticed by the
client's TCP while its bytes are acknowledged (a proxy or a half-open path); the server's
statement timeout cannot help, since the server never sees the statement. So psycopg2 waits
through `wait_with_deadline` (its wait callback), and gives up after the configured connect
or answer timeout (less inside `answer_within`); raw pooled reads wait the same way. The
breaker only makes failing faster; it shares nothing between processes.
"""

from __future__ import annotations

import logging
import select
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg2
import psycopg2.extensions
from sqlalchemy import event, exc
from sqlalchemy.engine import Engine

log = logging.getLogger(__name__)

_local = threading.local()


class DeadlineConnection(psycopg2.extensions.connection):
    """A psycopg2 connection that carries its deadlines (set on the engine's own
    subclass, `deadline_connection`); other connections of the process wait unbounded."""

    connect_seconds: float | None = None
    answer_seconds: float | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.connecting = True  # psycopg2 connects (and waits) inside __init__
        super().__init__(*args, **kwargs)
        self.connecting = False


def deadline_connection(connect_seconds: float, answer_seconds: float) -> type:
    """The connection class of one engine (psycopg2's `connection_factory`)."""
    limits = {"connect_seconds": connect_seconds, "answer_seconds": answer_seconds}
    return type("EngineConnection", (DeadlineConnection,), limits)


@contextmanager
def answer_within(seconds: float) -> Iterator[None]:
    """Every wait of this thread for the database, connecting included, ends after at
    most `seconds` inside the block (the readiness check, the breaker's probe)."""
    before = getattr(_local, "seconds", None)
    _local.seconds = seconds if before is None else min(before, seconds)
    try:
        yield
    finally:
        _local.seconds = before


def _limit(connection: Any) -> float | None:
    connecting = getattr(connection, "connecting", False)
    seconds = getattr(connection, "connect_seconds" if connecting else "answer_seconds", None)
    override = getattr(_local, "seconds", None)
    if override is not None and isinstance(connection, DeadlineConnection):
        seconds = override if seconds is None else min(seconds, override)
    return seconds


# A connection of the app's engine gives up after DATABASE_CONNECT_TIMEOUT_SECONDS while connecting
# and DATABASE_SOCKET_TIMEOUT_SECONDS for any answer, and psycopg2 closes it. Raw pooled reads
# (cursor_alone, prepared statements) wait the same way.
def wait_with_deadline(connection: Any) -> None:
    """psycopg2's wait callback: poll the connection until its operation is done, giving
    up (OperationalError; psycopg2 then closes the connection) when the server has not
    answered within the connection's limit."""
    limit = _limit(connection)
    deadline = None if limit is None else time.monotonic() + limit
    while True:
        state = connection.poll()
        if state == psycopg2.extensions.POLL_OK:
            return
        if state == psycopg2.extensions.POLL_READ:
            events = select.POLLIN
        elif state == psycopg2.extensions.POLL_WRITE:
            events = select.POLLOUT
        else:  # pragma: no cover - psycopg2 returns only the three above
            raise psycopg2.OperationalError(f"unexpected poll state {state}")
        poller = select.poll()
        poller.register(connection.fileno(), events | select.POLLERR | select.POLLHUP)
        if deadline is None:
            poller.poll()
            continue
        remaining = deadline - time.monotonic()
        ready = remaining > 0 and poller.poll(remaining * 1000)
        if not ready and time.monotonic() >= deadline:
            raise psycopg2.OperationalError(
                f"the database did not answer within {limit:g} s (client-side deadline)"
            )


def use_deadlines() -> None:
    """Route every psycopg2 wait of this process through `wait_with_deadline` (global in
    psycopg2; connections without deadlines wait as before). COPY is unavailable in this
    mode; the service uses none (bench seeding runs before any app is made)."""
    if psycopg2.extensions.get_wait_callback() is not wait_with_deadline:
        psycopg2.extensions.set_wait_callback(wait_with_deadline)


# --- the breaker ---------------------------------------------------------------------------


class DatabaseUnavailable(Exception):
    """Refused without trying: the breaker is open and another request is probing."""


def is_unreachable(error: BaseException) -> bool:
    """Whether a database error means the server could not be reached or the connection
    was lost (rather than a slow statement, a full pool or a conflict): these open the
    breaker. PostgreSQL's own error codes mean it answered, except its connection and
    shutdown classes (08, 57P)."""
    if isinstance(error, exc.DBAPIError) and error.connection_invalidated:
        return True
    original = error.orig if isinstance(error, exc.DBAPIError) else error
    if not isinstance(original, psycopg2.OperationalError | psycopg2.InterfaceError):
        return False
    code = getattr(original, "pgcode", None) or ""
    return not code or code.startswith(("08", "57P"))


class Breaker:
    """Per process: closed until a request finds the database unreachable; then open,
    and a request that needs a connection either probes (one at a time, at most every
    `cooldown` seconds, the probe bounded by `probe_seconds`) or is refused at once
    (DatabaseUnavailable, a 503). The first probe that gets an answer closes it.
    Nothing is shared between processes: each finds out for itself, once."""

    def __init__(self, cooldown: float, probe_seconds: float) -> None:
        self.cooldown = cooldown
        self.probe_seconds = probe_seconds
        self._lock = threading.Lock()
        self.opened: float | None = None  # monotonic time of the failure that opened it
        self._probe_after = 0.0
        self._prober: int | None = None
        self._probe_ends = 0.0

    @property
    def is_open(self) -> bool:
        return self.opened is not None

    def admit(self) -> bool:
        """True when the calling thread is to probe, False when the breaker is closed;
        raises DatabaseUnavailable when another thread probes or the cooldown runs."""
        if self.opened is None:
            return False
        me, now = threading.get_ident(), time.monotonic()
        with self._lock:
            if self.opened is None:
                return False
            if self._prober == me:
                return True
            lease_over = self._prober is None or now > self._probe_ends
            if lease_over and now >= self._probe_after:
                # The lease outlives the probe's own deadlines: a lost prober frees it.
                self._prober, self._probe_ends = me, now + 2 * self.probe_seconds + 1
                return True
        raise DatabaseUnavailable

    def failed(self) -> None:
        """The database could not be reached: open (or stay open), next probe after the
        cooldown."""
        now = time.monotonic()
        with self._lock:
            if self.opened is None:
                self.opened = now
                log.warning("database unreachable: requests fail at once until a probe answers")
            if self._prober in (None, threading.get_ident()):
                self._prober = None
            self._probe_after = now + self.cooldown

    def succeeded(self) -> None:
        """A probe got an answer: close."""
        if self.opened is None:
            return
        with self._lock:
            if self.opened is None:
                return
            log.warning("database reachable again after %.1f s", time.monotonic() - self.opened)
            self.opened, self._prober = None, None


def guard_engine(engine: Engine, breaker: Breaker) -> None:
    """Put `breaker` in front of the engine's pool (PostgreSQL): while it is open a
    connection is neither opened nor handed out except to the probing request, which
    first checks it with a round trip within the probe's deadline. Register before
    `ping_when_idle`, so a refused checkout pings nothing."""
    use_deadlines()

    @event.listens_for(engine, "do_connect")
    def connect_unless_open(dialect: Any, record: Any, cargs: Any, cparams: Any) -> Any:
        if not breaker.admit():
            return None  # the dialect connects as usual
        with answer_within(breaker.probe_seconds):
            return dialect.loaded_dbapi.connect(*cargs, **cparams)

    @event.listens_for(engine, "checkout")
    def probe_if_open(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        if not breaker.admit():
            return
        try:
            with answer_within(breaker.probe_seconds):
                engine.dialect.do_ping(dbapi_connection)
        except Exception as error:
            breaker.failed()
            raise DatabaseUnavailable from error
        breaker.succeeded()
