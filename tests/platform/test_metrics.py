"""Metrics (app.platform.metrics, GET /metrics in app.platform.probes): what is counted, under
which bounded labels, who may read them, and the Grafana dashboard that reads them.

Counters only grow and are shared by every test of a process: each test compares the
values before and after what it does."""

from __future__ import annotations

import json
import re
import tomllib
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.extensions import db
from app.platform import jobs
from app.platform.jobs import JobKind
from app.platform.metrics import value
from app.platform.probes import arrived_at
from app.platform.startup_checks import production_problems
from tests.conftest import assert_problem
from tests.factories import make_note, make_trackable, make_user
from tests.jobs import job_kinds_added
from tests.uploads import upload

TOKEN = "m" * 40
BEARER = {"Authorization": f"Bearer {TOKEN}"}
DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "location-notes.json"
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
SECRET = "LN7QK4M2XT"
PUBLIC = "LN-7QK4M2"


@pytest.fixture
def token(app):
    app.config["METRICS_TOKEN"] = TOKEN  # the shared app's settings are restored after
    return TOKEN


def scrape(api) -> str:
    response = api.get("/metrics", headers=BEARER)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_data(as_text=True)


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def requests_of(route: str, method: str = "GET", status: str = "2xx") -> float:
    return value("http_requests_total", route=route, method=method, status=status)


# --- counting -----------------------------------------------------------------------------


def test_requests_are_counted_by_route_template_method_and_status_class(api):
    before = requests_of("/healthz")
    missing_before = requests_of("unmatched", status="4xx")
    timed_before = value("http_request_duration_seconds_count", route="/healthz", method="GET")
    for _ in range(3):
        assert api.get("/healthz").status_code == 200
    assert api.get("/api/nothing-here").status_code == 404
    assert requests_of("/healthz") == before + 3
    assert requests_of("unmatched", status="4xx") == missing_before + 1
    timed = value("http_request_duration_seconds_count", route="/healthz", method="GET")
    assert timed == timed_before + 3


def test_an_unusual_method_is_counted_as_other(api):
    before = requests_of("unmatched", method="other", status="4xx")
    assert api.open("BREW", "/healthz").status_code == 405
    assert requests_of("unmatched", method="other", status="4xx") == before + 1


def test_ids_and_codes_in_paths_never_reach_a_label(app, api, token):
    """A path's ids and codes become the route's template; the metrics text names none."""
    note_id = make_note(make_user("olga")).id
    make_trackable(make_user("piet"), public_code=PUBLIC, secret_code=SECRET)
    db.session.commit()
    absent = uuid.uuid4()
    # The counters are the process's: other tests' apps (with routes of their own) may have
    # counted before, so only the labels these visits add are checked against this app.
    labelled_before = {dict(labels).get("route") for _, labels in samples(scrape(api))}
    visits = [
        f"/api/public/notes/{note_id}",
        f"/api/public/notes/{absent}",
        f"/trackable/{SECRET}",  # the entry page: redirects by the secret
        f"/en/trackables/{SECRET}",  # a secret typed where a public code belongs: 404
        f"/api/{SECRET}/{absent}",  # nothing matches
    ]
    for path in visits:
        api.get(path)
    text = scrape(api)
    for secret in (str(note_id), str(absent), SECRET, SECRET.lower(), PUBLIC):
        assert secret not in text
    routes = {dict(labels).get("route") for _, labels in samples(text)} - {None}
    assert "/api/public/notes/<uuid:note_id>" in routes
    assert "/trackable/<path:code>" in routes
    assert "unmatched" in routes
    for route in routes - labelled_before:  # every label is a rule of the app, or `unmatched`
        assert route == "unmatched" or route in {r.rule for r in app.url_map.iter_rules()}


def test_an_unexpected_error_counts_a_500_by_route_and_never_its_ticket(
    app, api, token, monkeypatch
):
    def broken() -> None:
        raise RuntimeError("the probe broke")

    monkeypatch.setitem(app.view_functions, "probes.healthz", broken)
    before = value("http_unexpected_errors_total", route="/healthz")
    failed_before = requests_of("/healthz", status="5xx")
    response = api.get("/healthz")
    ticket = assert_problem(response, 500, code="internal_error")["ticketNumber"]
    assert value("http_unexpected_errors_total", route="/healthz") == before + 1
    assert requests_of("/healthz", status="5xx") == failed_before + 1
    assert ticket not in scrape(api)


