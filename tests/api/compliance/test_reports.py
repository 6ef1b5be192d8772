"""Content reports and support requests (contract: Content report, Compliance)."""

from __future__ import annotations

import pytest

from app.extensions import db
from app.models.compliance import ContentReport
from tests.conftest import assert_problem
from tests.factories import make_note
from tests.reports import file_report, report_body

READ_SHAPE = {
    "contentReportId",
    "reporterUserId",
    "pageType",
    "pageTypeLabel",
    "contentType",
    "contentTypeLabel",
    "status",
    "statusLabel",
    "pageTitle",
    "pageUrl",
    "pageReference",
    "contentLabel",
    "contentReference",
    "contentPreview",
    "reportTitle",
    "reportExplanation",
    "resolutionText",
    "reporterDisplayName",
    "reviewerDisplayName",
    "createdUtc",
    "reviewedUtc",
}
REVIEWER_FIELDS = {"reviewUrl", "errorDetails", "clientContext", "reporterEmail"}


def test_anonymous_report_is_created_without_a_reporter(api):
    body = file_report(api)
    assert set(body) >= READ_SHAPE
    assert body["reporterUserId"] is None
    assert body["reporterDisplayName"] is None
    assert (body["status"], body["statusLabel"]) == (0, "Reported")
    assert body["contentPreview"] == "Buy cheap watches"
    assert not REVIEWER_FIELDS & set(body)


def test_signed_in_report_is_attached_to_the_caller(api, reporter):
    body = file_report(api, reporter)
    assert body["reporterUserId"] == str(reporter.id)
    assert body["reporterDisplayName"] == "Rita R."


@pytest.mark.parametrize(
    ("page_type", "label"),
    [
        (0, "Profile page"),
        (1, "Team page"),
        (2, "Note page"),
        (3, "Trackable page"),
        (4, "Trackable group page"),
    ],
)
def test_each_content_page_type_has_its_label(api, page_type, label):
    body = file_report(api, pageType=page_type)
    assert (body["pageType"], body["pageTypeLabel"]) == (page_type, label)


@pytest.mark.parametrize(
    ("content_type", "label"),
    [
        (0, "Title"),
        (1, "Description"),
        (2, "Comment"),
        (3, "Body"),
        (4, "Bio"),
        (5, "Title and content"),
        (7, "Image"),
    ],
)
def test_each_content_type_has_its_label(api, content_type, label):
    body = file_report(api, contentType=content_type)
    assert (body["contentType"], body["contentTypeLabel"]) == (content_type, label)


def test_support_request_is_page_type_6_with_content_type_8(api, reporter):
    body = file_report(api, reporter, pageType=6, contentType=8, reportTitle="Help")
    assert (body["pageTypeLabel"], body["contentTypeLabel"]) == ("Support page", "Support request")


@pytest.mark.parametrize(
    ("page_type", "content_type", "field"),
    [(6, 5, "contentType"), (2, 8, "contentType"), (5, 6, "pageType"), (2, 6, "pageType")],
)
def test_mismatched_support_and_system_error_types_are_refused(api, page_type, content_type, field):
    response = api.post(
        "/api/compliance/reports",
        json=report_body(pageType=page_type, contentType=content_type),
    )
    assert field in assert_problem(response, 400)["errors"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("pageType", 7),
        ("pageType", -1),
        ("pageType", "2"),
        ("contentType", 9),
        ("contentType", None),
        ("pageTitle", "x" * 301),
        ("reportExplanation", "x" * 4001),
        ("contentPreview", "x" * 4001),
        ("pageUrl", "https://evil.example/phish"),
        ("pageUrl", "//evil.example/phish"),
        ("pageUrl", "javascript:alert(1)"),
        ("pageUrl", "/a\\b"),
        ("pageUrl", "/" + "x" * 2048),
    ],
)
def test_invalid_fields_are_400_naming_the_field(api, field, value):
    response = api.post("/api/compliance/reports", json=report_body(**{field: value}))
    assert field in assert_problem(response, 400)["errors"]


def test_missing_types_are_named(api):
    body = assert_problem(api.post("/api/compliance/reports", json={"reportTitle": "x"}), 400)
    assert {"pageType", "contentType"} <= set(body["errors"])


def test_a_report_needs_a_title_or_an_explanation(api):
    response = api.post(
        "/api/compliance/reports", json=report_body(reportTitle=" ", reportExplanation="")
    )
    assert "reportExplanation" in assert_problem(response, 400)["errors"]
    assert db.session.query(ContentReport).count() == 0


