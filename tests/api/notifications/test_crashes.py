"""Crash tests with real processes: the web app killed (SIGKILL) the
instant after it committed a change with its event, and a worker killed in the middle of
a fan-out; every event still reaches every inbox of its audience, each exactly once. And
two worker processes sharing 1,000 fan-outs: each run once, each inbox row once, the
work spread over both. On SQLite and PostgreSQL (TEST_DATABASE_URL).

The web app is served by gunicorn (`crash_app`, which kills its own process from the
session's `after_commit` when the commit recorded an event); the workers are `flask
worker` processes running the real fan-out, wrapped to leave marks of who ran what
(`fanout_worker_app`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from app.auth import issue_access_token
from app.extensions import db
from app.models.event import Event, Notification
from app.models.job import Job, JobState
from app.models.trackable import JourneyStop, TrackableComment
from app.services.events.recording import FAN_OUT, EventType, record
from tests.inboxes import World, inbox
from tests.serving import ROOT, free_port, healthy

pytestmark = pytest.mark.processes

EVERYONE = ("owner", "admin", "item_watcher", "group_watcher")  # the author's audience
WORKER_APP = "tests.api.notifications.fanout_worker_app"


# --- processes ---------------------------------------------------------------------------


class Processes:
    """The processes a test starts, each with its output in a file; all killed after."""

    def __init__(self, database_url: str, root: Path) -> None:
        self.database_url = database_url
        self.root = root
        self.marks = root / "marks"
        self.marks.mkdir()
        self.started: list[subprocess.Popen[bytes]] = []

    def _start(self, command: list[str], env: dict[str, str], log: Path) -> Any:
        with log.open("w") as out:
            process = subprocess.Popen(  # noqa: S603 - our own app
                command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
            )
        self.started.append(process)
        return process

    def worker(self, name: str, **settings: str) -> subprocess.Popen[bytes]:
        """`flask worker` running the watched fan-out; returns once it polls for jobs."""
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "FANOUT_TEST_DATABASE_URL": self.database_url,
            "FANOUT_MARKS_DIR": str(self.marks),
            **settings,
        }
        log = self.root / f"{name}.log"
        command = [sys.executable, "-m", "flask", "--app", WORKER_APP, "worker"]
        process = self._start([*command, "--poll-seconds", "0.05"], env, log)
        until(lambda: " started (kinds:" in log.read_text(), process, log, seconds=60)
        return process

    def web(self) -> tuple[subprocess.Popen[bytes], int]:
        """gunicorn (one sync worker) serving `crash_app`; returns once /healthz answers."""
        port = free_port()
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "CRASH_TEST_DATABASE_URL": self.database_url,
            "WEB_CONCURRENCY": "1",
            "PORT": str(port),
            "LOG_LEVEL": "WARNING",
            "ACCESS_LOG": "off",
        }
        log = self.root / "gunicorn.log"
        app = "tests.api.notifications.crash_app:app"
        process = self._start(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", app], env, log
        )
        until(lambda: healthy(port), process, log, seconds=90)
        return process, port

    def runs(self) -> dict[int, list[str]]:
        """The marks of each worker process: `start EVENT` and `written EVENT` lines."""
        return {int(path.name): path.read_text().splitlines() for path in self.marks.iterdir()}

    def stop_all(self) -> None:
        for process in self.started:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=30)


@pytest.fixture
def processes(database_url: str, tmp_path: Path) -> Iterator[Processes]:
    started = Processes(database_url, tmp_path)
    try:
        yield started
    finally:
        started.stop_all()


def until(
    condition: Callable[[], bool],
    process: subprocess.Popen[bytes] | None = None,
    log: Path | None = None,
    *,
    seconds: float = 30,
) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        output = log.read_text() if log is not None else ""
        assert process is None or process.poll() is None, output
        assert time.monotonic() < deadline, output
        time.sleep(0.05)


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM: the worker finishes its current job, then exits."""
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0


