"""gunicorn's master makes the app once and its workers fork from it (gunicorn.conf.py,
app.platform.forking): a reload (HUP) answers on without a gap, the master keeps no
database connection for its workers to inherit, and what must run in each process waits
for the fork."""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time
import urllib.request

import psycopg2
import pytest
from sqlalchemy import make_url

from app.platform import forking
from tests.serving import gunicorn_master, gunicorn_serving


@pytest.fixture
def preloading(monkeypatch):
    """The module's state as in a master that preloads, restored after the test."""
    for name in ("_in_each_process", "_after_fork", "_before_forks"):
        monkeypatch.setattr(forking, name, [])
    monkeypatch.setattr(forking, "_preloading", False)
    forking.preloading()


def test_work_for_each_process_waits_for_the_fork_when_preloading(preloading):
    ran: list[str] = []
    forking.in_each_process(lambda: ran.append("thread"))
    forking.after_fork(lambda: ran.append("reset"), lambda: ran.append("closed"))
    assert ran == []
    forking.before_forks()
    assert ran == ["closed"]
    forking.after_fork_in_worker()
    assert ran == ["closed", "reset", "thread"]
    forking.in_each_process(lambda: ran.append("later"))  # the worker's own app, if any
    assert ran[-1] == "later"


def test_without_preloading_work_runs_at_once_and_nothing_waits_for_a_fork(monkeypatch):
    monkeypatch.setattr(forking, "_preloading", False)
    monkeypatch.setattr(forking, "_after_fork", [])
    ran: list[str] = []
    forking.in_each_process(lambda: ran.append("thread"))
    forking.after_fork(lambda: ran.append("reset"), lambda: ran.append("closed"))
    assert ran == ["thread"]
    assert forking._after_fork == []


def test_the_master_keeps_no_database_connection_for_its_workers(database_url, tmp_path):
    """Making the app checks the code keys on the database; the master closes that
    connection before forking, so no worker starts on a socket the master opened."""
    if not database_url.startswith("postgresql"):
        pytest.skip("connections are counted by PostgreSQL's pg_stat_activity")
    name = f"lnt-preload-{os.getpid()}"
    url = make_url(database_url).update_query_dict({"application_name": name})
    settings = {
        "APP_ENV": "development",
        "DATABASE_URL": url.render_as_string(hide_password=False),
        "RATELIMIT_STORAGE_URI": "memory://",
        "WEB_CONCURRENCY": "2",
        "LOG_LEVEL": "INFO",
    }

    def connections() -> int:
        plain = make_url(database_url).set(drivername="postgresql")
        dsn = plain.render_as_string(hide_password=False)
        with psycopg2.connect(dsn) as connection, connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)
            )
            return int(cursor.fetchone()[0])

    with (
        (tmp_path / "gunicorn.log").open("w") as output,
        gunicorn_serving(settings, output=output) as port,
    ):
        assert connections() == 0, (tmp_path / "gunicorn.log").read_text()
        urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=10).close()
        assert connections() >= 1
    log = (tmp_path / "gunicorn.log").read_text()
    assert "code keys" not in log  # the master's check reached the database


@pytest.mark.processes
def test_a_reload_under_load_answers_every_request_without_a_gap(database_url, tmp_path):
    """HUP, as the web unit's ExecReload sends it: new workers fork from the master's app
    and the old ones finish their requests; every request is answered, and no pause between
    answers comes near the defect's: each new worker making the app before answering left
    5.6 s unanswered (bench/README.md). The bound is 1.5 s plus twice the same load's
    longest pause without a reload, measured just before; under coverage in CI's busy
    PostgreSQL leg a slow machine's own stalls reached 0.64 s across the reloads."""
    settings = {
        "APP_ENV": "testing",
        "DATABASE_URL": database_url,
        "RATELIMIT_STORAGE_URI": "memory://",
        "WEB_CONCURRENCY": "2",
        "ACCESS_LOG": "off",
    }
    stop = threading.Event()
    answered: list[float] = []
    failures: list[str] = []

    def client(port: int) -> None:
        while not stop.is_set():
            try:
                url = f"http://127.0.0.1:{port}/api/system/status"
                with urllib.request.urlopen(url, timeout=10) as response:
                    response.read()
                answered.append(time.monotonic())
            except OSError as error:
                failures.append(repr(error))

    def longest_pause(start: float, end: float) -> float:
        times = sorted(moment for moment in answered if start <= moment <= end)
        assert len(times) > 20, len(times)
        return max(later - earlier for earlier, later in itertools.pairwise(times))

    with gunicorn_master(settings) as (port, server):
        clients = [threading.Thread(target=client, args=(port,)) for _ in range(4)]
        for thread in clients:
            thread.start()
        try:
            time.sleep(0.3)  # the clients under way
            calm_started = time.monotonic()
            time.sleep(1.5)
            reloads_started = time.monotonic()
            for _ in range(3):
                time.sleep(0.7)
                server.send_signal(signal.SIGHUP)
            time.sleep(1.0)
            reloads_ended = time.monotonic()
        finally:
            stop.set()
            for thread in clients:
                thread.join()
    assert failures == []
    calm = longest_pause(calm_started, reloads_started)
    during_reloads = longest_pause(reloads_started, reloads_ended)
    assert during_reloads < 1.5 + 2 * calm, (during_reloads, calm)