@pytest.mark.parametrize(
    "url", ["/en/notes/5", "http://127.0.0.1:8000/en/notes/5", "HTTP://127.0.0.1:8000/x", ""]
)
def test_site_paths_and_urls_under_the_public_address_are_accepted(api, url):
    assert file_report(api, pageUrl=url)["pageUrl"] == url


def test_reference_to_a_held_note_keeps_a_review_link_for_super_admins(api, reporter, superadmin):
    note = make_note()
    body = file_report(api, reporter, pageReference=str(note.id))
    assert "reviewUrl" not in body
    seen = api.as_user(superadmin).get(f"/api/compliance/reports/{body['contentReportId']}")
    assert seen.get_json()["reviewUrl"] == f"/api/public/notes/{note.id}"


def test_reference_to_nothing_held_has_no_review_link(api, superadmin):
    body = file_report(api, pageReference="3f0c1d9e-8a5b-4c2d-9e7f-1a2b3c4d5e6f")
    seen = api.as_user(superadmin).get(f"/api/compliance/reports/{body['contentReportId']}")
    assert seen.get_json()["reviewUrl"] is None


# --- reads ---------------------------------------------------------------------------------


def test_my_reports_lists_only_mine_newest_first(api, reporter, other):
    first = file_report(api, reporter)
    second = file_report(api, reporter)
    file_report(api, other)
    file_report(api)
    listed = api.as_user(reporter).get("/api/compliance/reports/mine").get_json()
    assert [item["contentReportId"] for item in listed] == [
        second["contentReportId"],
        first["contentReportId"],
    ]


def test_my_reports_needs_a_token(api):
    assert_problem(api.get("/api/compliance/reports/mine"), 401)


@pytest.mark.parametrize(
    ("who", "status"),
    [("anonymous", 401), ("reporter", 200), ("other", 404), ("superadmin", 200)],
)
def test_one_report_is_seen_by_its_reporter_and_super_admins(
    api, reporter, other, superadmin, who, status
):
    viewers = {"anonymous": None, "reporter": reporter, "other": other, "superadmin": superadmin}
    report = file_report(api, reporter)
    response = api.as_user(viewers[who]).get(f"/api/compliance/reports/{report['contentReportId']}")
    if status == 200:
        assert response.status_code == 200
        assert response.get_json()["contentReportId"] == report["contentReportId"]
    else:
        assert_problem(response, status)


def test_an_anonymous_report_is_seen_by_super_admins_only(api, other, superadmin):
    report = file_report(api)
    url = f"/api/compliance/reports/{report['contentReportId']}"
    assert_problem(api.as_user(other).get(url), 404)
    assert api.as_user(superadmin).get(url).status_code == 200


def test_unknown_report_is_404(api, superadmin):
    url = "/api/compliance/reports/3f0c1d9e-8a5b-4c2d-9e7f-1a2b3c4d5e6f"
    assert_problem(api.as_user(superadmin).get(url), 404)


@pytest.mark.parametrize(("who", "status"), [("anonymous", 401), ("reporter", 403), ("other", 403)])
def test_the_review_list_is_for_super_admins(api, reporter, other, who, status):
    file_report(api, reporter)
    user = {"anonymous": None, "reporter": reporter, "other": other}[who]
    assert_problem(api.as_user(user).get("/api/compliance/reports"), status)


def test_a_super_admins_own_list_holds_only_their_reports(api, reporter, superadmin):
    file_report(api, reporter)
    own = file_report(api, superadmin)
    listed = api.as_user(superadmin).get("/api/compliance/reports/mine").get_json()
    assert [item["contentReportId"] for item in listed] == [own["contentReportId"]]


def test_the_review_list_shows_every_report_newest_first_with_reporter_identity(
    api, reporter, superadmin
):
    first = file_report(api, reporter)
    second = file_report(api)
    response = api.as_user(superadmin).get("/api/compliance/reports")
    listed = response.get_json()
    assert [item["contentReportId"] for item in listed] == [
        second["contentReportId"],
        first["contentReportId"],
    ]
    assert "X-Result-Truncated" not in response.headers
    assert listed[1]["reporterUserName"] == "rita"
    assert listed[1]["reporterEmail"] == reporter.email
    assert listed[0]["reporterUserName"] is None


