"""Rate limits counted in the database (`RATELIMIT_STORAGE_URI=database://`, the default):
one count per limit and client for every worker and every instance of the service."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from app.platform.ratelimit_storage import DatabaseStorage
from tests.serving import answer, development_settings, free_port, gunicorn_serving

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 4


@pytest.fixture
def storage(app) -> DatabaseStorage:
    return DatabaseStorage()


def test_hits_are_counted_in_their_window(storage):
    assert [storage.incr("k", 60) for _ in range(3)] == [1, 2, 3]
    assert storage.get("k") == 3
    assert time.time() + 55 < storage.get_expiry("k") <= time.time() + 60
    assert storage.get("other") == 0


def test_a_new_window_starts_from_zero_when_the_last_has_ended(storage):
    storage.incr("k", 1)
    storage.incr("k", 1)
    time.sleep(1.1)
    assert storage.get("k") == 0
    assert storage.incr("k", 60) == 1


def test_clear_and_reset_forget_counts(storage):
    storage.incr("a", 60)
    storage.incr("b", 60)
    storage.clear("a")
    assert (storage.get("a"), storage.get("b")) == (0, 1)
    storage.reset()
    assert storage.get("b") == 0
    assert storage.check()


def test_simultaneous_hits_each_get_their_own_count(app, storage):
    """Twelve hits released together, each on its own connection: counted 1..12, once
    each (the count and its read are one statement)."""
    threads_count = 12
    barrier = threading.Barrier(threads_count)
    counts: list[int] = []
    errors: list[BaseException] = []

    def hit() -> None:
        with app.app_context():
            barrier.wait()
            try:
                counts.append(storage.incr("raced", 60))
            except BaseException as error:  # reported below
                errors.append(error)

    threads = [threading.Thread(target=hit) for _ in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    assert sorted(counts) == list(range(1, threads_count + 1))


# --- the same limit across processes ------------------------------------------------------


def login(port: int) -> int:
    body = json.dumps({"email": "nobody@example.com", "password": "not-the-password"}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/auth/login",
        data=body,
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=20) as response:  # noqa: S310
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


@pytest.fixture
def serve(app, database_url, tmp_path) -> Iterator:
    """Starts gunicorn on the test database with a small login limit; returns its port."""
    with ExitStack() as servers:

        def start(workers: int) -> int:
            settings = development_settings(
                database_url,
                tmp_path,
                RATELIMIT_STORAGE_URI="database://",
                RATE_LIMIT_LOGIN=f"{LIMIT} per minute",
                WEB_CONCURRENCY=str(workers),
            )
            return servers.enter_context(gunicorn_serving(settings))

        yield start


@pytest.mark.processes
def test_two_instances_share_one_count(serve):
    """Two app processes on two ports, asked in turn: the limit holds for both together
    (with memory:// each would let LIMIT through)."""
    ports = [serve(workers=1), serve(workers=1)]
    answers = [login(ports[number % 2]) for number in range(LIMIT + 2)]
    assert 429 not in answers[:LIMIT], answers
    assert answers[LIMIT:] == [429, 429], answers


@pytest.mark.processes
def test_two_workers_share_one_count(serve):
    port = serve(workers=2)
    answers = [login(port) for _ in range(3 * LIMIT)]
    assert 429 not in answers[:LIMIT], answers
    assert set(answers[LIMIT:]) == {429}, answers


def test_a_key_of_any_length_is_counted(storage):
    """A limit's key holds what the client sent (a fuzzed 255-character email made the
    key overflow its column: a 500 on PostgreSQL)."""
    key = "LIMITER/email:" + "0" * 5000 + "/login"
    assert [storage.incr(key, 60) for _ in range(2)] == [1, 2]
    assert storage.get(key) == 2
    storage.clear(key)
    assert storage.get(key) == 0


@pytest.fixture
def database_limits_app(database_url, tmp_path):
    from tests.conftest import make_test_app

    return make_test_app(database_url, tmp_path, RATELIMIT_STORAGE_URI="database://")


@pytest.mark.parametrize(
    "path", ["/api/auth/login", "/api/auth/forgotPassword", "/api/auth/resendConfirmationEmail"]
)
def test_a_long_email_on_a_limited_route_is_no_server_error(app, database_limits_app, path):
    """The fixed example of the fuzz finding: a 255-character email on the routes limited
    per email, with the limits counted in the database."""
    body = {"email": "0" * 255, "password": "not-the-password"}
    with database_limits_app.app_context():
        response = database_limits_app.test_client().post(path, json=body)
    assert response.status_code < 500, response.get_data(as_text=True)


@pytest.mark.processes  # an outage of a real server's dependency: CI runs it
@pytest.mark.parametrize("away", ["refusing", "silent"])
def test_a_redis_that_holds_the_limits_and_is_away_is_503_and_unready(app, database_url, away):
    """RATELIMIT_STORAGE_URI names a Redis that refuses connections, or accepts them and
    never answers: a limited request is 503 `rate_limits_unavailable` with Retry-After
    (not a 500, not served uncounted, no worker held), readiness says so; liveness stays."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)  # accepts (the kernel does), never reads or answers
    port_of_redis = silent.getsockname()[1] if away == "silent" else free_port()
    settings = {
        "DATABASE_URL": database_url,
        "APP_ENV": "testing",
        "RATELIMIT_STORAGE_URI": f"redis://127.0.0.1:{port_of_redis}/0",
        "RATELIMIT_STORE_TIMEOUT_SECONDS": "0.5",
        "ACCESS_LOG": "off",
    }
    with silent, gunicorn_serving(settings) as port:
        body = json.dumps({"email": "nobody@example.com", "password": "x"}).encode()
        status, headers, problem = answer(port, "/api/auth/login", body)
        assert status == 503, problem
        assert problem["code"] == "rate_limits_unavailable"
        assert problem["title"] == "Service Unavailable"
        assert headers["Retry-After"] == "5"
        status, headers, problem = answer(port, "/readyz")
        assert (status, problem["code"]) == (503, "rate_limits_unavailable")
        assert headers["Retry-After"] == "5"
        assert problem["dependencies"]["rateLimits"]["up"] is False
        assert problem["dependencies"]["database"]["up"] is True
        assert answer(port, "/healthz")[0] == 200
