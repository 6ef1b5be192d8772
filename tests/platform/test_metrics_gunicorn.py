"""Metrics under gunicorn, as production serves them: several worker processes (replaced
as they go) count into one scrape through PROMETHEUS_MULTIPROC_DIR, which each start of
the server gets fresh; /metrics on the service's address needs the token, on
METRICS_BIND it needs none and that address serves nothing else."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.serving import free_port, gunicorn_serving

TOKEN = "g" * 40
SECRET_LOOKING = "LNK7M2Q9XT"
REQUESTS = 10


def get(port: int, path: str, token: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    # A request may wait for a replaced worker to boot (the app made again: about a second
    # of CPU, several on a busy machine); this test counts requests, it does not time them.
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - our test server
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (found.name, tuple(sorted(found.labels.items()))): found.value
        for family in text_string_to_metric_families(text)
        for found in family.samples
    }


def sample(text: str, name: str, **labels: str) -> float:
    return samples(text).get((name, tuple(sorted(labels.items()))), 0.0)


def healthz_count(text: str) -> float:
    return sample(text, "http_requests_total", route="/healthz", method="GET", status="2xx")


@pytest.mark.processes
def test_every_worker_counts_into_one_scrape(database_url, tmp_path):
    metrics_port = free_port()
    settings = {
        "APP_ENV": "testing",
        "DATABASE_URL": database_url,
        "WEB_CONCURRENCY": "2",
        # Workers are replaced every 5 requests: the counts of the gone ones stay.
        "GUNICORN_MAX_REQUESTS": "5",
        "GUNICORN_MAX_REQUESTS_JITTER": "0",
        "METRICS_TOKEN": TOKEN,
        "METRICS_BIND": f"127.0.0.1:{metrics_port}",
        "TMPDIR": str(tmp_path),  # where the server makes its metrics directory
    }
    with (
        (tmp_path / "out.log").open("w") as output,
        gunicorn_serving(settings, output=output) as port,
    ):
        status, before = get(port, "/metrics", TOKEN)
        assert status == 200, before
        for _ in range(REQUESTS):
            assert get(port, "/healthz")[0] == 200
        get(port, f"/trackable/{SECRET_LOOKING}")
        status, after = get(port, "/metrics", TOKEN)
        assert status == 200, after
        assert healthz_count(after) == healthz_count(before) + REQUESTS
        assert SECRET_LOOKING not in after
        entry = {
            dict(labels)["status"]: found
            for (name, labels), found in samples(after).items()
            if name == "http_requests_total" and ("route", "/trackable/<path:code>") in labels
        }
        assert sum(entry.values()) == 1, entry
        assert sample(after, "jobs_backlog_up") == 1  # read once, by the worker scraped
        # Between requests no worker holds a connection (read before the backlog is).
        assert ("db_pool_in_use", ()) in samples(after)
        assert sample(after, "db_pool_in_use") == 0

        assert get(port, "/metrics")[0] == 401  # the service's address: the token
        status, there = get(metrics_port, "/metrics")  # the metrics address: none
        assert status == 200
        assert healthz_count(there) >= healthz_count(after)
        assert get(metrics_port, "/healthz")[0] == 200
        assert get(metrics_port, "/api/system/status")[0] == 404
        assert get(port, "/api/system/status")[0] == 200
    log = (tmp_path / "out.log").read_text()
    assert log.count("Booting worker with pid") >= 4, log  # workers were replaced
    assert not list(tmp_path.glob("location-notes-metrics-*"))  # removed on exit


@pytest.mark.processes
def test_an_operators_metrics_directory_is_emptied_at_start(database_url, tmp_path):
    directory = tmp_path / "prometheus"
    directory.mkdir()
    stale = directory / "counter_424242.db"
    stale.write_bytes(b"left by an earlier run")  # unreadable: a scrape would fail on it
    settings = {
        "APP_ENV": "testing",
        "DATABASE_URL": database_url,
        "METRICS_TOKEN": TOKEN,
        "PROMETHEUS_MULTIPROC_DIR": str(directory),
    }
    with gunicorn_serving(settings) as port:
        status, text = get(port, "/metrics", TOKEN)
        assert status == 200, text
        assert not stale.exists()
        assert healthz_count(text) >= 1
    assert directory.is_dir()  # the operator's: kept
    assert any(Path(directory).glob("*.db"))
