"""Command-line tools: `flask users grant-superadmin EMAIL`, `flask seed demo`,
`flask reports list`, `flask reports resolve ID TEXT`, `flask images sweep [--dry-run]`,
`flask worker [--once]` (runs background jobs), `flask trackables rotate-code-key`,
`flask webhooks rotate-secrets-key`."""

from __future__ import annotations

import uuid
from datetime import timedelta

import click
from flask import Flask, current_app
from flask.cli import AppGroup

from app.extensions import db

users_cli = AppGroup("users", help="Manage user accounts.")
seed_cli = AppGroup("seed", help="Load example data.")
reports_cli = AppGroup("reports", help="Review content reports and support tickets.")


images_cli = AppGroup("images", help="Maintain stored image files.")
trackables_cli = AppGroup("trackables", help="Maintain trackable codes.")
webhooks_cli = AppGroup("webhooks", help="Maintain webhook signing secrets.")


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
    """Create a small realistic data set for trying the API and the pages (safe to run
    twice; it prints the accounts, the password and the trackables' codes every time)."""
    from app.seed import (
        demo_sign_in,
        seed_demo_notes,
        seed_demo_team,
        seed_demo_trackables,
        seed_demo_users,
    )

    config = current_app.config
    if config["ENV_NAME"] == "production":
        raise click.ClickException("the demo data set is not for production: nothing was made")
    click.echo(seed_demo_users())
    click.echo(seed_demo_notes())
    click.echo(seed_demo_team())
    click.echo(seed_demo_trackables(config))
    db.session.commit()
    click.echo(demo_sign_in(config))


@reports_cli.command("list")
@click.option(
    "--status",
    type=click.IntRange(0, 2),
    default=None,
    help="Only this status: 0 reported, 1 reviewing, 2 resolved.",
)
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True)
def list_reports(status: int | None, limit: int) -> None:
    """List reports and tracked support tickets, newest first (one per line)."""
    from app.models.compliance import PAGE_TYPE_LABELS, STATUS_LABELS, PageType, ReportStatus
    from app.services import compliance

    found = compliance.operator_reports(status=status, limit=limit)
    if not found:
        click.echo("No reports.")
    for report in found:
        reporter = report.reporter.user_name if report.reporter else "-"
        title = (report.report_title or report.report_explanation).replace("\n", " ")[:60]
        click.echo(
            f"{report.id}  {report.created_utc:%Y-%m-%d %H:%M}  "
            f"{STATUS_LABELS[ReportStatus(report.status)]:<9}  "
            f"{PAGE_TYPE_LABELS[PageType(report.page_type)]:<20}  {reporter:<20}  {title}"
        )


@reports_cli.command("resolve")
@click.argument("report_id", type=click.UUID)
@click.argument("text")
@click.option(
    "--reviewer", default="Operator", show_default=True, help="The reviewer name recorded."
)
def resolve_report(report_id: uuid.UUID, text: str, reviewer: str) -> None:
    """Resolve report REPORT_ID with resolution TEXT (which may not be blank)."""
    from app.errors import ApiError
    from app.services import compliance

    try:
        compliance.operator_resolve(report_id, text, reviewer=reviewer)
    except ApiError as error:
        db.session.rollback()
        messages = getattr(error, "extra", {}).get("errors") or {}
        detail = "; ".join(m for values in messages.values() for m in values) or error.detail
        raise click.ClickException(detail) from error
    db.session.commit()
    click.echo(f"Report {report_id} resolved.")


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


@trackables_cli.command("rotate-code-key")
@click.option(
    "--batch-size", type=click.IntRange(min=1), default=1000, show_default=True,
    help="Codes wrapped per transaction.",
)  # fmt: skip
def rotate_code_key(batch_size: int) -> None:
    """Wrap every stored code hash under the newest code key.

    Start with the new key in TRACKABLE_CODE_KEY and the old ones in
    TRACKABLE_CODE_KEYS_PREVIOUS (oldest first), in this command and in the serving app.
    Every printed code keeps working throughout; the command may be stopped and run again.
    """
    from flask import current_app

    from app.services import trackables

    settings = trackables.CodeSettings.from_config(current_app.config)
    if settings.generation == 0:
        raise click.ClickException(
            "Only one code key is configured: put the old key in TRACKABLE_CODE_KEYS_PREVIOUS "
            "and the new one in TRACKABLE_CODE_KEY."
        )
    trackables.check_code_keys(settings)
    left = trackables.unwrapped(settings)
    click.echo(f"{left} code{'' if left == 1 else 's'} to wrap under key generation "
               f"{settings.generation}")  # fmt: skip
    done = 0
    while wrapped := trackables.wrap_batch(settings, batch_size):
        db.session.commit()
        done += wrapped
        click.echo(f"wrapped {done} of {left}")
    db.session.commit()
    click.echo(f"done: {trackables.unwrapped(settings)} left under older keys")