def test_guess_budget_refusals_count_by_scope_and_as_rate_limit_refusals(app, api):
    app.config["SECRET_GUESS_LIMIT"] = 1
    lookup = "/api/trackables/lookup"
    guesses_before = value("guess_budget_refusals_total", scope="address")
    refusals_before = value("rate_limit_refusals_total", route=lookup)
    misses_before = value("secret_guess_misses_total")
    environ = {"REMOTE_ADDR": "192.0.2.77"}
    assert api.post(lookup, json={"code": "LN-Z00001"}, environ_base=environ).status_code == 200
    refused = api.post(lookup, json={"code": "LN-Z00002"}, environ_base=environ)
    assert_problem(refused, 429, code="secret_guess_limit_reached")
    assert value("guess_budget_refusals_total", scope="address") == guesses_before + 1
    assert value("rate_limit_refusals_total", route=lookup) == refusals_before + 1
    assert value("secret_guess_misses_total") == misses_before + 1
    assert requests_of(lookup, method="POST", status="4xx") >= 1


def test_the_pool_counts_connections_in_use_and_times_each_checkout(app):
    db.session.remove()  # the test's own session holds no connection
    in_use = value("db_pool_in_use")
    checkouts = value("db_pool_checkout_wait_seconds_count")
    with db.engine.connect() as first, db.engine.connect() as second:
        assert value("db_pool_in_use") == in_use + 2
        first.exec_driver_sql("SELECT 1")
        second.exec_driver_sql("SELECT 1")
    assert value("db_pool_in_use") == in_use
    assert value("db_pool_checkout_wait_seconds_count") == checkouts + 2


def test_the_pool_stays_measured_after_it_is_disposed(app):
    db.engine.dispose()  # a new pool of the same (timed) class
    checkouts = value("db_pool_checkout_wait_seconds_count")
    with db.engine.connect() as connection:
        connection.exec_driver_sql("SELECT 1")
    assert value("db_pool_checkout_wait_seconds_count") == checkouts + 1


def test_an_upload_times_each_stage_of_the_image_pipeline(api):
    stages = ("process", "store")
    before = {stage: value("image_pipeline_seconds_count", stage=stage) for stage in stages}
    response = upload(api.as_user(make_user("ines")), "/api/images/profiles")
    assert response.status_code == 201, response.get_json()
    for stage in stages:
        assert value("image_pipeline_seconds_count", stage=stage) == before[stage] + 1


def test_the_jobs_backlog_is_read_when_scraped(app, api, token):
    with job_kinds_added(app, JobKind("test.metrics", lambda task: None)):
        jobs.enqueue("test.metrics", {}, delay=timedelta(seconds=-90))  # due 90 s ago
        jobs.enqueue("test.metrics", {}, delay=timedelta(hours=1))  # not due: not waiting
        db.session.commit()
        found = samples(scrape(api))
    assert found[("jobs_backlog_up", frozenset())] == 1
    assert found[("jobs_waiting", frozenset())] == 1
    assert 90 <= found[("jobs_oldest_waiting_seconds", frozenset())] < 600
    assert found[("jobs_dead", frozenset())] == 0


def test_a_backlog_the_database_does_not_give_leaves_the_rest_of_the_scrape(
    api, token, monkeypatch
):
    def unreachable(session: Any) -> None:
        raise TimeoutError("no answer in time")

    monkeypatch.setattr(jobs, "backlog", unreachable)
    found = samples(scrape(api))
    assert found[("jobs_backlog_up", frozenset())] == 0
    assert ("jobs_waiting", frozenset()) not in found
    assert any(name == "http_requests_total" for name, _ in found)


def test_the_scrape_names_the_release_in_one_build_info_sample(api, token):
    release = tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    text = scrape(api)
    assert "# TYPE location_notes_build_info gauge" in text
    assert f'location_notes_build_info{{version="{release}"}} 1.0' in text.splitlines()
    found = [labels for name, labels in samples(text) if name == "location_notes_build_info"]
    assert found == [frozenset({("version", release)})]


# --- who may read them ----------------------------------------------------------------------


def test_without_a_token_or_metrics_address_metrics_are_not_served(api):
    assert_problem(api.get("/metrics"), 404, code="not_found")
    assert_problem(api.get("/metrics", headers=BEARER), 404, code="not_found")


def test_a_missing_token_is_401(api, token):
    response = api.get("/metrics")
    assert_problem(response, 401, code="authentication_required")
    assert response.headers["WWW-Authenticate"] == 'Bearer realm="metrics"'


