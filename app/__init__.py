"""The application factory."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from flask import Flask

from app.extensions import limiter
from app.platform import fast, forking
from app.platform.application import ServiceApp
from app.platform.startup_checks import (
    InsecureConfiguration,
    check_production_settings,
    read_settings,
)
from config import DEV_SECRET, SECRET_SETTINGS, normalize_database_url

__all__ = ["InsecureConfiguration", "create_app"]


def create_app(overrides: Mapping[str, Any] | None = None) -> Flask:
    app = ServiceApp(__name__, instance_relative_config=True)
    read_settings(app.config)
    app.config.update(overrides or {})
    app.config["SQLALCHEMY_DATABASE_URI"] = normalize_database_url(
        app.config["SQLALCHEMY_DATABASE_URI"]
    )
    if app.config.get("TESTING"):
        app.config["ENV_NAME"] = "testing"
    check_production_settings(app.config)
    fast.configure(app.config)
    use_development_keys(app)
    use_served_address(app)
    Path(app.instance_path).mkdir(parents=True, exist_ok=True)
    for register in (
        register_telemetry,  # first: its request span covers every hook, its SQL every engine
        register_extensions,
        register_metrics,
        register_dependencies,
        register_area_hooks,
        register_job_kinds,
        register_blueprints,
        register_errors,
        register_cli,
        register_web,
        register_security_headers,
        check_code_keys,
        check_webhook_secrets_key,
        check_records_key,
    ):
        register(app)
    fast.drop_limiter_hook(app, limiter)  # once every blueprint (and its limits) is in
    return app


def check_code_keys(app: Flask) -> None:
    """Refuse to start with code keys the stored codes were not made with (every printed
    code would be a miss), and record a first key or a rotation's new one. Tests build
    their own tables and keys; a database that cannot be reached now is checked by the
    next start."""
    if app.config["ENV_NAME"] == "testing":
        return
    import logging

    from sqlalchemy.exc import DBAPIError

    from app.extensions import db
    from app.platform.database import is_outage
    from app.services import trackables

    with app.app_context():
        try:
            trackables.check_code_keys(trackables.CodeSettings.from_config(app.config))
        except trackables.CodeKeyMismatch as error:
            raise InsecureConfiguration(str(error)) from None
        except DBAPIError as error:
            if not is_outage(error):
                raise
            logging.getLogger(__name__).warning(
                "the code keys were not checked: the database is not reachable"
            )
        finally:
            db.session.remove()


def check_webhook_secrets_key(app: Flask) -> None:
    """Refuse to start with a WEBHOOK_SECRETS_KEY that cannot open the stored signing
    secrets (every delivery would fail). Skipped as `check_code_keys` is."""
    from app.services import webhooks

    _refuse_at_start(
        app, lambda: webhooks.check_secrets_key(app.config), webhooks.SecretsKeyMismatch
    )


def check_records_key(app: Flask) -> None:
    """Refuse to start with a records key (RECORDS_KEY, else SECRET_KEY) other than the one
    the stored recovery codes and unlock sessions were made under, and record the first.
    Skipped as `check_code_keys` is."""
    from app.extensions import db
    from app.platform import secret_keys

    _refuse_at_start(
        app,
        lambda: secret_keys.check_records_key(app.config, db.session),
        secret_keys.RecordsKeyMismatch,
    )


def _refuse_at_start(app: Flask, check: Callable[[], object], mismatch: type[Exception]) -> None:
    """Run a start's key check: its mismatch refuses the start; an unreachable database
    leaves the check to the next start."""
    if app.config["ENV_NAME"] == "testing":
        return
    from sqlalchemy.exc import DBAPIError

    from app.extensions import db
    from app.platform.database import is_outage

    with app.app_context():
        try:
            check()
        except mismatch as error:
            raise InsecureConfiguration(str(error)) from None
        except DBAPIError as error:
            if not is_outage(error):
                raise
        finally:
            db.session.remove()


def register_area_hooks(app: Flask) -> None:
    """Everything areas plug into shared flows, in the order it runs (app.hooks)."""
    from app.hooks import AreaHooks
    from app.policies import notes as note_policy
    from app.policies import teams as team_policy
    from app.services import (
        categories,
        compliance,
        events,
        identity,
        images,
        notes,
        privacy,
        teams,
        trackables,
        webhooks,
    )
    from app.services.shared import budgets

    app.extensions["area_hooks"] = AreaHooks(
        viewer_parts=(
            team_policy.active_team_roles,  # Viewer.team_roles
            note_policy.account_unlocks,  # Viewer.unlocked_trackable_ids (account)
            trackables.access_session_unlocks,  # ...and this client's access-cookie sessions
        ),
        account_cleanups=(
            # Teams first: a sole admin's team passes on or is dismantled, and the user's
            # notes in remaining teams go to an admin before the user's notes are deleted.
            teams.end_account_memberships,
            trackables.delete_account_trackables,  # before the notes its stops point at
            notes.delete_account_notes,
            categories.delete_account_categories,  # after the notes in them
            compliance.detach_account_reports,  # reports stay for moderation, reporter gone
            # After every parent went (each removal above took its images): the profile's
            # images, and the count of all the account's images removed.
            images.delete_account_images,
            budgets.delete_account_spends,  # what it counted against its budgets
            events.delete_account_mail,  # mail settings, pending mail and digest
            events.delete_account_notifications,  # the inbox
            events.delete_account_area_watches,
            webhooks.delete_account_webhooks,  # its subscriptions, personal and team
            privacy.delete_account_exports,  # its data exports, files after the commit
            identity.remove_identity_data,  # tokens, codes: last
        ),
        parent_removals=(
            images.remove_children_images,  # a parent's images and files
            webhooks.remove_team_webhooks,  # a team's subscriptions
        ),
        event_listeners=(
            events.mail_notifications,  # queues mail as each user's setting asks
            webhooks.on_event,  # deliveries of what the inbox heard
        ),
    )


def register_job_kinds(app: Flask) -> None:
    """Every kind of background job a worker runs (app.platform.jobs), by area."""
    from app.platform.jobs import install_job_kinds
    from app.services import events, identity, privacy, webhooks

    install_job_kinds(
        app,
        (
            *identity.JOB_KINDS,  # account mail
            *events.JOB_KINDS,  # an event's fan-out to inboxes
            *events.MAIL_JOB_KINDS,  # notification mail: one per notification, daily digests
            *webhooks.JOB_KINDS,  # webhook deliveries, and the mail of one switched off
            *privacy.JOB_KINDS,  # data exports, and the mail that one is ready
        ),
        clean_ups=(
            webhooks.remove_old_deliveries,  # deliveries kept 30 days
            privacy.sweep_exports,  # expired exports' files, old records, stray files
            identity.remove_expired_website_sessions,  # past SESSION_MAX_AGE_HOURS
        ),
    )


def use_development_keys(app: Flask) -> None:
    """In development, keys left at the well-known default become the instance's own
    random ones (app.platform.devkeys); tests keep the default."""
    if app.config["ENV_NAME"] != "development":
        return
    from app.platform.devkeys import development_keys

    unset = [name for name in SECRET_SETTINGS if app.config.get(name) in (None, "", DEV_SECRET)]
    if unset:
        app.config.update(development_keys(Path(app.config["DEV_KEYS_FILE"]), unset))


def use_served_address(app: Flask) -> None:
    """Outside production, scan URLs and mail links left without PUBLIC_BASE_URL name the
    address gunicorn serves at (HOST and PORT, as gunicorn.conf.py binds): never the
    request's Host header, which a client chooses."""
    if app.config.get("PUBLIC_BASE_URL"):
        return
    host = os.environ.get("HOST", "127.0.0.1")
    if host in {"0.0.0.0", "::", ""}:  # noqa: S104 - every interface: name the loopback one
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    app.config["PUBLIC_BASE_URL"] = f"http://{host}:{os.environ.get('PORT', '8000')}"


