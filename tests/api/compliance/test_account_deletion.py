"""DELETE /api/account: the user's reports stay for moderation, reporter detached."""

from __future__ import annotations

from app.extensions import db
from app.models.compliance import ContentReport
from tests.reports import file_report


def test_reports_stay_with_the_reporter_detached(api, reporter, superadmin):
    report = file_report(api, reporter)
    assert api.as_user(reporter).delete("/api/account").status_code == 200
    db.session.expire_all()
    stored = db.session.query(ContentReport).one()
    assert stored.reporter_user_id is None
    seen = api.as_user(superadmin).get(f"/api/compliance/reports/{report['contentReportId']}")
    body = seen.get_json()
    assert (body["reporterUserId"], body["reporterDisplayName"]) == (None, None)
    assert body["reporterUserName"] is None
    assert body["reportExplanation"] == "An advert."


def test_a_deleted_reviewer_keeps_the_review_without_the_account(api, reporter, superadmin):
    report = file_report(api, reporter)
    api.as_user(superadmin).put(
        f"/api/compliance/reports/{report['contentReportId']}",
        json={"status": 2, "resolutionText": "Removed"},
    )
    assert api.as_user(superadmin).delete("/api/account").status_code == 200
    mine = api.as_user(reporter).get("/api/compliance/reports/mine").get_json()[0]
    assert (mine["statusLabel"], mine["reviewerDisplayName"]) == ("Resolved", "Sam (staff)")
    db.session.expire_all()
    assert db.session.query(ContentReport).one().reviewer_user_id is None


def test_deleting_the_user_row_alone_detaches_the_reporter_in_the_database(api, reporter):
    """The foreign key's ON DELETE SET NULL holds on SQLite too (foreign keys enforced)."""
    file_report(api, reporter)
    db.session.delete(reporter)
    db.session.commit()
    db.session.expire_all()
    assert db.session.query(ContentReport).one().reporter_user_id is None
