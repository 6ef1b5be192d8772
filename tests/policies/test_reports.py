"""Who may see and review content reports (policies.reports) as tables: a report is seen
by its reporter and super-admins (404 `report_not_found` for anyone else, as for a
missing one); reviewing and the reviewer fields are for super-admins (403
`superadmin_required` for other callers)."""

from __future__ import annotations

import uuid

import pytest

from app.auth import build_viewer
from app.errors import Forbidden, NotFound
from app.extensions import db
from app.models.compliance import ContentReport
from app.policies import reports as report_policy
from tests.factories import make_team, make_user

ROLES = ("reporter", "team_admin", "stranger", "superadmin", "anonymous")
# role -> (sees the report, reviews and sees reviewer fields)
TABLE = {
    "reporter": (True, False),
    "team_admin": (False, False),  # an admin of the reporter's team: no more rights
    "stranger": (False, False),
    "superadmin": (True, True),
    "anonymous": (False, False),
}


@pytest.fixture
def world(app):
    reporter, admin, stranger = make_user(), make_user(), make_user()
    make_team(admin, members=(reporter,))
    superadmin = make_user(is_superadmin=True)
    report = ContentReport(reporter_user_id=reporter.id, page_type=1, content_type=1)
    anonymous_report = ContentReport(reporter_user_id=None, page_type=1, content_type=1)
    db.session.add_all([report, anonymous_report])
    db.session.commit()
    users = {
        "reporter": reporter,
        "team_admin": admin,
        "stranger": stranger,
        "superadmin": superadmin,
        "anonymous": None,
    }
    viewers = {role: build_viewer(user) for role, user in users.items()}
    return report, anonymous_report, viewers


@pytest.mark.parametrize(("role", "sees", "reviews"), [(r, *TABLE[r]) for r in ROLES])
def test_who_sees_and_reviews_a_report(world, role, sees, reviews):
    report, _, viewers = world
    viewer = viewers[role]

    assert report_policy.can_view(viewer, report) is sees
    assert report_policy.can_review(viewer) is reviews
    assert report_policy.sees_reviewer_fields(viewer) is reviews
    if sees:
        assert report_policy.get_visible(viewer, report.id) is report
    else:
        with pytest.raises(NotFound) as hidden:
            report_policy.get_visible(viewer, report.id)
        assert hidden.value.code == "report_not_found"
    if reviews:
        report_policy.require_review(viewer)
    else:
        with pytest.raises(Forbidden) as refused:
            report_policy.require_review(viewer)
        assert refused.value.code == "superadmin_required"


@pytest.mark.parametrize("role", ROLES)
def test_an_anonymous_report_is_for_super_admins_only(world, role):
    _, anonymous_report, viewers = world
    # an anonymous viewer never matches a report without a reporter (None is nobody)
    assert report_policy.can_view(viewers[role], anonymous_report) is (role == "superadmin")


def test_a_missing_report_is_404_for_a_super_admin_too(world):
    _, _, viewers = world
    with pytest.raises(NotFound) as missing:
        report_policy.get_visible(viewers["superadmin"], uuid.uuid4())
    assert missing.value.code == "report_not_found"