def register_extensions(app: Flask) -> None:
    from app import models  # noqa: F401 - every table on the metadata
    from app.auth import register_jwt
    from app.extensions import db, init_limiter, jwt, migrate
    from app.platform.database import (
        enforce_foreign_keys,
        engine_options,
        guard_against_outages,
        ping_when_idle,
        savepoints_inside_transactions,
    )
    from app.platform.database.replica import BIND as REPLICA_BIND
    from app.platform.database.replica import (
        read_without_transactions,
        replica_options,
        route_reads,
    )
    from app.platform.jsonprovider import OrjsonProvider
    from app.platform.logs import configure_logging
    from app.services.sync import track_sync_changes

    app.json = OrjsonProvider(app)
    configure_logging(app)
    options = engine_options(app.config["SQLALCHEMY_DATABASE_URI"], app.config)
    app.config["SQLALCHEMY_ENGINE_OPTIONS"] = {
        **options,
        **app.config.get("SQLALCHEMY_ENGINE_OPTIONS", {}),
    }
    replica = replica_options(app.config)
    if replica is not None:
        replica["url"] = normalize_database_url(replica["url"])
        app.config["SQLALCHEMY_BINDS"] = {
            REPLICA_BIND: {**replica, **engine_options(replica["url"], app.config)}
        }
    db.init_app(app)
    with app.app_context():
        enforce_foreign_keys(db.engine)
        savepoints_inside_transactions(db.engine)
        guard_against_outages(app, db.engine)  # before the idle ping: a refusal pings nothing
        ping_when_idle(db.engine, app.config["DATABASE_PING_AFTER_IDLE_SECONDS"])
        if replica is not None:
            ping_when_idle(db.engines[REPLICA_BIND], app.config["DATABASE_PING_AFTER_IDLE_SECONDS"])
            route_reads(app, db.engines[REPLICA_BIND])
        read_without_transactions(app, db.engine)  # after the replica's choice
    forking.after_fork(
        lambda: _release_pools(app, close=False), lambda: _release_pools(app, close=True)
    )
    track_sync_changes()
    migrate.init_app(app, db, directory=str(Path(app.root_path).parent / "migrations"))
    jwt.init_app(app)
    register_jwt(app)
    init_limiter(app)


