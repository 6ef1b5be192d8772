"""Command-line tools."""

from __future__ import annotations

import re

from sqlalchemy import select

from app.extensions import db
from app.models.note import Note
from app.models.team import Team
from app.models.trackable import JourneyStop, Trackable
from app.models.user import User
from tests.factories import make_user


def test_grant_superadmin_by_email_case_insensitively(app):
    user = make_user(email="Root@Example.com")
    result = app.test_cli_runner().invoke(args=["users", "grant-superadmin", "ROOT@example.com"])
    assert result.exit_code == 0, result.output
    db.session.refresh(user)
    assert user.is_superadmin is True


def test_grant_superadmin_unknown_email_fails_clearly(app):
    result = app.test_cli_runner().invoke(args=["users", "grant-superadmin", "nobody@example.com"])
    assert result.exit_code != 0
    assert "No account" in result.output


def test_seed_demo_is_idempotent(app):
    runner = app.test_cli_runner()
    assert runner.invoke(args=["seed", "demo"]).exit_code == 0
    users, notes = db.session.query(User).count(), db.session.query(Note).count()
    assert users >= 3
    assert notes >= 5
    second = runner.invoke(args=["seed", "demo"])
    assert second.exit_code == 0, second.output
    assert (db.session.query(User).count(), db.session.query(Note).count()) == (users, notes)


def test_seed_demo_prints_the_same_accounts_codes_and_pages_every_run(app, api):
    runner = app.test_cli_runner()
    first = runner.invoke(args=["seed", "demo"])
    second = runner.invoke(args=["seed", "demo"])
    assert first.exit_code == second.exit_code == 0, first.output + second.output
    shown = first.output.splitlines()[3:]  # the counts of what was made differ
    assert shown == second.output.splitlines()[3:]
    assert "ada@example.com" in first.output
    assert "'demo-walks-2026'" in first.output
    assert "secret code DEMO-TEDDY-2026" in first.output
    assert "Postcard in a bottle (not activated yet)" in first.output
    teddy = db.session.scalar(select(Trackable).where(Trackable.name == "Travelling teddy"))
    stops = db.session.scalars(select(JourneyStop).where(JourneyStop.trackable_id == teddy.id))
    assert teddy.is_activated
    assert len(list(stops)) == 2
    assert db.session.scalar(select(Team).where(Team.name == "Canal walkers")) is not None


def test_the_pages_seed_demo_names_open(app, api):
    output = app.test_cli_runner().invoke(args=["seed", "demo"]).output
    base = app.config["PUBLIC_BASE_URL"].rstrip("/")
    pages = re.findall(re.escape(base) + r"(/\S+)", output)
    assert len(pages) == 4, output
    for page in pages:
        response = api.get(page, follow_redirects=True)
        assert response.status_code == 200, (page, response.status_code)
        assert response.mimetype == "text/html", page
    teddy = api.get(pages[0]).get_data(as_text=True)
    assert "Travelling teddy" in teddy


def test_seed_demo_refuses_to_run_in_production(app, monkeypatch):
    monkeypatch.setitem(app.config, "ENV_NAME", "production")
    result = app.test_cli_runner().invoke(args=["seed", "demo"])
    assert result.exit_code != 0
    assert "not for production" in result.output
    assert db.session.query(User).count() == 0


def test_seeded_public_notes_are_discoverable(app, api):
    app.test_cli_runner().invoke(args=["seed", "demo"])
    query = "minLatitude=52&minLongitude=13&maxLatitude=53&maxLongitude=14"
    titles = {note["title"] for note in api.get(f"/api/notes/public/bounds?{query}").get_json()}
    assert "Tempelhof field at sunset" in titles


# --- flask reports -------------------------------------------------------------------------


def _report(**fields):
    from app.models.compliance import ContentReport

    report = ContentReport(page_type=2, content_type=5, **fields)
    db.session.add(report)
    db.session.commit()
    return report


def test_reports_list_shows_reports_newest_first_with_reporter(app):
    rita = make_user("rita")
    _report(report_title="Older spam", reporter_user_id=rita.id)
    newer = _report(report_title="Newer spam")
    result = app.test_cli_runner().invoke(args=["reports", "list"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(str(newer.id))
    assert "Reported" in lines[0]
    assert "Note page" in lines[0]
    assert "rita" in lines[1]
    assert "Older spam" in lines[1]


def test_reports_list_filters_by_status_and_leaves_out_untracked_errors(app):
    _report(report_title="Open one")
    _report(report_title="Done one", status=2, resolution_text="ok")
    from app.models.compliance import ContentReport

    db.session.add(ContentReport(page_type=5, content_type=6, report_title="Untracked 500"))
    db.session.commit()
    runner = app.test_cli_runner()
    resolved = runner.invoke(args=["reports", "list", "--status", "2"]).output
    assert "Done one" in resolved
    assert "Open one" not in resolved
    assert "Untracked 500" not in runner.invoke(args=["reports", "list"]).output


def test_reports_resolve_sets_status_text_and_reviewer(app):
    report = _report(report_title="Spam")
    result = app.test_cli_runner().invoke(
        args=["reports", "resolve", str(report.id), "Removed it", "--reviewer", "Ops"]
    )
    assert result.exit_code == 0, result.output
    db.session.refresh(report)
    assert (report.status, report.resolution_text) == (2, "Removed it")
    assert report.reviewer_display_name == "Ops"
    assert report.reviewed_utc is not None


def test_reports_resolve_refuses_a_blank_text_and_an_unknown_id(app):
    report = _report(report_title="Spam")
    runner = app.test_cli_runner()
    blank = runner.invoke(args=["reports", "resolve", str(report.id), "   "])
    assert blank.exit_code != 0
    assert "resolution text" in blank.output
    db.session.refresh(report)
    assert report.status == 0
    unknown = runner.invoke(
        args=["reports", "resolve", "3f0c1d9e-8a5b-4c2d-9e7f-1a2b3c4d5e6f", "Done"]
    )
    assert unknown.exit_code != 0
    assert "No such content report" in unknown.output
