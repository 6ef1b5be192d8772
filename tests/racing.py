"""The race tests' harness: requests run at the same moment in threads (`run_together`),
each stopped just after the read that decides its write (`stop_after`) at a barrier that
does not wait out its timeout when the race is already decided (`LockBarrier`, the
`barrier` fixture). Without the lock under test the racers all get there and go on
together (and the test fails); with it, the missing racers wait for the lock one of the
others holds, and the barrier breaks as soon as it sees them waiting, as its timeout would
have broken it later: on PostgreSQL, the test database's other sessions waiting on a lock
(`pg_stat_activity`, advisory locks included); on SQLite, racers inside one statement for
BLOCKED_SECONDS (`BEGIN IMMEDIATE`, or a write, waiting for the database's write lock).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Engine, make_url

from app.auth import issue_access_token
from app.extensions import db
from app.models.user import User

# Well above any statement of a test database (milliseconds), well below the timeout.
BLOCKED_SECONDS = 0.3
POLL_SECONDS = 0.02
# How long the thread that holds the lock waits for the others at the barrier before it
# goes on; it goes on at once when they are seen waiting for the lock (see the module).
BARRIER_SECONDS = 5.0
# Twenty racers, more than a pool's connections (15): those waiting for a connection are
# not seen waiting in the database, so the barrier waits its timeout; kept short, as the
# pool's own wait (DATABASE_POOL_TIMEOUT_SECONDS, 5 s) must not run out first.
POOL_BOUND_SECONDS = 2.0

_started: dict[threading.Thread, float] = {}  # thread -> when its statement began
_watchers: dict[str, Engine] = {}
LOCK_WAITERS = text(
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
    "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
)


@event.listens_for(Engine, "before_cursor_execute")
def _statement_starts(*_args: Any) -> None:
    _started[threading.current_thread()] = time.monotonic()


@event.listens_for(Engine, "after_cursor_execute")
def _statement_ends(*_args: Any) -> None:
    _started.pop(threading.current_thread(), None)


@event.listens_for(Engine, "handle_error")
def _statement_fails(*_args: Any) -> None:
    _started.pop(threading.current_thread(), None)


def blocked_in_statements(seconds: float = BLOCKED_SECONDS) -> int:
    """Threads of this process inside one database statement for `seconds` or longer."""
    now = time.monotonic()
    return sum(
        1
        for thread, began in list(_started.items())
        if thread.is_alive() and now - began >= seconds
    )


def _lock_waiters(url: str) -> int:
    watcher = _watchers.get(url)
    if watcher is None:
        watcher = _watchers[url] = create_engine(url, isolation_level="AUTOCOMMIT")
    with watcher.connect() as connection:
        return int(connection.execute(LOCK_WAITERS).scalar_one())


class LockBarrier:
    """`threading.Barrier(parties, timeout)`, broken early when every party missing is
    blocked in the database (see the module). `wait` raises BrokenBarrierError when it
    breaks, to every party that arrived or arrives later, as a timed-out barrier does.
    `database_url`: the test database (its sessions' lock waits are read on PostgreSQL);
    by default that of the current app."""

    def __init__(self, parties: int, timeout: float = 10.0, database_url: str | None = None):
        if database_url is None:
            database_url = db.engine.url.render_as_string(hide_password=False)
        self.postgresql = make_url(database_url).get_backend_name() == "postgresql"
        self.database_url = database_url
        self.parties = parties
        self.timeout = timeout
        self._condition = threading.Condition()
        self._arrived = 0
        self._state = "waiting"  # then "released" or "broken"

    def _blocked(self) -> int:
        if self.postgresql:
            return max(_lock_waiters(self.database_url), blocked_in_statements())
        return blocked_in_statements()

    def wait(self) -> None:
        with self._condition:
            if self._state == "broken":
                raise threading.BrokenBarrierError
            self._arrived += 1
            if self._arrived >= self.parties:
                self._state = "released"
                self._condition.notify_all()
                return
            deadline = time.monotonic() + self.timeout
            seen_blocked = 0  # polls in a row that saw every missing party blocked
            while self._state == "waiting":
                if self._arrived + self._blocked() >= self.parties:
                    seen_blocked += 1
                else:
                    seen_blocked = 0
                if seen_blocked >= 2 or time.monotonic() >= deadline:
                    self._state = "broken"  # the others wait for a lock one of us holds
                else:
                    self._condition.wait(POLL_SECONDS)
            self._condition.notify_all()
            if self._state == "broken":
                raise threading.BrokenBarrierError


def wait_while_running(
    done: Any, running: Any, timeout: float, database_url: str | None = None
) -> None:
    """Wait until `done()` holds, or until the `running()` other racers (a count) are all
    blocked in the database (seen on two polls in a row), or `timeout` seconds: for a
    racer that holds a lock and waits for the others to finish, who may be waiting for
    that very lock."""
    barrier = LockBarrier(1, timeout, database_url)
    deadline = time.monotonic() + timeout
    seen_blocked = 0
    while not done() and time.monotonic() < deadline:
        left = running()
        seen_blocked = seen_blocked + 1 if left > 0 and barrier._blocked() >= left else 0
        if seen_blocked >= 2:
            return
        time.sleep(POLL_SECONDS)


def stop_after(
    monkeypatch: pytest.MonkeyPatch, target: str, barrier: Any, on_call: int = 1
) -> None:
    """Make each thread's `on_call`-th call of `target` ("module.function") wait at
    `barrier` after it returns (or raises)."""
    module_name, name = target.rsplit(".", 1)
    module = __import__(module_name, fromlist=[name])
    original = getattr(module, name)
    local = threading.local()

    def waiting(*args: Any, **kwargs: Any) -> Any:
        try:
            return original(*args, **kwargs)
        finally:
            local.calls = getattr(local, "calls", 0) + 1
            if local.calls == on_call:
                # Broken: the other thread waits for the lock this one holds.
                with contextlib.suppress(threading.BrokenBarrierError):
                    barrier.wait()

    monkeypatch.setattr(module, name, waiting)


def run_together(app, calls: list[tuple[User, Callable[[Any, dict[str, str]], Any]]]) -> list:
    """Each (user, call) runs in its own thread with its own client, at the same moment;
    returns each thread's (status, JSON body; a page's text)."""
    headers = [{"Authorization": f"Bearer {issue_access_token(user)}"} for user, _ in calls]
    db.session.commit()  # the test's own session holds nothing while the threads run
    results: list[Any] = [None] * len(calls)
    start = threading.Barrier(len(calls), timeout=30)

    def run(index: int) -> None:
        client = app.test_client()
        start.wait()
        response = calls[index][1](client, headers[index])
        if response.data and response.mimetype == "text/html":  # a website page
            body: Any = response.get_data(as_text=True)
        else:
            body = response.get_json(force=True, silent=True) if response.data else None
        results[index] = (response.status_code, body)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    db.session.expire_all()
    return results


@pytest.fixture
def barrier(app) -> LockBarrier:
    return LockBarrier(2, timeout=BARRIER_SECONDS)


def statuses(results: list) -> list[int]:
    return sorted(status for status, _ in results)
