"""Error tickets (contract: Compliance rules; decisions: Compliance): a real 500's ticket is
reused, client-side errors get their own, and what failed is shown to super-admins only."""

from __future__ import annotations

import pytest
from flask import Flask

from app.api import api as smorest_api
from app.api.base import Blueprint
from app.extensions import db
from app.models.compliance import ContentReport
from tests.conftest import assert_problem, serve_test_app

failing = Blueprint("compliance_probe", __name__, url_prefix="/api/compliance-probe")


@failing.route("/boom", methods=["GET"])
@failing.response(204)
def boom() -> None:
    """Fail unexpectedly (tests only)"""
    raise RuntimeError("secret internal detail: db password is hunter2")


@failing.route("/other-boom", methods=["GET"])
@failing.response(204)
def other_boom() -> None:
    """Fail unexpectedly elsewhere (tests only)"""
    raise KeyError("another internal detail")


def register_failing(app: Flask) -> None:
    smorest_api.register_blueprint(failing)


@pytest.fixture
def app(database_url, tmp_path_factory):
    yield from serve_test_app(database_url, tmp_path_factory, {}, register_failing)


def ticket_of_a_500(api, path="/api/compliance-probe/boom"):
    response = api.get(path)
    body = assert_problem(response, 500)
    assert "hunter2" not in response.get_data(as_text=True)
    return body["ticketNumber"]


def test_a_500_ticket_is_reused_with_the_explanation(api, reporter):
    ticket = ticket_of_a_500(api)
    response = api.as_user(reporter).post(
        "/api/compliance/errors",
        json={"ticketNumber": ticket, "userExplanation": "I pressed save."},
    )
    assert response.status_code == 200
    body = response.get_json()
    assert body == {
        "ticketNumber": ticket,
        "usedExistingTicket": True,
        "explanationSaved": True,
        "trackedInSupportTickets": False,
        "trackedContentReportId": None,
    }
    stored = db.session.query(ContentReport).filter_by(ticket_number=ticket).one()
    assert stored.report_explanation == "I pressed save."
    assert db.session.query(ContentReport).count() == 1


def test_a_reused_ticket_tracked_in_support_tickets_is_in_the_review_list(
    api, reporter, superadmin
):
    ticket = ticket_of_a_500(api)
    admin = api.as_user(superadmin)
    assert admin.get("/api/compliance/reports").get_json() == []
    body = (
        api.as_user(reporter)
        .post(
            "/api/compliance/errors",
            json={"ticketNumber": ticket.lower(), "trackInSupportTickets": True},
        )
        .get_json()
    )
    assert body["trackedInSupportTickets"] is True
    assert body["explanationSaved"] is False
    listed = admin.get("/api/compliance/reports").get_json()
    assert [item["contentReportId"] for item in listed] == [body["trackedContentReportId"]]
    assert (listed[0]["pageType"], listed[0]["contentType"]) == (5, 6)
    assert listed[0]["pageTypeLabel"] == "System error"
    assert listed[0]["errorDetails"]["exceptionType"] == "RuntimeError"
    assert "hunter2" in listed[0]["errorDetails"]["stackTrace"]


def test_the_reporter_sees_the_ticket_without_what_failed(api, reporter):
    ticket = ticket_of_a_500(api)
    tracked = (
        api.as_user(reporter)
        .post("/api/compliance/errors", json={"ticketNumber": ticket, "userExplanation": "x"})
        .get_json()
    )
    assert tracked["trackedContentReportId"] is None
    mine = api.as_user(reporter).get("/api/compliance/reports/mine")
    text = mine.get_data(as_text=True)
    assert mine.get_json()[0]["ticketNumber"] == ticket
    assert "hunter2" not in text
    assert "errorDetails" not in text
    assert "stackTrace" not in text


def test_an_unknown_ticket_number_is_404(api):
    response = api.post("/api/compliance/errors", json={"ticketNumber": "ERR-00000000"})
    assert_problem(response, 404)


def test_a_malformed_ticket_number_is_400(api):
    response = api.post("/api/compliance/errors", json={"ticketNumber": "ERR-1; drop"})
    assert "ticketNumber" in assert_problem(response, 400)["errors"]


