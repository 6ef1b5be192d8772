"""Every metric the service exports (Prometheus, `GET /metrics`), defined in this one
module so an operator reads one list; and the WSGI middleware that counts requests.

Under gunicorn each worker is a process, so gunicorn.conf.py sets PROMETHEUS_MULTIPROC_DIR
before the workers start: each process writes its values to files there and a scrape adds
them up. A process without the variable (tests, `flask run`, `flask worker`) counts in
memory. Labels are bounded: a route is its template (never the id) or `unmatched`, a status
its class (`2xx`), an unusual method `other`; no label carries an id, a code or a ticket.
"""

from __future__ import annotations

import contextlib
import os
import struct
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric

from app.platform.logs import ROUTE_KEY
from app.platform.version import service_version

# Read when prometheus_client is first imported, as prometheus_client itself does: the
# mode of every metric below is fixed then.
MULTIPROCESS_DIR = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None

# The `*_created` series (when each labelled series first appeared) are left out: the
# multiprocess collector has none, and one output in both modes is simpler to read.
disable_created_metrics()

# A request's route is what the access log is told (app.platform.logs.note_for_access_log,
# under ROUTE_KEY in the WSGI environ): the matched rule's template, None for no match.
UNMATCHED = "unmatched"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

# --- requests (RequestMetrics) -------------------------------------------------------------