def _release_pools(app: Flask, *, close: bool) -> None:
    from app.extensions import db
    from app.platform.database import release_pools

    with app.app_context():
        release_pools(db.engines.values(), close=close)


def register_dependencies(app: Flask) -> None:
    """What readiness and /metrics check beside the database (app.platform.dependencies)."""
    from app.platform.dependencies import add_dependency
    from app.services import images

    if app.config["IMAGE_STORAGE"] == "s3":
        add_dependency(
            app,
            "objectStore",
            lambda: images.check_store(app.config),
            serves="image uploads and downloads, personal data exports",
        )


def register_metrics(app: Flask) -> None:
    """Requests counted and timed around the whole app, and the database pool measured
    (app.platform.metrics; served at /metrics by app.platform.probes)."""
    from app.extensions import db
    from app.platform.database import measure_pool
    from app.platform.metrics import RequestMetrics

    with app.app_context():
        measure_pool(db.engine)  # after the breaker and the idle ping (register_extensions)
    app.wsgi_app = RequestMetrics(app.wsgi_app)  # type: ignore[method-assign]


def register_telemetry(app: Flask) -> None:
    """Optional error reporting (SENTRY_DSN) and tracing (OTEL_EXPORTER_OTLP_ENDPOINT,
    OTEL_TRACING), both off by default (app.platform.telemetry)."""
    from app.platform.telemetry import start_telemetry

    start_telemetry(app)


def register_blueprints(app: Flask) -> None:
    from app.api import register_blueprints as register_api

    register_api(app)


def register_errors(app: Flask) -> None:
    from flask import Response
    from sqlalchemy.exc import DBAPIError

    from app.auth import answer_if_account_gone
    from app.errors import register_errors as register
    from app.errors import unexpected_error_response
    from app.extensions import db
    from app.platform.database import is_conflict, register_outage_answers
    from app.platform.ratelimit_storage import register_store_outage_answer
    from app.platform.telemetry import reporting
    from app.services import compliance

    # Tracked under a ticket, then reported (Sentry, the trace) when that is on.
    track_unexpected = reporting(app, compliance.track_unexpected_error)
    register(app, track_unexpected=track_unexpected)

    # The database away: 503, not a 500 with a ticket; other database errors stay 500s.
    def unexpected(error: Exception) -> Response:
        gone = answer_if_account_gone(error)  # deleted while the request wrote: 401
        if gone is not None:
            return gone
        return unexpected_error_response(track_unexpected(error))

    register_outage_answers(app, unexpected)
    register_store_outage_answer(app)  # Redis holding the limits, away: 503 too

    # A deadlock (or serialization failure) ended the request's transaction so that a
    # concurrent one could go on: run the request again, once, from a clean session.
    if isinstance(app, ServiceApp):
        app.retry_when = is_conflict
        app.before_retry = start_again

    @app.teardown_request
    def discard_uncommitted(error: BaseException | None) -> None:
        # A route commits once when it succeeds; whatever a failed request flushed is
        # discarded here, even when the app context outlives the request (tests, CLI).
        # A request that never touched the session has nothing to discard.
        if db.session.registry.has():
            try:
                db.session.rollback()
            except DBAPIError:
                # The connection died with the database (an outage): the server dropped
                # the transaction with it. Let go of the connection without a rollback,
                # rather than fail the request after its answer was made.
                db.session().invalidate()


def start_again() -> None:
    """Before a request runs again: its transaction rolled back, its caller forgotten
    (read and locked afresh), its uploads readable from the start."""
    from flask import request

    from app.auth import forget_caller
    from app.extensions import db

    db.session.rollback()
    forget_caller()
    for upload in request.files.values():
        upload.stream.seek(0)


def register_cli(app: Flask) -> None:
    from app.cli import register_cli as register

    register(app)


def register_web(app: Flask) -> None:
    """The operator's probes and /metrics (app.platform.probes), then the website."""
    from app.platform.probes import install_probes
    from app.web.routes import register_web as register

    install_probes(app)
    register(app)


def register_security_headers(app: Flask) -> None:
    """Security headers on every response, CORS for the allowed origins
    (app/platform/headers.py); pages allow images from where /Images/... redirects."""
    from app.platform.headers import install_security_headers
    from app.services import images

    install_security_headers(app, image_origins=images.redirect_origins)
