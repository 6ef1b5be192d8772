"""Command-line tools."""

from __future__ import annotations

from app.extensions import db
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
    count = db.session.query(User).count()
    assert count >= 3
    second = runner.invoke(args=["seed", "demo"])
    assert second.exit_code == 0, second.output
    assert db.session.query(User).count() == count