HTTP_REQUESTS = Counter(
    "http_requests_total",
    "Requests answered by the app, by route template, method and status class.",
    ["route", "method", "status"],
)
HTTP_DURATION = Histogram(
    "http_request_duration_seconds",
    "Time from the request reaching the app to its response being ready (the body of a "
    "streamed or file response is sent after).",
    ["route", "method"],
    # Up to the worker timeout (GUNICORN_TIMEOUT, 30 s).
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
HTTP_UNEXPECTED = Counter(
    "http_unexpected_errors_total",
    "500 answers (an unexpected failure, tracked under a ticket), by route template.",
    ["route"],
)
RATE_LIMIT_REFUSALS = Counter(
    "rate_limit_refusals_total",
    "429 answers (a rate limit or a budget, the guess budget's included), by route template.",
    ["route"],
)

# --- dependencies (app.platform.dependencies) -----------------------------------------------

# The last check of each dependency (app.platform.dependencies), by this instance's
# processes: the most recent of the live ones.
DEPENDENCY_UP = Gauge(
    "location_notes_dependency_up",
    "Whether the dependency answered its last check (1) or not (0).",
    ["dependency"],
    multiprocess_mode="livemostrecent",
)
DEPENDENCY_CHECK_SECONDS = Gauge(
    "location_notes_dependency_check_seconds",
    "How long the dependency's last check took.",
    ["dependency"],
    multiprocess_mode="livemostrecent",
)
# The read replica's lag as the process last measured it (app.platform.database.replica),
# by the primary's WAL positions: +Inf while it is not measured (unreachable counts as too far).
REPLICA_LAG_SECONDS = Gauge(
    "location_notes_replica_lag_seconds",
    "How far the read replica is behind the primary at most, by WAL positions, at the last "
    "measure; the age of the oldest sample when it reached none; +Inf when not measured.",
    multiprocess_mode="livemostrecent",
)

# --- the database pool (app.platform.database.measure_pool) ---------------------------------

DB_POOL_IN_USE = Gauge(
    "db_pool_in_use",
    "Pooled database connections checked out now (summed over live worker processes).",
    multiprocess_mode="livesum",
)
DB_POOL_CHECKOUT_WAIT = Histogram(
    "db_pool_checkout_wait_seconds",
    "Time to get a pooled connection: waiting for a free one, opening one, its idle ping.",
    # Up to DATABASE_POOL_TIMEOUT_SECONDS (5 s), after which the request is 503.
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)

# --- areas ----------------------------------------------------------------------------------

GUESS_BUDGET_REFUSALS = Counter(
    "guess_budget_refusals_total",
    "Requests refused over the secret-code guess budget, by whose budget was spent "
    "(address, network, account, account_network).",
    ["scope"],
)
SECRET_GUESS_MISSES = Counter(
    "secret_guess_misses_total",
    "Secret code misses counted against a client's guess budget.",
)
SECRET_GUESS_ALARMS = Counter(
    "secret_guess_alarms_total",
    "Times misses across all clients reached SECRET_GUESS_ALARM_MISSES in one window.",
)
IMAGE_PIPELINE = Histogram(
    "image_pipeline_seconds",
    "Time an upload spends in the image pipeline, by stage: `process` (screen, decode, "
    "resize, encode the variants), `store` (write the variant files).",
    ["stage"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
# Counted by whichever process runs a job: `flask worker` serves them on its own listener
# (WORKER_METRICS_BIND, app.platform.jobs.metrics), a web process only for jobs it ran
# itself (tests' run_due).
JOBS_RUN = Counter("jobs_run_total", "Job runs started, by kind.", ["kind"])
JOBS_DONE = Counter("jobs_done_total", "Jobs run to success, by kind.", ["kind"])
JOBS_FAILED = Counter(
    "jobs_failed_total", "Job runs that failed (to be retried or given up), by kind.", ["kind"]
)
JOBS_RETRIED = Counter(
    "jobs_retried_total", "Failed job runs that will be tried again, by kind.", ["kind"]
)
JOBS_DEAD = Counter(
    "jobs_dead_total",
    "Jobs given up: attempts or age ran out, or the handler gave up; by kind.",
    ["kind"],
)

# --- the build (BuildInfoCollector, in every exposition) -------------------------------------


class BuildInfoCollector:
    """`location_notes_build_info{version="0.2.0"} 1`: the release of the process serving
    the scrape, made at each scrape. Not a Gauge in PROMETHEUS_MULTIPROC_DIR: gunicorn's
    master makes the app before it forks (and before it empties an operator's directory),
    and a forked worker's values start again from its own file, so a value set when the app
    is made would not be scraped. Made here it is one sample, however many workers."""

    def collect(self) -> Iterator[Metric]:
        info = GaugeMetricFamily(
            "location_notes_build_info",
            "The service's release (pyproject.toml's version) as a label; always 1.",
            labels=["version"],
        )
        info.add_metric([service_version()], 1)
        yield info


def value(name: str, **labels: str) -> float:
    """This process's value of a sample (`jobs_dead_total`, with its labels), 0 before
    the first count: for tests and the command line."""
    return REGISTRY.get_sample_value(name, labels) or 0.0


# --- the exposition ---------------------------------------------------------------------------


class _Everything:
    """The default registry as one collector (the process's own metrics, single-process)."""

    def collect(self) -> Iterable[Metric]:
        return REGISTRY.collect()


class BacklogReading(Protocol):
    """What app.platform.jobs.backlog reads (that module counts here, so is not imported)."""

    @property
    def waiting(self) -> int: ...
    @property
    def oldest_waiting_seconds(self) -> float | None: ...
    @property
    def dead(self) -> int: ...
    @property
    def lanes(self) -> Mapping[str, LaneReading]: ...


class LaneReading(Protocol):
    @property
    def waiting(self) -> int: ...
    @property
    def oldest_waiting_seconds(self) -> float | None: ...


class BacklogCollector:
    """The jobs' backlog, read from the database when scraped (`read`, under a deadline;
    None when it could not be read): one reading per scrape, by the process serving it,
    however many workers there are."""

    def __init__(self, read: Callable[[], BacklogReading | None]) -> None:
        self.read = read

    def collect(self) -> Iterator[Metric]:
        backlog = self.read()
        yield GaugeMetricFamily(
            "jobs_backlog_up",
            "1 when this scrape read the jobs' backlog from the database, else 0.",
            value=0 if backlog is None else 1,
        )
        if backlog is None:
            return
        yield GaugeMetricFamily(
            "jobs_waiting", "Jobs due and not being run.", value=backlog.waiting
        )
        yield GaugeMetricFamily(
            "jobs_oldest_waiting_seconds",
            "How long the oldest job due and not being run has waited (0: none waits).",
            value=backlog.oldest_waiting_seconds or 0.0,
        )
        yield GaugeMetricFamily(
            "jobs_dead", "Jobs given up, kept for inspection.", value=backlog.dead
        )
        waiting = GaugeMetricFamily(
            "jobs_lane_waiting", "Jobs due and not being run, by lane.", labels=["lane"]
        )
        oldest = GaugeMetricFamily(
            "jobs_lane_oldest_waiting_seconds",
            "How long the oldest job due and not being run in a lane has waited (0: none).",
            labels=["lane"],
        )
        for lane, reading in backlog.lanes.items():
            waiting.add_metric([lane], reading.waiting)
            oldest.add_metric([lane], reading.oldest_waiting_seconds or 0.0)
        yield waiting
        yield oldest


def exposition(*collectors: Any) -> bytes:
    """The text a scrape reads: every process's metrics (added up under gunicorn), the
    build info, then `collectors` (read once, here)."""
    registry = CollectorRegistry(auto_describe=False)
    if MULTIPROCESS_DIR:
        multiprocess.MultiProcessCollector(registry, path=MULTIPROCESS_DIR)
    else:
        registry.register(_Everything())  # type: ignore[arg-type]
    registry.register(BuildInfoCollector())
    for collector in collectors:
        registry.register(collector)
    # A worker starting this instant has created its file and not yet written its header:
    # prometheus_client cannot read it (struct.error). Read again; it is written at once.
    for _ in range(SCRAPE_TRIES - 1):
        with contextlib.suppress(struct.error):
            return generate_latest(registry)
        time.sleep(0.01)
    return generate_latest(registry)


SCRAPE_TRIES = 5


# --- requests ---------------------------------------------------------------------------------


def status_class(status: int) -> str:
    return f"{status // 100}xx" if 100 <= status <= 599 else "other"


class _Children:
    """Labelled children kept by their labels: `labels()` checks and locks on every call,
    a dict read does not (this runs on every request)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[tuple[str, str, str], tuple[Any, Any]] = {}

    def of(self, route: str, method: str, status: str) -> tuple[Any, Any]:
        key = (route, method, status)
        found = self._known.get(key)
        if found is None:
            with self._lock:
                found = self._known[key] = (
                    HTTP_REQUESTS.labels(route=route, method=method, status=status),
                    HTTP_DURATION.labels(route=route, method=method),
                )
        return found


_children = _Children()


def count_request(environ: dict[str, Any], status: int, seconds: float) -> None:
    """Count one answered request: its route's template from what the app told the access
    log (never the path), its method if a usual one, its status class."""
    route = environ.get(ROUTE_KEY) or UNMATCHED
    method = environ.get("REQUEST_METHOD", "")
    method = method if method in METHODS else "other"
    requests, duration = _children.of(route, method, status_class(status))
    requests.inc()
    duration.observe(seconds)
    if status == 500:
        HTTP_UNEXPECTED.labels(route=route).inc()
    elif status == 429:
        RATE_LIMIT_REFUSALS.labels(route=route).inc()


class RequestMetrics:
    """WSGI middleware around the Flask app: each request counted and timed once its
    response is ready (or its exception escapes the app: a 500)."""

    def __init__(self, wsgi_app: Callable[..., Any]) -> None:
        self.wsgi_app = wsgi_app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        started = time.perf_counter()
        answered: list[int] = []

        def recording_start_response(status: str, *args: Any) -> Any:
            answered[:] = [int(status.split(" ", 1)[0])]
            return start_response(status, *args)

        try:
            body = self.wsgi_app(environ, recording_start_response)
        except BaseException:
            count_request(environ, 500, time.perf_counter() - started)
            raise
        count_request(environ, answered[0] if answered else 500, time.perf_counter() - started)
        return body
