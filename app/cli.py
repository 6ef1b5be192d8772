"""Command-line tools: `flask users grant-superadmin EMAIL`, `flask seed demo`,
`flask images sweep [--dry-run]`."""

from __future__ import annotations

from datetime import timedelta

import click
from flask import Flask
from flask.cli import AppGroup

from app.extensions import db

users_cli = AppGroup("users", help="Manage user accounts.")
seed_cli = AppGroup("seed", help="Load example data.")
images_cli = AppGroup("images", help="Maintain stored image files.")


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


@images_cli.command("sweep")
@click.option("--dry-run", is_flag=True, help="List the stray files; remove nothing.")
@click.option(
    "--grace-minutes",
    type=click.IntRange(min=0),
    default=60,
    show_default=True,
    help="Leave files younger than this (uploads in flight).",
)
def images_sweep(dry_run: bool, grace_minutes: int) -> None:
    """Remove image files no image row names (left by a crash), and stale temporary files."""
    from app.services import images

    stray = images.sweep_files(dry_run=dry_run, grace=timedelta(minutes=grace_minutes))
    for key in stray:
        click.echo(key)
    verb = "would remove" if dry_run else "removed"
    click.echo(f"{verb} {len(stray)} file{'' if len(stray) == 1 else 's'}")


def register_cli(app: Flask) -> None:
    app.cli.add_command(users_cli)
    app.cli.add_command(seed_cli)
    app.cli.add_command(images_cli)
