"""Command-line tools."""

from __future__ import annotations

from app.extensions import db
from app.models.note import Note
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


def test_seeded_public_notes_are_discoverable(app, api):
    app.test_cli_runner().invoke(args=["seed", "demo"])
    query = "minLatitude=52&minLongitude=13&maxLatitude=53&maxLongitude=14"
    titles = {note["title"] for note in api.get(f"/api/notes/public/bounds?{query}").get_json()}
    assert "Tempelhof field at sunset" in titles
