"""The object store in readiness and /metrics: /readyz lists it with whether it answered
and what waits on it, without making the instance unready (everything else still serves),
and `location_notes_dependency_up` says the same; a store that never answers is given up
on within seconds."""

from __future__ import annotations

import re
import time

import pytest

from tests.api.images.s3 import S3_SETTINGS
from tests.hanging_peers import BlackHole

TOKEN = "m" * 40


@pytest.fixture
def app_overrides():
    return {**S3_SETTINGS, "METRICS_TOKEN": TOKEN}


def dependency_up(api, name: str) -> float:
    scrape = api.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert scrape.status_code == 200
    found = re.search(
        rf'^location_notes_dependency_up{{dependency="{name}"}} ([0-9.]+)$',
        scrape.get_data(as_text=True),
        re.MULTILINE,
    )
    assert found is not None, scrape.get_data(as_text=True)
    return float(found.group(1))


def test_an_answering_store_is_listed_up(api, bucket):
    ready = api.get("/readyz")
    assert ready.status_code == 200
    dependencies = ready.get_json()["dependencies"]
    assert dependencies["objectStore"]["up"] is True
    assert "image uploads" in dependencies["objectStore"]["serves"]
    assert dependencies["database"]["up"] is True
    assert dependencies["rateLimits"]["up"] is True
    assert dependency_up(api, "objectStore") == 1.0
    assert dependency_up(api, "database") == 1.0


def test_a_missing_bucket_is_listed_down_and_the_instance_stays_ready(api, s3_server):
    ready = api.get("/readyz")
    assert ready.status_code == 200
    assert ready.get_json()["dependencies"]["objectStore"]["up"] is False
    assert dependency_up(api, "objectStore") == 0.0


def test_a_store_that_never_answers_is_given_up_on_within_seconds(api, app, monkeypatch):
    hole = BlackHole()  # accepts, never answers
    try:
        monkeypatch.setitem(app.config, "IMAGE_S3_ENDPOINT_URL", f"http://127.0.0.1:{hole.port}")
        started = time.monotonic()
        ready = api.get("/readyz")
        waited = time.monotonic() - started
    finally:
        hole.close()
    assert hole.connections >= 1
    assert waited < 5
    assert ready.status_code == 200
    assert ready.get_json()["dependencies"]["objectStore"]["up"] is False