def test_the_review_list_filters_by_status_and_page_type(api, reporter, superadmin):
    note_report = file_report(api, reporter, pageType=2)
    team_report = file_report(api, reporter, pageType=1)
    admin = api.as_user(superadmin)
    admin.put(
        f"/api/compliance/reports/{team_report['contentReportId']}",
        json={"status": 1, "resolutionText": "Looking"},
    )
    by_status = admin.get("/api/compliance/reports?status=1").get_json()
    assert [item["contentReportId"] for item in by_status] == [team_report["contentReportId"]]
    by_page = admin.get("/api/compliance/reports?pageType=2").get_json()
    assert [item["contentReportId"] for item in by_page] == [note_report["contentReportId"]]
    assert_problem(admin.get("/api/compliance/reports?status=3"), 400)


def test_the_review_list_is_capped_and_says_so(app, api, superadmin):
    app.config["REPORT_LIST_CAP"] = 2
    for _ in range(3):
        file_report(api)
    response = api.as_user(superadmin).get("/api/compliance/reports")
    assert len(response.get_json()) == 2
    assert response.headers["X-Result-Truncated"] == "true"


# --- review --------------------------------------------------------------------------------


def review(api, user, report_id, **body):
    return api.as_user(user).put(f"/api/compliance/reports/{report_id}", json=body)


@pytest.mark.parametrize(("who", "status"), [("anonymous", 401), ("reporter", 403), ("other", 403)])
def test_only_super_admins_review(api, reporter, other, who, status):
    report = file_report(api, reporter)
    user = {"anonymous": None, "reporter": reporter, "other": other}[who]
    response = review(api, user, report["contentReportId"], status=2, resolutionText="Done")
    assert_problem(response, status)
    assert db.session.get(ContentReport, report_id_of(report)).status == 0


def report_id_of(report):
    import uuid

    return uuid.UUID(report["contentReportId"])


def test_reviewing_records_status_text_reviewer_and_time(api, reporter, superadmin):
    report = file_report(api, reporter)
    response = review(api, superadmin, report["contentReportId"], status=1, resolutionText="On it")
    body = response.get_json()
    assert response.status_code == 200
    assert (body["status"], body["statusLabel"], body["resolutionText"]) == (
        1,
        "Reviewing",
        "On it",
    )
    assert body["reviewerDisplayName"] == "Sam (staff)"
    assert body["reviewedUtc"].endswith("Z")
    mine = api.as_user(reporter).get("/api/compliance/reports/mine").get_json()[0]
    assert (mine["statusLabel"], mine["resolutionText"]) == ("Reviewing", "On it")


@pytest.mark.parametrize("text", [None, "", "   \n\t"])
def test_resolving_needs_a_resolution_text_that_is_not_blank(api, reporter, superadmin, text):
    report = file_report(api, reporter)
    body = {"status": 2} if text is None else {"status": 2, "resolutionText": text}
    response = review(api, superadmin, report["contentReportId"], **body)
    assert "resolutionText" in assert_problem(response, 400)["errors"]
    stored = db.session.get(ContentReport, report_id_of(report))
    assert (stored.status, stored.reviewed_utc) == (0, None)


def test_resolving_with_a_text_resolves(api, reporter, superadmin):
    report = file_report(api, reporter)
    response = review(api, superadmin, report["contentReportId"], status=2, resolutionText=" Gone ")
    assert (response.get_json()["status"], response.get_json()["statusLabel"]) == (2, "Resolved")
    assert response.get_json()["resolutionText"] == "Gone"


def test_resolving_keeps_an_earlier_resolution_text(api, reporter, superadmin):
    report = file_report(api, reporter)
    review(api, superadmin, report["contentReportId"], status=1, resolutionText="Removed")
    response = review(api, superadmin, report["contentReportId"], status=2)
    assert response.get_json()["resolutionText"] == "Removed"


def test_a_resolved_report_can_be_reopened(api, reporter, superadmin):
    report = file_report(api, reporter)
    review(api, superadmin, report["contentReportId"], status=2, resolutionText="Done")
    response = review(api, superadmin, report["contentReportId"], status=0)
    assert response.get_json()["status"] == 0


@pytest.mark.parametrize("status", [3, -1, "1", None])
def test_review_status_outside_0_to_2_is_400(api, reporter, superadmin, status):
    report = file_report(api, reporter)
    response = review(api, superadmin, report["contentReportId"], status=status)
    assert "status" in assert_problem(response, 400)["errors"]


def test_reviewing_an_unknown_report_is_404(api, superadmin):
    response = review(api, superadmin, "3f0c1d9e-8a5b-4c2d-9e7f-1a2b3c4d5e6f", status=1)
    assert_problem(response, 404)
