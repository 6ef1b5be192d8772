"""Tracing under gunicorn, as production runs it: the master makes the app and each sync
worker starts its own exporter after the fork, so spans reach the collector (here a small
OTLP/HTTP receiver), named by route and without the codes the requests carried."""

from __future__ import annotations

import contextlib
import gzip
import runpy
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.serving import gunicorn_serving

ROOT = Path(__file__).resolve().parents[2]
SECRET = "LN7QK4M2XT"


class Collector(ThreadingHTTPServer):
    """Keeps the body of every OTLP/HTTP export it is sent."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Receiver)
        self.bodies: list[tuple[str, bytes]] = []


class Receiver(BaseHTTPRequestHandler):
    server: Collector

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        self.server.bodies.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def collector() -> Iterator[Collector]:
    server = Collector()
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def span_names(bodies: list[tuple[str, bytes]]) -> dict[str, set[str]]:
    """Span names by the service name of their resource."""
    names: dict[str, set[str]] = {}
    for _path, body in bodies:
        export = ExportTraceServiceRequest.FromString(body)
        for resource_spans in export.resource_spans:
            attributes = {
                item.key: item.value.string_value for item in resource_spans.resource.attributes
            }
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    names.setdefault(attributes["service.name"], set()).add(span.name)
    return names


def test_gunicorn_makes_the_app_once_and_its_workers_fork_from_it(monkeypatch):
    """The master preloads; tracing's exporter and error reporting start in each worker
    (app.platform.forking; the test below sees the workers' spans arrive)."""
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    settings = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    assert settings["preload_app"] is True
    assert callable(settings["post_fork"])
    assert callable(settings["when_ready"])


@pytest.mark.processes
def test_spans_reach_the_collector_from_gunicorns_workers(app, database_url, collector):
    settings = {
        "APP_ENV": "testing",
        "DATABASE_URL": database_url,
        "RATELIMIT_STORAGE_URI": "memory://",
        "WEB_CONCURRENCY": "2",
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{collector.server_port}",
        "OTEL_BSP_SCHEDULE_DELAY": "100",  # milliseconds between the exporter's batches
    }
    with gunicorn_serving(settings) as port:
        for path in (f"/trackable/{SECRET}", f"/api/trackables/lookup?code={SECRET}"):
            for _ in range(4):  # both workers, most likely
                with contextlib.suppress(urllib.error.HTTPError):  # a miss's page is a 404
                    urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10).close()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            names = span_names(collector.bodies).get("location-notes", set())
            if {"GET /trackable/<path:code>", "GET /api/trackables/lookup"} <= names:
                break
            time.sleep(0.2)
    assert {"GET /trackable/<path:code>", "GET /api/trackables/lookup"} <= names, names
    assert {path for path, _ in collector.bodies} == {"/v1/traces"}
    for _path, body in collector.bodies:
        assert SECRET.encode() not in body
        assert b"/healthz" not in body  # gunicorn_serving's probes are not traced
