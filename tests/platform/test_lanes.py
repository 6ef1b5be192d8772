"""Lanes and fair keys (app.platform.jobs): each lane's jobs are claimed by its own threads,
so account mail never waits behind a webhook delivery; a fair kind runs one job per key
at a time, even when two workers claim at the same moment (on both databases); and the
worker's own metrics listener reports runs per kind and each lane's backlog."""

from __future__ import annotations

import contextlib
import threading
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import event, select

from app.extensions import db
from app.models.base import utcnow
from app.models.job import Job
from app.platform import jobs
from app.platform.jobs import JobKind, Task, Worker
from app.platform.jobs.kinds import DEFAULT_LANE
from app.platform.jobs.listener import parse_bind, serve_metrics
from app.platform.jobs.queue import app_session, claim
from app.platform.jobs.worker import lane_threads
from tests.jobs import job_kinds_added, run_jobs
from tests.serving import free_port


def nothing(task: Task) -> None:
    return


FAIR = JobKind("test.fair", nothing, lane="test-fair", fair=True)
MAIL = JobKind("test.mail", nothing, lane="test-mail")


@pytest.fixture(autouse=True)
def test_kinds(app) -> Iterator[None]:
    with job_kinds_added(app, FAIR, MAIL):
        yield


def fair_job(key: str, *, minutes_ago: int = 0) -> str:
    job = jobs.enqueue("test.fair", {}, fair_key=key)
    job.run_after_utc = utcnow() - timedelta(minutes=minutes_ago)
    return str(job.id)


def claimed_by(app, worker: str) -> str | None:
    """Claim one job of the fair lane as `worker` (its lease kept, as while it runs)."""
    with app.app_context():
        session = app_session()
        try:
            lane = jobs.job_kinds(app).lanes()["test-fair"]
            task = claim(session, lane, worker, utcnow())
            return None if task is None else str(task.id)
        finally:
            session.remove()


# --- lanes ---------------------------------------------------------------------------------


def test_every_kind_of_the_app_names_its_lane(app):
    lanes = {lane: kinds.names for lane, kinds in jobs.job_kinds(app).lanes().items()}
    assert DEFAULT_LANE not in lanes
    assert set(lanes) >= {"account", "events", "exports", "webhooks"}
    assert lanes["webhooks"] == ("webhooks.drain",)
    assert lanes["account"] == (
        "identity.confirmation_mail",
        "identity.email_change_mail",
        "identity.password_reset_mail",
    )


def test_the_lanes_threads_come_from_the_setting(app):
    app.config["WORKER_LANES"] = "events=4, test-mail=0"
    plan = lane_threads(app)
    assert plan["events"] == 4
    assert plan["test-mail"] == 0
    assert plan["account"] == 1
    assert lane_threads(app, "account=3")["account"] == 3
    with pytest.raises(ValueError, match="no lane 'mails'"):
        lane_threads(app, "mails=2")
    with pytest.raises(ValueError, match="not lane=threads"):
        lane_threads(app, "events=many")


def test_a_lanes_worker_runs_its_lanes_jobs_only(app):
    jobs.enqueue("test.mail", {})
    fair_job("a")
    db.session.commit()
    assert Worker(app, name="tests", lane="test-mail").run_due() == 1
    remaining = db.session.scalars(select(Job.kind).where(Job.state == "queued")).all()
    assert remaining == ["test.fair"]
    assert Worker(app, name="tests", lane="test-fair").run_due() == 1


# --- fair keys -----------------------------------------------------------------------------


def test_a_key_with_a_job_running_waits_while_other_keys_go(app):
    first = fair_job("a", minutes_ago=3)
    second = fair_job("a", minutes_ago=2)
    other = fair_job("b", minutes_ago=1)
    db.session.commit()
    assert claimed_by(app, "one") == first
    assert claimed_by(app, "two") == other  # a's second waits for its first
    assert claimed_by(app, "three") is None
    finished = db.session.get(Job, uuid.UUID(first))
    finished.state, finished.locked_until_utc = "done", None
    db.session.commit()
    assert claimed_by(app, "four") == second


def test_two_workers_claiming_at_once_never_both_take_one_key(app):
    """Both claimers stop just before the query that reads the running keys and takes a
    job: without the lane's lock both get there, read that no job of key `a` runs, and
    each takes one. With it the second waits for the lock, the first's barrier times out,
    and the second reads after the first claim commits."""
    fair_job("a", minutes_ago=2)
    fair_job("a", minutes_ago=1)
    db.session.commit()
    barrier = threading.Barrier(2, timeout=2)
    local = threading.local()

    def meet(connection, cursor, statement, parameters, context, executemany):
        if "FROM jobs" in statement and "FOR UPDATE" in statement and not local.__dict__:
            local.met = True
            with contextlib.suppress(threading.BrokenBarrierError):
                barrier.wait()

    results: list[str | None] = [None, None]

    def run(index: int) -> None:
        results[index] = claimed_by(app, f"worker-{index}")

    event.listen(db.engine, "before_cursor_execute", meet)
    try:
        threads = [threading.Thread(target=run, args=(index,)) for index in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    finally:
        event.remove(db.engine, "before_cursor_execute", meet)
    assert sorted(result is None for result in results) == [False, True]


# --- the worker's metrics listener ---------------------------------------------------------


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310 - our listener
        return answer.read().decode()


def test_the_workers_listener_serves_runs_per_kind_and_each_lanes_backlog(app):
    jobs.enqueue("test.mail", {})
    jobs.enqueue("test.mail", {})
    db.session.commit()
    assert Worker(app, name="tests", lane="test-mail").run_due(limit=1) == 1
    port = free_port()
    server = serve_metrics(app, f"127.0.0.1:{port}")
    try:
        text = scrape(f"http://127.0.0.1:{port}/metrics")
        with pytest.raises(urllib.error.HTTPError) as refused:
            scrape(f"http://127.0.0.1:{port}/")
        refused.value.close()
    finally:
        server.shutdown()
        server.server_close()
    assert refused.value.code == 404
    lines = text.splitlines()
    assert 'jobs_lane_waiting{lane="test-mail"} 1.0' in lines
    assert 'jobs_lane_waiting{lane="account"} 0.0' in lines
    assert "jobs_backlog_up 1.0" in lines
    assert any(line.startswith('jobs_run_total{kind="test.mail"}') for line in lines)
    assert any(line.startswith('jobs_done_total{kind="test.mail"}') for line in lines)


@pytest.mark.parametrize("bind", ["9100", ":9100", "host:port"])
def test_a_listener_address_is_host_and_port(bind):
    with pytest.raises(ValueError, match="host:port"):
        parse_bind(bind)
    assert parse_bind("[::1]:9100") == ("::1", 9100)


def test_run_due_still_runs_every_lane(app):
    jobs.enqueue("test.mail", {})
    fair_job("a")
    db.session.commit()
    assert run_jobs(app) == 2
