"""Abuse resistance: reports and error posts are rate limited per client and repeated
reports of the same content are one (decisions: Wire format 429; docs/contract/compliance.md)."""

from __future__ import annotations

import pytest

from app.extensions import db
from app.models.compliance import ContentReport
from tests.conftest import assert_problem
from tests.reports import report_body


@pytest.fixture
def app_overrides():
    return {"RATE_LIMIT_COMPLIANCE": "3 per hour"}


def test_the_limit_is_published_in_the_status(api):
    limits = api.get("/api/system/status").get_json()["limits"]
    assert limits["rateLimits"]["compliance"] == "3 per hour"
    assert limits["reportDuplicateWindowMinutes"] == 60


def test_reports_and_error_posts_share_one_budget_per_client(api):
    assert api.post("/api/compliance/reports", json=report_body()).status_code == 201
    assert api.post("/api/compliance/errors", json={"exceptionType": "A"}).status_code == 200
    assert api.post("/api/compliance/reports", json=report_body()).status_code == 201
    response = api.post("/api/compliance/errors", json={"exceptionType": "B"})
    assert_problem(response, 429)
    assert int(response.headers["Retry-After"]) > 0
    assert_problem(api.post("/api/compliance/reports", json=report_body()), 429)
    assert db.session.query(ContentReport).count() == 3


def test_another_client_has_its_own_budget(app, api):
    app.config["TRUSTED_PROXIES"] = ["127.0.0.1"]
    for _ in range(3):
        headers = {"X-Forwarded-For": "203.0.113.7"}
        api.post("/api/compliance/reports", json=report_body(), headers=headers)
    other = {"X-Forwarded-For": "203.0.113.8"}
    response = api.post("/api/compliance/reports", json=report_body(), headers=other)
    assert response.status_code == 201


def test_the_same_client_reporting_the_same_content_again_gets_its_report(api, reporter):
    body = report_body(pageReference="note-1", contentReference="c-1")
    first = api.as_user(reporter).post("/api/compliance/reports", json=body)
    again = api.as_user(reporter).post(
        "/api/compliance/reports", json={**body, "reportExplanation": "Still spam."}
    )
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.get_json()["contentReportId"] == first.get_json()["contentReportId"]
    assert db.session.query(ContentReport).count() == 1


def test_anonymous_repeats_from_one_address_are_one_report(api):
    body = report_body(pageReference="note-1")
    assert api.post("/api/compliance/reports", json=body).status_code == 201
    assert api.post("/api/compliance/reports", json=body).status_code == 200
    assert db.session.query(ContentReport).count() == 1


def test_other_content_or_another_reporter_is_a_new_report(api, reporter, other):
    body = report_body(pageReference="note-1")
    assert api.as_user(reporter).post("/api/compliance/reports", json=body).status_code == 201
    assert api.as_user(other).post("/api/compliance/reports", json=body).status_code == 201
    other_content = {**body, "contentReference": "comment-2"}
    assert (
        api.as_user(reporter).post("/api/compliance/reports", json=other_content).status_code == 201
    )


def test_two_different_support_requests_are_two(api, reporter):
    first = report_body(pageType=6, contentType=8, pageUrl="/help", reportTitle="Login")
    second = {**first, "reportTitle": "Export"}
    assert api.as_user(reporter).post("/api/compliance/reports", json=first).status_code == 201
    assert api.as_user(reporter).post("/api/compliance/reports", json=second).status_code == 201


def test_a_repeat_after_the_window_is_a_new_report(app, api):
    body = report_body(pageReference="note-1")
    assert api.post("/api/compliance/reports", json=body).status_code == 201
    app.config["REPORT_DUPLICATE_WINDOW_MINUTES"] = 0
    assert api.post("/api/compliance/reports", json=body).status_code == 201
