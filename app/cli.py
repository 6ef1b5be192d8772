"""Command-line tools: `flask users grant-superadmin EMAIL`, `flask seed demo`."""

from __future__ import annotations

import click
from flask import Flask
from flask.cli import AppGroup

from app.extensions import db

users_cli = AppGroup("users", help="Manage user accounts.")
seed_cli = AppGroup("seed", help="Load example data.")


@users_cli.command("grant-superadmin")
@click.argument("email")
def grant_superadmin(email: str) -> None:
    """Make the account with EMAIL a super-admin."""
    from app.models.user import User

    user = db.session.query(User).filter_by(normalized_email=email.strip().lower()).one_or_none()
    if user is None:
        raise click.ClickException(f"No account with email {email}.")
    user.is_superadmin = True
    db.session.commit()
    click.echo(f"{user.user_name} is now a super-admin.")


@seed_cli.command("demo")
def seed_demo() -> None:
    """Create a small realistic data set for trying the API (safe to run twice)."""
    from app.seed import seed_demo_notes, seed_demo_users

    click.echo(seed_demo_users())
    click.echo(seed_demo_notes())
    db.session.commit()


def register_cli(app: Flask) -> None:
    app.cli.add_command(users_cli)
    app.cli.add_command(seed_cli)
