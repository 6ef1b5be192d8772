"""The worker's own metrics listener (WORKER_METRICS_BIND, `host:port`): `GET /metrics`
with the jobs run, failed, retried and dead per kind (counted in this process) and each
lane's backlog (read from the database at each scrape, under the readiness deadline). A
worker may run on a machine with no web instance, so it answers for itself; like the web's
METRICS_BIND, it has no token and belongs on an address only the scraper reaches.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from contextlib import suppress
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from flask import Flask
from prometheus_client import CONTENT_TYPE_LATEST

from app.platform import metrics
from app.platform.database import check_database
from app.platform.jobs.queue import Backlog, app_session, backlog

log = logging.getLogger(__name__)


def parse_bind(bind: str) -> tuple[str, int]:
    """`host:port` or `[v6]:port` as (host, port); a ValueError names what is wrong."""
    host, separator, port = bind.strip().rpartition(":")
    if not separator or not port.isdigit() or not host:
        raise ValueError(f"WORKER_METRICS_BIND must be host:port, not {bind!r}")
    return host.strip("[]"), int(port)


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return  # a scrape every few seconds is not news


def read_backlog(app: Flask) -> Backlog | None:
    """The backlog under the readiness check's deadline; None when the database did not
    answer (the scrape still answers, with `jobs_backlog_up` 0)."""
    with app.app_context():
        session = app_session()
        try:
            return check_database(session, app.config, read=lambda: backlog(session))
        except Exception as error:  # any driver error: report the counters alone
            log.warning("worker metrics: the jobs' backlog was not read: %s", error)
            return None
        finally:
            with suppress(Exception):
                session.remove()


def metrics_app(app: Flask) -> Callable[..., Iterable[bytes]]:
    def answer(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != "/metrics" or environ["REQUEST_METHOD"] not in {
            "GET",
            "HEAD",
        }:
            start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
            return [b"Only GET /metrics is served here.\n"]
        body = metrics.exposition(metrics.BacklogCollector(lambda: read_backlog(app)))
        start_response(
            "200 OK",
            [
                ("Content-Type", CONTENT_TYPE_LATEST),
                ("Content-Length", str(len(body))),
                ("Cache-Control", "no-store"),
            ],
        )
        return [body] if environ["REQUEST_METHOD"] == "GET" else []

    return answer


def serve_metrics(app: Flask, bind: str) -> WSGIServer:
    """Listen on `bind` in a thread of this process until `shutdown()`; the server."""
    host, port = parse_bind(bind)
    server = make_server(host, port, metrics_app(app), handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, name="worker-metrics", daemon=True).start()
    log.info("worker metrics on http://%s/metrics", bind)
    return server
