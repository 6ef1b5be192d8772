"""A real Redis holding the rate limits, stopped (or frozen) and started again while
requests flow to gunicorn's two workers: never a 500; while it is away every limited
request answers 503 `rate_limits_unavailable` with Retry-After, unlimited reads still
200 and /readyz 503; once it is back each worker re-makes its connections and serves
normally within seconds, without a restart."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from app.error_codes import ERROR_CODES
from tests.serving import answer, development_settings, free_port, gunicorn_serving

pytestmark = pytest.mark.processes

STORE_TIMEOUT_SECONDS = 0.5  # a frozen Redis: each call gives up this soon
RECOVER_WITHIN = 5.0
PHASE_WITHIN = 10.0  # how long a phase may take to gather its answers
ANSWERS_PER_PHASE = 3  # per route, before the next phase begins
ROUTES = ("login", "status", "readyz")
REDIS_SERVER = shutil.which("redis-server") or "redis-server"


class RedisServer:
    """One redis-server of the test's own on a free port, without persistence."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.directory.mkdir(exist_ok=True)
        command = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no", "--dir", str(self.directory)]
        with (self.directory / "redis.log").open("ab") as log:
            self.process = subprocess.Popen(  # noqa: S603 - our own server
                command, stdout=log, stderr=subprocess.STDOUT
            )
        until(self.answers, "redis-server did not start")

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """SIGTERM, and wait until it has exited (its port closed)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # a frozen server must run to exit
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def freeze(self) -> None:
        """SIGSTOP: connections are still accepted (by the kernel), nothing is answered."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)
        until(lambda: _state(self.process) == "T", "redis-server did not stop")

    def thaw(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)
        until(self.answers, "redis-server did not resume")


def _state(process: subprocess.Popen[bytes] | None) -> str:
    assert process is not None
    return Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def until(condition: Callable[[], bool], failure: str, within: float = PHASE_WITHIN) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, failure
        time.sleep(0.05)


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    if shutil.which(REDIS_SERVER) is None:
        message = "Debian's redis-server is not installed (apt-get install redis-server)"
        if os.environ.get("REQUIRE_DEPLOY_TESTS") == "1":
            pytest.fail(message)  # CI installs it
        pytest.skip(message)
    server = RedisServer(tmp_path / "redis")
    server.start()
    try:
        yield server
    finally:
        server.stop()  # nothing left running, whatever the test did


@dataclass(frozen=True)
class Answer:
    route: str
    phase: str  # the phase the request began and ended in, or "between"
    status: int
    code: str | None
    retry_after: str | None


def ask(port: int, route: str) -> tuple[int, dict, dict]:
    paths = {"login": "/api/auth/login", "status": "/api/system/status", "readyz": "/readyz"}
    body = None
    if route == "login":
        body = json.dumps({"email": "nobody@example.com", "password": "not-it"}).encode()
    return answer(port, paths[route], body)


@dataclass
class Load:
    """A client thread per route, each asking again and again and recording every answer
    with the phase it began and ended in."""

    port: int
    phase: str = "up"
    answers: list[Answer] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)

    def run(self, route: str) -> None:
        while not self.stopping.is_set():
            began = self.phase
            try:
                status, headers, body = ask(self.port, route)
            except Exception as error:  # no answer at all: recorded as the worst
                status, headers, body = 599, {}, {"code": repr(error)}
            phase = began if self.phase == began else "between"
            code = body.get("code") if isinstance(body, dict) else None
            self.answers.append(Answer(route, phase, status, code, headers.get("Retry-After")))

    def in_phase(self, phase: str, route: str) -> list[Answer]:
        return [a for a in self.answers if a.phase == phase and a.route == route]

    def gathered(self, phase: str) -> bool:
        return all(len(self.in_phase(phase, route)) >= ANSWERS_PER_PHASE for route in ROUTES)

    def counts(self) -> dict[str, dict[str, dict[int, int]]]:
        """Statuses by phase and route, for the assertion messages."""
        found: dict[str, dict[str, Counter[int]]] = {}
        for a in self.answers:
            found.setdefault(a.phase, {}).setdefault(a.route, Counter())[a.status] += 1
        return {p: {r: dict(c) for r, c in routes.items()} for p, routes in found.items()}


@pytest.mark.parametrize("away", ["stopped", "frozen"])
def test_redis_lost_and_back_under_load_is_503_then_served_again_without_restart(
    app, database_url, tmp_path, redis_server, away
):
    """Up, away (SIGTERM, or SIGSTOP: connections accepted, nothing answered), back on the
    same port, with a login, a status read and /readyz asked all along; under gunicorn's two
    workers, since each keeps its own connections to Redis. `app` makes the tables (and
    empties them after)."""
    settings = development_settings(
        database_url,
        tmp_path,
        RATELIMIT_STORAGE_URI=f"redis://127.0.0.1:{redis_server.port}/0",
        RATELIMIT_STORE_TIMEOUT_SECONDS=str(STORE_TIMEOUT_SECONDS),
        RATE_LIMIT_LOGIN="100000 per minute",  # the load itself must not be limited
        WEB_CONCURRENCY="2",
    )
    log = tmp_path / "gunicorn.log"  # the tracebacks of a failure, if any
    with log.open("wb") as output, gunicorn_serving(settings, output=output) as port:
        load = Load(port)
        clients = [threading.Thread(target=load.run, args=(route,)) for route in ROUTES]
        for thread in clients:
            thread.start()
        try:
            until(lambda: load.gathered("up"), "no answers with Redis up")
            load.phase = "going"
            redis_server.stop() if away == "stopped" else redis_server.freeze()
            load.phase = "down"
            until(lambda: load.gathered("down"), "no answers with Redis away")
            load.phase = "coming back"
            redis_server.start() if away == "stopped" else redis_server.thaw()
            until(lambda: serves_normally(port), "not served again", within=RECOVER_WITHIN)
            load.phase = "back"
            until(lambda: load.gathered("back"), "no answers once Redis was back")
        except AssertionError as failure:
            raise AssertionError(f"{failure}; statuses so far: {load.counts()}") from failure
        finally:
            load.stopping.set()
            for thread in clients:
                thread.join(timeout=30)
    counts = load.counts()
    message = f"statuses by phase and route: {counts}; the server's log: {log}"
    assert not any(a.status >= 500 and a.status != 503 for a in load.answers), message
    for phase in ("up", "back"):
        assert {a.status for a in load.in_phase(phase, "login")} == {401}, (phase, message)
        assert {a.status for a in load.in_phase(phase, "status")} == {200}, (phase, message)
        assert {a.status for a in load.in_phase(phase, "readyz")} == {200}, (phase, message)
    assert {a.status for a in load.in_phase("down", "status")} == {200}, message
    for route in ("login", "readyz"):
        away_answers = load.in_phase("down", route)
        assert {(a.status, a.code) for a in away_answers} == {(503, "rate_limits_unavailable")}, (
            message
        )
        assert all(a.retry_after and int(a.retry_after) > 0 for a in away_answers), message
    for refused in (a for a in load.answers if a.status == 503):  # in any phase
        assert refused.code in ERROR_CODES, (refused, message)
        assert 503 in ERROR_CODES[refused.code].statuses, (refused, message)
        assert refused.retry_after, (refused, message)


def serves_normally(port: int) -> bool:
    """Readiness 200 and a sign-in answered as with Redis up, twice in a row (each may
    reach either worker)."""
    return all(ask(port, route)[0] == want for route, want in 2 * [("readyz", 200), ("login", 401)])