def post(port: int, path: str, body: dict[str, Any], token: str) -> int | None:
    """The status, or None when the connection closed without an answer."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=20) as response:  # noqa: S310
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code
    except (urllib.error.URLError, ConnectionError, OSError):
        return None


# --- the database as the test reads it ---------------------------------------------------


def jobs_by_state() -> Counter[JobState]:
    db.session.expire_all()
    found = Counter(db.session.scalars(select(Job.state).where(Job.kind == FAN_OUT)))
    db.session.rollback()  # no snapshot or read lock held while the processes work
    return found


def all_done(total: int) -> Callable[[], bool]:
    return lambda: jobs_by_state() == Counter({JobState.DONE: total})


def deliveries() -> Counter[tuple[uuid.UUID, uuid.UUID]]:
    """Inbox rows per (event, user): the unique key makes 2 impossible, so a count of
    rows against the audience is what tells a double delivery from a missing one."""
    rows = db.session.execute(select(Notification.event_id, Notification.user_id)).all()
    db.session.rollback()
    return Counter((event_id, user_id) for event_id, user_id in rows)


def audience_ids(world: World) -> set[uuid.UUID]:
    return {getattr(world, name).id for name in EVERYONE}


# --- the web app killed right after its commit -------------------------------------------


def test_the_app_killed_right_after_committing_loses_no_event(app, api, world, processes):
    """A journey stop and a comment, each through HTTP to gunicorn, whose process is
    killed the instant the commit with the event returns: the client gets no answer, yet
    the change, its event and its fan-out job are there, and a worker started afterwards
    delivers both events to every inbox of their audience."""
    server, port = processes.web()
    token = issue_access_token(world.author)
    base = f"/api/trackables/{world.trackable.id}"
    stop_body = {"latitude": 47.37, "longitude": 8.54}
    assert post(port, f"{base}/journey-stops", stop_body, token) is None  # killed
    until(lambda: healthy(port), server, seconds=60)  # the master started a new one
    assert post(port, f"{base}/comments", {"body": "Found it"}, token) is None  # again
    log = processes.root / "gunicorn.log"  # the master reports each worker killed
    until(lambda: log.read_text().count("was sent SIGKILL") == 2, server, log)

    db.session.expire_all()
    assert db.session.scalar(select(func.count()).select_from(JourneyStop)) == 1
    assert db.session.scalar(select(func.count()).select_from(TrackableComment)) == 1
    events = {event.id: event.event_type for event in db.session.scalars(select(Event))}
    assert sorted(events.values()) == ["trackable.comment.written", "trackable.journey_stop.added"]
    assert jobs_by_state() == Counter({JobState.QUEUED: 2})
    assert deliveries() == Counter()

    worker = processes.worker("worker")
    until(all_done(2), worker, processes.root / "worker.log")
    stop(worker)
    assert {line for lines in processes.runs().values() for line in lines} == {
        f"{step} {event_id}" for event_id in events for step in ("start", "written")
    }
    audience = audience_ids(world)
    assert deliveries() == Counter({(e, user): 1 for e in events for user in audience})
    for name in EVERYONE:
        seen = [one["eventType"] for one in inbox(app, api, getattr(world, name))]
        assert sorted(seen) == sorted(events.values()), name
    for name in ("author", "stranger"):
        assert inbox(app, api, getattr(world, name)) == [], name


# --- a worker killed in the middle of a fan-out ------------------------------------------


def test_a_worker_killed_mid_fan_out_leaves_it_to_another_each_inbox_once(
    app, api, world, processes
):
    """The first worker writes the inbox rows and is killed (SIGKILL) before its
    transaction commits; none of its rows remain. Once its 3 s lease has run out, a
    second worker process runs the job again: every inbox row exactly once."""
    url = f"/api/trackables/{world.trackable.id}/journey-stops"
    body = {"latitude": 47.37, "longitude": 8.54}
    assert api.as_user(world.author).post(url, json=body).status_code == 201
    event_id = db.session.scalars(select(Event.id)).one()
    db.session.rollback()
    held = {"FANOUT_HOLD_SECONDS": "120", "FANOUT_LEASE_SECONDS": "3"}
    first = processes.worker("first", **held)
    until(
        lambda: f"written {event_id}" in processes.runs().get(first.pid, []),
        first,
        processes.root / "first.log",
    )
    first.kill()  # SIGKILL in the middle of the delivery: no clean-up of any kind
    first.wait(timeout=30)
    killed_at = time.monotonic()
    assert deliveries() == Counter()  # its rows were never committed
    assert jobs_by_state() == Counter({JobState.QUEUED: 1})

    second = processes.worker("second", **held)
    until(all_done(1), second, processes.root / "second.log")
    assert time.monotonic() - killed_at < 60  # the 3 s lease, not the 5 min default
    stop(second)
    runs = processes.runs()
    assert runs[first.pid] == [f"start {event_id}", f"written {event_id}"]
    assert runs[second.pid] == [f"start {event_id}", f"written {event_id}"]
    db.session.expire_all()
    job = db.session.scalars(select(Job).where(Job.kind == FAN_OUT)).one()
    assert (job.state, job.attempts) == (JobState.DONE, 2)
    db.session.rollback()
    assert deliveries() == Counter({(event_id, user): 1 for user in audience_ids(world)})
    for name in EVERYONE:
        assert len(inbox(app, api, getattr(world, name))) == 1, name


# --- two workers, 1,000 events ------------------------------------------------------------

EVENTS = 1000


def test_two_workers_deliver_1000_events_each_once_spread_over_both(
    app, world, processes, database_url
):
    """Both workers wait for work; 1,000 events (comments written by the author, each with
    its fan-out job) are committed at once. Every job is run by exactly one worker, once;
    every event reaches its four listeners once; and both workers did a share of the
    work (on SQLite their claims take turns under the write lock, on PostgreSQL they run
    side by side with SKIP LOCKED)."""
    workers = [processes.worker(f"worker-{n}") for n in (1, 2)]
    events = [
        record(
            EventType.COMMENT_WRITTEN,
            world.trackable,
            actor_id=world.author.id,
            comment_id=uuid.uuid4(),
        ).id
        for _ in range(EVENTS)
    ]
    db.session.commit()
    started = time.monotonic()
    until(all_done(EVENTS), seconds=120)
    elapsed = time.monotonic() - started
    for worker in workers:
        stop(worker)

    runs = processes.runs()
    assert set(runs) == {worker.pid for worker in workers}
    started_by: Counter[str] = Counter()
    for lines in runs.values():
        started_by.update(line.split()[1] for line in lines if line.startswith("start "))
    assert set(started_by) == {str(event_id) for event_id in events}
    assert set(started_by.values()) == {1}, "a fan-out ran twice"
    shares = sorted(sum(line.startswith("start ") for line in lines) for lines in runs.values())
    print(f"{database_url.split(':')[0]}: {EVENTS} fan-outs in {elapsed:.1f} s, shares {shares}")
    assert shares[0] >= EVENTS // 10, shares  # both took part, not a token share
    audience = audience_ids(world)
    assert deliveries() == Counter({(event, user): 1 for event in events for user in audience})