@webhooks_cli.command("rotate-secrets-key")
@click.option(
    "--batch-size", type=click.IntRange(min=1), default=500, show_default=True,
    help="Subscriptions re-sealed per transaction.",
)  # fmt: skip
def rotate_secrets_key(batch_size: int) -> None:
    """Seal every stored webhook signing secret anew under WEBHOOK_SECRETS_KEY.

    Start with the new key in WEBHOOK_SECRETS_KEY and the old ones in
    WEBHOOK_SECRETS_KEYS_PREVIOUS, in this command and in the serving app; deliveries keep
    their signatures throughout, and the command may be stopped and run again. Then the
    old keys can go.
    """
    from flask import current_app

    from app.services import webhooks

    config = current_app.config
    if not config.get("WEBHOOK_SECRETS_KEYS_PREVIOUS"):
        raise click.ClickException(
            "No previous key is configured: put the old key in WEBHOOK_SECRETS_KEYS_PREVIOUS "
            "and the new one in WEBHOOK_SECRETS_KEY."
        )
    left = webhooks.sealed_under_older_keys(config)
    click.echo(f"{left} secret{'' if left == 1 else 's'} to seal under the new key")
    done, after = 0, None
    while True:
        changed, after = webhooks.reseal_batch(config, batch_size, after)
        db.session.commit()
        done += changed
        click.echo(f"sealed {done} of {left}")
        if after is None:
            break
    click.echo(f"done: {webhooks.sealed_under_older_keys(config)} left under older keys")


@click.command("worker")
@click.option("--once", is_flag=True, help="Run the jobs due now, then exit.")
@click.option(
    "--poll-seconds",
    type=click.FloatRange(min=0.01),
    default=None,
    help="Wait between looks for due jobs when idle [default: JOBS_POLL_SECONDS, 1].",
)
@click.option("--name", default=None, help="This worker in leases and logs [default: host:pid].")
@click.option(
    "--lanes",
    default=None,
    help="Threads per lane, as lane=threads pairs (webhooks=4,exports=0) [default: "
    "WORKER_LANES; one per lane, two for webhooks].",
)
def worker(once: bool, poll_seconds: float | None, name: str | None, lanes: str | None) -> None:
    """Run background jobs (account mail, ...) until SIGTERM or Ctrl-C.

    Start one or more beside the web server, on any machines sharing the database: each
    runs every lane (account mail, events, exports, webhooks) in threads of its own.
    SIGTERM lets the current jobs finish, then exits.
    """
    from flask import current_app

    from app.platform import jobs

    app = current_app._get_current_object()  # type: ignore[attr-defined]
    poll = poll_seconds if poll_seconds is not None else float(app.config["JOBS_POLL_SECONDS"])
    try:
        plan = jobs.lane_threads(app, lanes)
        if app.config.get("WORKER_METRICS_BIND"):
            jobs.parse_bind(str(app.config["WORKER_METRICS_BIND"]))
    except ValueError as error:
        raise click.UsageError(str(error)) from error
    ran = jobs.serve(app, poll_seconds=poll, once=once, name=name, lanes=plan)
    if once:
        click.echo(f"ran {ran} job{'' if ran == 1 else 's'}")


def register_cli(app: Flask) -> None:
    app.cli.add_command(users_cli)
    app.cli.add_command(seed_cli)
    app.cli.add_command(reports_cli)

    app.cli.add_command(images_cli)
    app.cli.add_command(trackables_cli)
    app.cli.add_command(webhooks_cli)
    app.cli.add_command(worker)
