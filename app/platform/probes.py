"""The operator's routes: `GET /healthz` (the process is up), `GET /readyz` (it can serve)
and `GET /metrics`, Prometheus's text (app.platform.metrics lists what it holds). None is
in the OpenAPI document. /metrics is served on one of two doors, and nowhere else:
with METRICS_TOKEN, on the service's own address with that bearer token (else 401); with
METRICS_BIND, without a token to a request that arrived at that listener (the socket's own
address, not a header a client chooses), which answers /metrics and the health probes only
so it never becomes a second door that skips the proxy. With neither, /metrics is a 404.
"""

from __future__ import annotations

import hmac
import ipaddress
import time
from collections.abc import Mapping
from contextlib import suppress
from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify, request
from prometheus_client import CONTENT_TYPE_LATEST

from app.error_codes import Code
from app.errors import problem
from app.platform import jobs, metrics
from app.platform.database import (
    RETRY_AFTER_SECONDS,
    check_database,
    note_failure,
    replica_report,
)
from app.platform.dependencies import check_registered
from app.platform.dependencies import record as record_dependency
from app.platform.ratelimit_storage import STORE_RETRY_AFTER_SECONDS, store_answers

probes = Blueprint("probes", __name__)


def _session() -> Any:
    """The app's database session (Flask-SQLAlchemy's, as it registers itself on the app):
    the platform does not import app.extensions, which builds on it."""
    return current_app.extensions["sqlalchemy"].session


# What a request that arrived at METRICS_BIND may ask for.
METRICS_LISTENER_PATHS = frozenset({"/metrics", "/healthz", "/readyz"})


@probes.get("/healthz")
def healthz() -> Response:
    """The process is up."""
    return jsonify(status="ok")


BEHIND_WARNING_EVERY_SECONDS = 60.0  # probes come every few seconds: one line a minute
_warned_behind = [float("-inf")]


@probes.get("/readyz")
def readyz() -> Response:
    """The process can serve: the database answers, and Redis when it holds the rate
    limits (503 `rate_limits_unavailable` otherwise: every limited route would be). Every
    dependency is listed under `dependencies`, those the areas registered (the object
    store) with what waits on them: they report, they do not make the process unready. Also
    the background work's backlog: jobs due and waiting, how long the oldest has waited,
    dead jobs, and `behind` once that wait passes JOBS_BACKLOG_ALERT_SECONDS (no worker
    runs, or too few). A backlog does not make the web process unready: it reports, the
    operator's monitor alerts."""
    started = time.monotonic()
    try:
        waiting = check_database(
            _session(), current_app.config, read=lambda: jobs.backlog(_session())
        )
    except Exception as error:  # any driver error means "not ready"
        down = record_dependency("database", False, time.monotonic() - started)
        note_failure(error)
        with suppress(Exception):  # the connection may have died with the database
            _session().rollback()
        current_app.logger.warning("readiness check: database unreachable: %s", error)
        return problem(
            503,
            "The database is not reachable.",
            code=Code.DATABASE_UNAVAILABLE,
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
            dependencies={"database": down},
        )
    dependencies = {"database": record_dependency("database", True, time.monotonic() - started)}
    # The app's limiter (Flask-Limiter keeps itself there; the platform imports no extension).
    started = time.monotonic()
    limits_up = all(
        store_answers(limiter.storage) for limiter in current_app.extensions.get("limiter", ())
    )
    dependencies["rateLimits"] = record_dependency(
        "rateLimits", limits_up, time.monotonic() - started
    )
    dependencies.update(check_registered(current_app))  # reported; the rest still serves
    # The read replica reports too: while it lags or is away the primary serves its reads.
    started = time.monotonic()
    replica = replica_report(current_app)
    if replica is not None:
        answered = replica["lagSeconds"] is not None
        dependencies["replica"] = record_dependency("replica", answered, time.monotonic() - started)
    if not limits_up:
        # The code every limited request gets meanwhile; the warning is theirs to log.
        return problem(
            503,
            "The rate limits' store is not reachable: every limited route answers 503.",
            code=Code.RATE_LIMITS_UNAVAILABLE,
            headers={"Retry-After": str(STORE_RETRY_AFTER_SECONDS)},
            dependencies=dependencies,
        )
    oldest = waiting.oldest_waiting_seconds
    behind = oldest is not None and oldest > float(current_app.config["JOBS_BACKLOG_ALERT_SECONDS"])
    if behind and time.monotonic() - _warned_behind[0] > BEHIND_WARNING_EVERY_SECONDS:
        _warned_behind[0] = time.monotonic()
        current_app.logger.warning("background jobs are behind: the oldest has waited %ds", oldest)
    extra = {}
    if replica is not None:
        extra["replica"] = replica
    return jsonify(
        status="ready",
        dependencies=dependencies,
        **extra,
        jobs={
            "waiting": waiting.waiting,
            "oldestWaitingSeconds": round(oldest, 3) if oldest is not None else None,
            "dead": waiting.dead,
            "behind": behind,
        },
    )