@pytest.mark.parametrize(
    "authorization", [f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", "Bearer wrong", f"Basic {TOKEN}"]
)
def test_a_wrong_token_is_401(api, token, authorization):
    response = api.get("/metrics", headers={"Authorization": authorization})
    assert response.status_code == 401
    assert response.mimetype == "application/problem+json"
    assert TOKEN not in response.get_data(as_text=True)


def test_the_right_token_reads_prometheus_text_never_cached(api, token):
    response = api.get("/metrics", headers=BEARER)
    assert response.status_code == 200
    assert response.mimetype == "text/plain"
    assert response.headers["Cache-Control"] == "no-store"
    assert "# TYPE http_requests_total counter" in response.get_data(as_text=True)


def test_metrics_are_not_in_the_api_document(api):
    assert "/metrics" not in api.get("/api/openapi.json").get_json()["paths"]


def test_a_short_metrics_token_is_refused_in_production():
    settings = {"METRICS_TOKEN": "short"}
    assert any("METRICS_TOKEN" in problem for problem in production_problems(settings))
    assert not any("METRICS" in p for p in production_problems({"METRICS_TOKEN": TOKEN}))


class FakeSocket:
    """The client socket gunicorn puts in the environ, accepted on `local`."""

    def __init__(self, local: Any) -> None:
        self.local = local

    def getsockname(self) -> Any:
        return self.local


@pytest.mark.parametrize(
    ("bind", "local", "expected"),
    [
        ("127.0.0.1:9100", ("127.0.0.1", 9100), True),
        ("0.0.0.0:9100", ("10.1.2.3", 9100), True),
        ("[::]:9100", ("::1", 9100, 0, 0), True),
        ("[::1]:9100", ("::1", 9100, 0, 0), True),
        ("metrics.internal:9100", ("10.1.2.3", 9100), True),
        ("127.0.0.1:9100", ("127.0.0.1", 8000), False),  # the service's listener
        ("127.0.0.1:9100", ("10.1.2.3", 9100), False),
        ("unix:/run/metrics.sock", "/run/metrics.sock", True),
        ("unix:/run/metrics.sock", ("127.0.0.1", 9100), False),
        ("", ("127.0.0.1", 9100), False),
    ],
)
def test_the_metrics_listener_is_told_by_the_socket_address(bind, local, expected):
    assert arrived_at({"gunicorn.socket": FakeSocket(local)}, bind) is expected
    assert arrived_at({}, bind) is False  # no gunicorn socket: never


def test_the_metrics_listener_needs_no_token_and_serves_nothing_else(app, api):
    app.config["METRICS_BIND"] = "127.0.0.1:9100"
    there = {"gunicorn.socket": FakeSocket(("127.0.0.1", 9100))}
    elsewhere = {"gunicorn.socket": FakeSocket(("127.0.0.1", 8000))}
    assert api.get("/metrics", environ_base=there).status_code == 200
    assert api.get("/healthz", environ_base=there).status_code == 200
    assert_problem(api.get("/api/system/status", environ_base=there), 404, code="not_found")
    assert api.get("/api/system/status", environ_base=elsewhere).status_code == 200
    assert_problem(api.get("/metrics", environ_base=elsewhere), 404, code="not_found")


# --- the dashboard ----------------------------------------------------------------------------

PROMQL_WORDS = {
    "sum", "rate", "irate", "increase", "histogram_quantile", "max", "min", "avg", "count",
    "by", "without",
}  # fmt: skip


def queried_metrics(expression: str) -> set[str]:
    """The metric names a PromQL expression reads (label matchers, groupings, ranges and
    numbers taken out first)."""
    bare = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\b(?:by|without)\s*\([^)]*\)", " ", expression)
    names = set(re.findall(r"[A-Za-z_:][A-Za-z0-9_:]*", bare))
    return names - PROMQL_WORDS


def exported_names(text: str) -> set[str]:
    names: set[str] = set()
    for family in text_string_to_metric_families(text):
        names.add(family.name)
        names.update(sample.name for sample in family.samples)
        suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum")}
        names.update(family.name + suffix for suffix in suffixes.get(family.type, ()))
    return names


def dashboard_queries() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    return [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]


def test_the_dashboard_is_grafana_json_reading_a_prometheus_source():
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] == "location-notes"
    [variable] = dashboard["templating"]["list"]
    assert (variable["type"], variable["query"]) == ("datasource", "prometheus")
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
            assert panel["targets"], panel["title"]


def test_every_metric_the_dashboard_queries_is_exported(api, token):
    exported = exported_names(scrape(api))
    queried = set().union(*(queried_metrics(expression) for expression in dashboard_queries()))
    assert queried, "the dashboard queries nothing"
    assert not queried - exported, f"not exported: {sorted(queried - exported)}"
    # The dashboard shows every family the service defines.
    defined = {
        "http_requests_total", "http_request_duration_seconds_bucket",
        "http_unexpected_errors_total", "rate_limit_refusals_total", "db_pool_in_use",
        "db_pool_checkout_wait_seconds_bucket", "jobs_waiting", "jobs_oldest_waiting_seconds",
        "guess_budget_refusals_total", "image_pipeline_seconds_bucket",
    }  # fmt: skip
    assert defined <= queried