CLIENT_ERROR = {
    "pageMarkerType": "Android screen",
    "pageMarker": "NoteEditor",
    "requestCulture": "de-DE",
    "requestUrl": "/api/notes/mine",
    "httpMethod": "POST",
    "responseStatusCode": 502,
    "exceptionType": "TimeoutException",
    "exceptionMessage": "timed out after 30 s, token abc",
    "stackTrace": "at SyncWorker.push (SyncWorker.kt:88)",
    "userExplanation": "Sync failed twice.",
    "trackInSupportTickets": True,
    "clientContext": {"appVersion": "1.4.2"},
}


def test_a_client_side_error_gets_a_new_ticket_with_every_field(api, superadmin):
    response = api.post("/api/compliance/errors", json=CLIENT_ERROR)
    body = response.get_json()
    assert response.status_code == 200
    assert body["ticketNumber"].startswith("ERR-")
    assert body["usedExistingTicket"] is False
    assert (body["explanationSaved"], body["trackedInSupportTickets"]) == (True, True)
    seen = api.as_user(superadmin).get(f"/api/compliance/reports/{body['trackedContentReportId']}")
    report = seen.get_json()
    assert report["reportExplanation"] == "Sync failed twice."
    assert report["clientContext"] == {"appVersion": "1.4.2"}
    details = report["errorDetails"]
    assert details["exceptionMessage"] == "timed out after 30 s, token abc"
    assert details["pageMarkerType"] == "Android screen"
    assert details["requestCulture"] == "de-DE"
    assert details["responseStatusCode"] == 502
    assert details["source"] == "client"


def test_a_signed_in_client_error_is_the_callers_without_its_internals(api, reporter):
    body = api.as_user(reporter).post("/api/compliance/errors", json=CLIENT_ERROR).get_json()
    seen = api.as_user(reporter).get(f"/api/compliance/reports/{body['trackedContentReportId']}")
    assert seen.status_code == 200
    assert "token abc" not in seen.get_data(as_text=True)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("stackTrace", "x" * 20001),
        ("exceptionMessage", "x" * 4001),
        ("userExplanation", "x" * 4001),
        ("clientContext", {"blob": "x" * 9000}),
        ("clientContext", "not an object"),
        ("responseStatusCode", "500"),
        ("httpMethod", "x" * 17),
    ],
)
def test_error_fields_are_bounded(api, field, value):
    response = api.post("/api/compliance/errors", json={**CLIENT_ERROR, field: value})
    assert field in assert_problem(response, 400)["errors"]
    assert db.session.query(ContentReport).count() == 0


# --- bounded tickets ------------------------------------------------------------------------


def test_identical_failures_of_one_client_share_a_ticket(api):
    first = ticket_of_a_500(api)
    second = ticket_of_a_500(api)
    assert first == second
    stored = db.session.query(ContentReport).one()
    assert stored.occurrences == 2


def test_different_failures_get_different_tickets(api):
    assert ticket_of_a_500(api) != ticket_of_a_500(api, "/api/compliance-probe/other-boom")
    assert db.session.query(ContentReport).count() == 2


def test_another_client_gets_its_own_ticket(app, api):
    app.config["TRUSTED_PROXIES"] = ["127.0.0.1"]
    first = api.get("/api/compliance-probe/boom", headers={"X-Forwarded-For": "203.0.113.7"})
    second = api.get("/api/compliance-probe/boom", headers={"X-Forwarded-For": "203.0.113.8"})
    assert first.get_json()["ticketNumber"] != second.get_json()["ticketNumber"]


def test_a_client_over_its_ticket_budget_gets_its_latest_ticket(app, api):
    app.config["ERROR_TICKETS_PER_CLIENT"] = 1
    first = ticket_of_a_500(api)
    again = ticket_of_a_500(api, "/api/compliance-probe/other-boom")
    assert again == first
    assert db.session.query(ContentReport).count() == 1


def test_the_same_client_error_sent_twice_is_one_ticket(api):
    first = api.post("/api/compliance/errors", json=CLIENT_ERROR).get_json()
    second = api.post(
        "/api/compliance/errors", json={**CLIENT_ERROR, "userExplanation": "Again."}
    ).get_json()
    assert second["ticketNumber"] == first["ticketNumber"]
    assert second["usedExistingTicket"] is True
    stored = db.session.query(ContentReport).one()
    assert stored.report_explanation.endswith("Again.")
    assert stored.occurrences == 2
