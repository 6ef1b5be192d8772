"""The durable job queue (app.platform.jobs): enqueued with the transaction that asks for
it, run at least once by any number of workers (none run a job twice at once), retried
with back-off until dead, survivors of a killed worker, cleaned up, and its backlog on
/readyz. On SQLite and PostgreSQL (TEST_DATABASE_URL)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.base import utcnow
from app.models.job import Job, JobState
from app.models.user import User
from app.platform import jobs
from app.platform.jobs import GiveUp, JobKind, Task, Worker
from app.platform.metrics import value as metric_value
from tests.conftest import make_test_app
from tests.factories import count_rows as count
from tests.jobs import job_kinds_added, run_jobs
from tests.platform.slow_job import SLOW
from tests.serving import ROOT

runs: list[tuple[str, str]] = []  # (job id, thread name) of each run of `test.record`
runs_lock = threading.Lock()


def record(task: Task) -> None:
    time.sleep(0.001)  # long enough for two workers to interleave
    with runs_lock:
        runs.append((str(task.id), threading.current_thread().name))


def always_fail(task: Task) -> None:
    raise RuntimeError(f"run {task.attempt} failed")


def give_up(task: Task) -> None:
    raise GiveUp("this payload can never work")


RECORD = JobKind("test.record", record)
FAILING = JobKind(
    "test.fail",
    always_fail,
    max_attempts=4,
    first_retry=timedelta(seconds=10),
    longest_retry=timedelta(seconds=30),
)
GIVING_UP = JobKind("test.give_up", give_up)
KINDS = (RECORD, FAILING, GIVING_UP, SLOW)


@pytest.fixture(autouse=True)
def test_kinds(app) -> Iterator[None]:
    runs.clear()
    with job_kinds_added(app, *KINDS):
        yield


def the_job() -> Job:
    db.session.expire_all()
    return db.session.scalars(select(Job)).one()


# --- enqueue: in the caller's transaction ------------------------------------------------


def test_a_job_enqueued_in_a_rolled_back_transaction_does_not_exist(app):
    jobs.enqueue("test.record", {"n": 1})
    db.session.rollback()
    assert count(Job) == 0
    assert run_jobs(app) == 0
    assert runs == []


def test_a_request_that_fails_after_enqueueing_leaves_no_job(app, api, monkeypatch):
    """Through HTTP: registration enqueues its confirmation mail, then the request fails;
    its transaction, the job with it, is rolled back."""
    real_enqueue = jobs.enqueue

    def enqueue_then_fail(*args, **kwargs):
        real_enqueue(*args, **kwargs)
        raise RuntimeError("the request fails after enqueueing")

    monkeypatch.setattr("app.services.identity.accounts.jobs.enqueue", enqueue_then_fail)
    body = {"email": "ada@example.com", "userName": "ada_walks", "password": "a-long-pass-42"}
    assert api.post("/api/auth/register", json=body).status_code == 500
    assert (count(Job), count(User)) == (0, 0)


def test_a_committed_job_is_run_once_by_flask_worker_once(app):
    job = jobs.enqueue("test.record", {"n": 1})
    db.session.commit()
    runner = app.test_cli_runner()
    result = runner.invoke(args=["worker", "--once"])
    assert result.exit_code == 0, result.output
    assert "ran 1 job" in result.output
    assert [job_id for job_id, _ in runs] == [str(job.id)]
    again = runner.invoke(args=["worker", "--once"])
    assert "ran 0 jobs" in again.output
    done = the_job()
    assert (done.state, done.attempts, done.locked_by) == (JobState.DONE, 1, None)
    assert done.finished_utc is not None


def test_only_registered_kinds_with_json_payloads_are_enqueued(app):
    with pytest.raises(LookupError):
        jobs.enqueue("no.such.kind", {})
    with pytest.raises(TypeError):
        jobs.enqueue("test.record", {"when": utcnow()})


def test_a_job_waits_for_its_delay(app):
    jobs.enqueue("test.record", {}, delay=timedelta(minutes=5))
    db.session.commit()
    assert run_jobs(app) == 0
    later = utcnow() + timedelta(minutes=6)
    assert run_jobs(app, clock=lambda: later) == 1


# --- failures: back-off with jitter, then dead -------------------------------------------


def test_a_failing_job_is_retried_with_growing_back_off_then_dead(app, caplog):
    counts = ("jobs_run_total", "jobs_failed_total", "jobs_retried_total", "jobs_dead_total")
    before = {name: metric_value(name, kind="test.fail") for name in counts}
    jobs.enqueue("test.fail", {})
    db.session.commit()
    clock = [utcnow()]
    waits = []
    for attempt in (1, 2, 3):
        now = clock[0]
        assert run_jobs(app, clock=lambda: clock[0]) == 1
        job = the_job()
        assert (job.state, job.attempts) == (JobState.QUEUED, attempt)
        assert job.last_error == f"RuntimeError: run {attempt} failed"
        assert job.locked_by is None
        waits.append((job.run_after_utc - now).total_seconds())
        assert run_jobs(app, clock=lambda: clock[0]) == 0  # nothing before the back-off ends
        clock[0] = job.run_after_utc
    now = clock[0]
    # Ceilings 10 s, 20 s, 30 s (the longest); each wait is drawn from half to all of it.
    for wait, ceiling in zip(waits, (10, 20, 30), strict=True):
        assert ceiling / 2 <= wait <= ceiling
    with caplog.at_level(logging.ERROR, logger="app.platform.jobs"):
        assert run_jobs(app, clock=lambda: now) == 1
    job = the_job()
    assert (job.state, job.attempts, job.finished_utc) == (JobState.DEAD, 4, now)
    assert job.last_error == "RuntimeError: run 4 failed"
    after = {name: metric_value(name, kind="test.fail") for name in counts}
    assert [after[name] - before[name] for name in counts] == [4, 4, 3, 1]
    assert "is dead after 4 run(s)" in caplog.text
    assert run_jobs(app, clock=lambda: now + timedelta(days=1)) == 0  # dead stays dead


def test_the_jitter_spreads_jobs_that_failed_together():
    waits = {FAILING.retry_delay(3) for _ in range(50)}
    assert len(waits) > 40
    assert all(timedelta(seconds=15) <= wait <= timedelta(seconds=30) for wait in waits)


def test_a_failing_job_past_its_max_age_is_dead_before_its_attempts_run_out(app):
    job = jobs.enqueue("test.fail", {})
    job.created_utc = utcnow() - FAILING.max_age  # a day old: the next retry would be later
    db.session.commit()
    assert run_jobs(app) == 1
    assert (the_job().state, the_job().attempts) == (JobState.DEAD, 1)


def test_a_handler_that_gives_up_makes_the_job_dead_at_once(app):
    jobs.enqueue("test.give_up", {})
    db.session.commit()
    assert run_jobs(app) == 1
    job = the_job()
    assert (job.state, job.attempts) == (JobState.DEAD, 1)
    assert job.last_error == "GiveUp: this payload can never work"


def test_a_job_whose_worker_died_in_every_run_is_dead_not_run_again(app):
    """Its lease ran out `max_attempts` times (a job that kills its worker): the next
    claim buries it instead of running it."""
    job = jobs.enqueue("test.record", {})
    job.attempts = RECORD.max_attempts
    job.locked_by, job.locked_until_utc = "gone:1:abc", utcnow() - timedelta(seconds=1)
    db.session.commit()
    assert run_jobs(app) == 0
    assert runs == []
    job = the_job()
    assert job.state is JobState.DEAD
    assert "lease ran out" in job.last_error


# --- many workers: each job once ---------------------------------------------------------


def test_two_workers_run_each_of_200_jobs_exactly_once(app, database_url, tmp_path):
    other_app = make_test_app(database_url, tmp_path)
    ids = {str(jobs.enqueue("test.record", {"n": n}).id) for n in range(200)}
    db.session.commit()
    barrier = threading.Barrier(2, timeout=60)
    ran: dict[str, int] = {}
    errors: list[BaseException] = []

    def work(target) -> None:
        try:
            worker = Worker(target, name=threading.current_thread().name)
            barrier.wait()
            ran[threading.current_thread().name] = worker.run_due()
        except BaseException as error:
            errors.append(error)

    with job_kinds_added(other_app, *KINDS):
        threads = [
            threading.Thread(target=work, args=(target,), name=f"worker-{n}")
            for n, target in enumerate((app, other_app))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
    with other_app.app_context():
        db.engine.dispose()
    assert errors == []
    per_job = Counter(job_id for job_id, _ in runs)
    assert set(per_job) == ids
    assert set(per_job.values()) == {1}
    assert sum(ran.values()) == 200
    assert count(Job, Job.state == JobState.DONE) == 200
    by_worker = Counter(name for _, name in runs)
    if db.engine.dialect.name == "postgresql":  # SQLite's write lock takes claims in turn
        assert set(by_worker) == {"worker-0", "worker-1"}, by_worker


# --- a real worker process, stopped --------------------------------------------------------


def start_worker(database_url: str, output: Path) -> subprocess.Popen:
    """`flask worker` in a process of its own, its output into the file `output`."""
    env = {
        **os.environ,
        "WORKER_TEST_DATABASE_URL": database_url,
        "PYTHONPATH": str(ROOT),
        "FLASK_APP": "tests.platform.worker_app",
    }
    with output.open("w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "flask", "worker", "--poll-seconds", "0.1"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def wait_for(predicate, *, seconds: float, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)


def marks_of(path: Path) -> list[str]:
    return path.read_text().split("\n")[:-1] if path.exists() else []


@pytest.mark.processes
def test_a_worker_killed_mid_job_leaves_it_to_another_once_the_lease_ends(
    app, database_url, tmp_path
):
    marks = tmp_path / "marks"
    jobs.enqueue("test.slow", {"marks": str(marks), "first_run_seconds": 120})
    db.session.commit()
    log = tmp_path / "worker.log"
    process = start_worker(database_url, log)
    try:
        wait_for(lambda: marks_of(marks), seconds=120, process=process, log=log)
    finally:
        process.kill()  # SIGKILL: no clean-up of any kind
        process.wait(timeout=30)
    assert marks_of(marks) == [f"start {process.pid}"]
    job = the_job()
    assert (job.state, job.attempts) == (JobState.QUEUED, 1)
    assert str(process.pid) in (job.locked_by or "")
    leased_until: datetime = job.locked_until_utc
    # While the lease lasts nobody else runs it...
    assert run_jobs(app, clock=lambda: leased_until - timedelta(milliseconds=100)) == 0
    # ...and once it has run out, the next worker does.
    time.sleep(max(0.0, (leased_until - utcnow()).total_seconds()) + 0.2)
    assert run_jobs(app) == 1
    me = os.getpid()
    assert marks_of(marks) == [f"start {process.pid}", f"start {me}", f"end {me}"]
    job = the_job()
    assert (job.state, job.attempts) == (JobState.DONE, 2)


@pytest.mark.processes
def test_sigterm_lets_the_current_job_finish_then_the_worker_exits(app, database_url, tmp_path):
    marks = tmp_path / "marks"
    first = jobs.enqueue("test.slow", {"marks": str(marks), "first_run_seconds": 2})
    second = jobs.enqueue("test.slow", {"marks": str(marks), "first_run_seconds": 2})
    second.run_after_utc = first.run_after_utc + timedelta(microseconds=1)
    first_id = first.id
    db.session.commit()
    log = tmp_path / "worker.log"
    process = start_worker(database_url, log)
    try:
        wait_for(lambda: marks_of(marks), seconds=120, process=process, log=log)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0, log.read_text()
    finally:
        if process.poll() is None:
            process.kill()
    assert marks_of(marks) == [f"start {process.pid}", f"end {process.pid}"]
    db.session.expire_all()
    states = {job.id: job.state for job in db.session.scalars(select(Job))}
    assert states.pop(first_id) is JobState.DONE
    assert list(states.values()) == [JobState.QUEUED]  # the next one was left for later
    assert "stopping after the current job" in log.read_text()


# --- clean-up and backlog ------------------------------------------------------------------


def test_finished_jobs_are_removed_after_their_keeping_time(app):
    now = utcnow()

    def finished(state: JobState, ago: timedelta) -> Job:
        job = jobs.enqueue("test.record", {})
        job.state, job.finished_utc = state, now - ago
        return job

    kept = {
        finished(JobState.DONE, timedelta(hours=23)).id,
        finished(JobState.DEAD, timedelta(days=29)).id,
    }
    finished(JobState.DONE, timedelta(hours=25))
    finished(JobState.DEAD, timedelta(days=31))
    old_but_waiting = jobs.enqueue("test.record", {}, delay=timedelta(days=-60))
    kept.add(old_but_waiting.id)
    db.session.commit()
    assert Worker(app, clock=lambda: now).clean_up() == 2
    db.session.expire_all()
    assert set(db.session.scalars(select(Job.id))) == kept


def test_readyz_reports_the_age_of_the_oldest_waiting_job(app, api):
    first = api.get("/readyz").get_json()
    assert set(first) == {"status", "dependencies", "jobs"}
    assert first["status"] == "ready"
    assert first["jobs"] == {"waiting": 0, "oldestWaitingSeconds": None, "dead": 0, "behind": False}
    assert {name: state["up"] for name, state in first["dependencies"].items()} == {
        "database": True,
        "rateLimits": True,
    }
    jobs.enqueue("test.record", {}, delay=timedelta(minutes=-10))  # no worker for 10 min
    jobs.enqueue("test.record", {})
    jobs.enqueue("test.record", {}, delay=timedelta(hours=1))  # not due: not waiting
    jobs.enqueue("test.give_up", {}, delay=timedelta(minutes=-1))
    db.session.commit()
    body = api.get("/readyz").get_json()
    assert body["status"] == "ready"
    assert (body["jobs"]["waiting"], body["jobs"]["behind"]) == (3, True)
    assert 600 <= body["jobs"]["oldestWaitingSeconds"] < 660
    assert run_jobs(app) == 3
    assert api.get("/readyz").get_json()["jobs"] == {
        "waiting": 0,
        "oldestWaitingSeconds": None,
        "dead": 1,
        "behind": False,
    }
