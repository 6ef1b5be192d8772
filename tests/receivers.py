"""Webhook receivers for the tests: a threaded HTTP server on 127.0.0.1 that records
every POST and answers as the test tells it (a status, a redirect, a slow or a huge
answer); a black hole (accepts connections, never answers) and a trickler (answers one
byte at a time); the settings that let deliveries reach them (loopback and their port,
tests only); a guard that fails any connection not to 127.0.0.1; the signature check of
the reference Standard Webhooks library (`standardwebhooks`), as a receiver runs it; and
helpers to subscribe a webhook and read its deliveries."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook

from tests.hanging_peers import BlackHole, Trickler
from tests.jobs import run_jobs

HUGE_BYTES = 8 * 1024 * 1024


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Plan:
    """How the receiver answers the next POSTs: `statuses` in turn (the last one repeats)."""

    statuses: list[int] = field(default_factory=lambda: [200])
    location: str | None = None
    delay_seconds: float = 0.0
    huge: bool = False


class Handler(BaseHTTPRequestHandler):
    server: Receiver
    protocol_version = "HTTP/1.1"  # connections kept alive, as real endpoints keep them

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        plan = self.server.plan
        with self.server.lock:
            self.server.received.append(
                Received({k.lower(): v for k, v in self.headers.items()}, body)
            )
            self.server.peers.add(self.client_address)
            status = plan.statuses.pop(0) if len(plan.statuses) > 1 else plan.statuses[0]
        if plan.delay_seconds:
            time.sleep(plan.delay_seconds)
        try:
            if plan.huge:
                self.stream_huge()
                return
            answer = b"ok" if status < 300 else b"no"
            self.send_response(status)
            if plan.location:
                self.send_header("Location", plan.location)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
        except OSError:
            pass  # the client gave up, as it should on a slow answer

    def stream_huge(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(HUGE_BYTES))
        self.end_headers()
        chunk, sent = b"x" * 65536, 0
        try:
            while sent < HUGE_BYTES:
                self.wfile.write(chunk)
                sent += len(chunk)
        except OSError:
            pass
        self.server.huge_bytes_sent.append(sent)


class Receiver(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.plan = Plan()
        self.received: list[Received] = []
        self.huge_bytes_sent: list[int] = []
        self.peers: set[tuple[str, int]] = set()  # the client ends the POSTs came from
        self.lock = threading.Lock()

    @property
    def port(self) -> int:
        return self.server_port

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture
def receiver(app) -> Iterator[Receiver]:
    """A running receiver, and the app's settings letting deliveries reach it (the app's
    settings are put back after each test)."""
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    reachable(app, server.port, 2.0)
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def reachable(app: Any, port: int, timeout_seconds: float) -> None:
    """The app's settings letting deliveries reach 127.0.0.1:`port` (put back after
    each test with the rest of the app's settings)."""
    ports = [*app.config["WEBHOOK_ALLOWED_PORTS"], port]
    app.config.update(
        WEBHOOKS_ALLOW_LOOPBACK=True,
        WEBHOOK_ALLOWED_PORTS=ports,
        WEBHOOK_TIMEOUT_SECONDS=timeout_seconds,
    )


@pytest.fixture
def black_hole(app: Any) -> Iterator[BlackHole]:
    """A black hole that deliveries may reach, with a one-second deadline per try."""
    hole = BlackHole()
    reachable(app, hole.port, 1.0)
    try:
        yield hole
    finally:
        hole.close()


@pytest.fixture
def trickler(app: Any) -> Iterator[Trickler]:
    """A trickler that deliveries may reach: its whole answer takes 9.6 s, a try's
    deadline is one second."""
    slow = Trickler(interval=0.2)
    reachable(app, slow.port, 1.0)
    try:
        yield slow
    finally:
        slow.close()


@pytest.fixture
def only_loopback(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Fail (and record) any connection attempt to an address other than 127.0.0.1, so a
    regression can never send test traffic elsewhere."""
    refused: list[Any] = []
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else address
        if self.family in (socket.AF_INET, socket.AF_INET6) and host != "127.0.0.1":
            refused.append(address)
            raise AssertionError(f"a connection to {address!r} was attempted")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    return refused


def verify(secret: str, received: Received) -> Any:
    """Check a received POST with the reference library, as a receiver would (any of the
    space-separated signatures may match; the timestamp must be recent); its payload."""
    return Webhook(secret).verify(received.body, dict(received.headers))


def subscribe(api: Any, user: Any, url: str, **body: Any) -> dict[str, Any]:
    response = api.as_user(user).post("/api/webhooks", json={"url": url, **body})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def deliveries(api: Any, user: Any, webhook_id: str) -> list[dict[str, Any]]:
    response = api.as_user(user).get(f"/api/webhooks/{webhook_id}/deliveries")
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def settle(app: Any) -> None:
    run_jobs(app)
