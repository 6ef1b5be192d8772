"""deploy/prometheus: the scrape configuration and the alert rules pass promtool's checks,
each alert fires on its synthetic series (alerts.test.yml), and every metric a rule reads
is one the service exposes. promtool is Debian's `prometheus` package; without it these
skip, and fail under REQUIRE_DEPLOY_TESTS=1, as CI runs them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

PROMETHEUS = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"
TOKEN = "p" * 40


@pytest.fixture(scope="module")
def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        message = "promtool is not installed (apt-get install prometheus)"
        if os.environ.get("REQUIRE_DEPLOY_TESTS") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.mark.parametrize(
    "arguments",
    [
        ("check", "config", "prometheus.yml"),
        ("check", "rules", "alerts.yml"),
        ("test", "rules", "alerts.test.yml"),
    ],
    ids=lambda arguments: " ".join(arguments[:2]),
)
def test_promtool_accepts_the_files(promtool, arguments):
    result = subprocess.run(  # noqa: S603 - our own files
        [promtool, *arguments], cwd=PROMETHEUS, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_each_alert_is_shown_firing():
    rules = yaml.safe_load((PROMETHEUS / "alerts.yml").read_text())
    alerts = {rule["alert"] for group in rules["groups"] for rule in group["rules"]}
    tests = yaml.safe_load((PROMETHEUS / "alerts.test.yml").read_text())["tests"]
    firing = {
        case["alertname"]
        for test in tests
        for case in test["alert_rule_test"]
        if case.get("exp_alerts")
    }
    assert firing == alerts


def test_every_metric_a_rule_reads_is_exposed(app, api, monkeypatch):
    monkeypatch.setitem(app.config, "METRICS_TOKEN", TOKEN)
    scrape = api.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    exposed = set(re.findall(r"^# TYPE (\w+) ", scrape.get_data(as_text=True), re.MULTILINE))
    exposed |= {f"{name}_total" for name in exposed}  # counters are typed without it
    rules = yaml.safe_load((PROMETHEUS / "alerts.yml").read_text())
    read = {
        name
        for group in rules["groups"]
        for rule in group["rules"]
        for name in re.findall(
            r"\b([a-z_]+)(?=\s*[>=<]|\[)", re.sub(r"\{[^}]*\}", "", rule["expr"])
        )
    }
    assert read - exposed - {"up"} == set()