@probes.get("/metrics")
def metrics_text() -> Response:
    """Every metric of the service, in Prometheus's text format."""
    refusal = _refusal(current_app.config)
    if refusal is not None:
        return refusal
    body = metrics.exposition(metrics.BacklogCollector(read_backlog))
    return Response(body, content_type=CONTENT_TYPE_LATEST, headers={"Cache-Control": "no-store"})


def _refusal(config: Mapping[str, Any]) -> Response | None:
    if arrived_at(request.environ, str(config.get("METRICS_BIND") or "")):
        return None
    token = str(config.get("METRICS_TOKEN") or "")
    if not token:
        # Not served on this address: the same answer as a path nothing serves.
        return problem(404, f"Nothing is served at {request.path}.", code=Code.NOT_FOUND)
    scheme, _, sent = request.headers.get("Authorization", "").partition(" ")
    challenge = {"WWW-Authenticate": 'Bearer realm="metrics"'}
    if scheme.lower() != "bearer" or not sent.strip():
        detail = "The metrics need the bearer token of METRICS_TOKEN; none was sent."
        return problem(401, detail, code=Code.AUTHENTICATION_REQUIRED, headers=challenge)
    if not hmac.compare_digest(sent.strip().encode(), token.encode()):
        detail = "The bearer token is not the metrics token."
        return problem(401, detail, code=Code.INVALID_TOKEN, headers=challenge)
    return None


def read_backlog() -> jobs.Backlog | None:
    """The jobs' backlog under the readiness check's deadline; None when the database
    did not answer in time (the scrape still answers, with `jobs_backlog_up` 0)."""
    try:
        return check_database(_session(), current_app.config, read=lambda: jobs.backlog(_session()))
    except Exception as error:  # any driver error: report what the files hold
        with suppress(Exception):  # the connection may have died with the database
            _session().rollback()
        current_app.logger.warning("metrics: the jobs' backlog was not read: %s", error)
        return None


def arrived_at(environ: Mapping[str, Any], bind: str) -> bool:
    """Whether the request came in through the listener `bind` (`HOST:PORT`, `[::1]:PORT`
    or `unix:PATH`), by the address the connection's socket was accepted on. Outside
    gunicorn (tests, `flask run`) there is no such socket: never."""
    sock = environ.get("gunicorn.socket")
    if not bind or sock is None:
        return False
    try:
        local = sock.getsockname()
    except OSError:
        return False
    if bind.startswith("unix:"):
        return bool(local == bind.removeprefix("unix:"))
    host, _, port = bind.rpartition(":")
    if isinstance(local, str) or str(local[1]) != port:
        return False
    # gunicorn.conf.py refuses METRICS_BIND on the service's own port, so the port tells
    # the listeners apart; a literal address must match as well.
    with suppress(ValueError):
        wanted = ipaddress.ip_address(host.strip("[]"))
        if not wanted.is_unspecified:
            return _same_address(str(local[0]), wanted)
    return True


def _same_address(local: str, wanted: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    address = ipaddress.ip_address(local.split("%")[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address == wanted


def install_probes(app: Flask) -> None:
    """The health probes, the /metrics route, and the METRICS_BIND listener's narrow door."""
    app.register_blueprint(probes)

    @app.before_request
    def metrics_listener_serves_metrics_only() -> Response | None:
        bind = str(app.config.get("METRICS_BIND") or "")
        if not bind or request.path in METRICS_LISTENER_PATHS:
            return None
        if not arrived_at(request.environ, bind):
            return None
        detail = f"Nothing is served at {request.path} on the metrics address."
        return problem(404, detail, code=Code.NOT_FOUND)
