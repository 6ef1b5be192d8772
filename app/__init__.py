"""The application factory."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask

from app.application import ServiceApp
from config import DEV_SECRET, SECRET_SETTINGS, Config, normalize_database_url

MIN_SECRET_LENGTH = 32  # HS256 keys shorter than the hash are weak (RFC 7518 3.2)


class InsecureConfiguration(RuntimeError):
    """Raised at start-up when a production app would run on a development secret."""


def create_app(overrides: Mapping[str, Any] | None = None) -> Flask:
    app = ServiceApp(__name__, instance_relative_config=True)
    app.config.from_object(Config)
    app.config.from_pyfile("config.py", silent=True)  # instance/config.py, if present
    app.config.update(overrides or {})
    app.config["SQLALCHEMY_DATABASE_URI"] = normalize_database_url(
        app.config["SQLALCHEMY_DATABASE_URI"]
    )
    if app.config.get("TESTING"):
        app.config["ENV_NAME"] = "testing"
    check_production_secrets(app)
    use_development_keys(app)
    Path(app.instance_path).mkdir(parents=True, exist_ok=True)
    for register in (
        register_extensions,
        register_area_hooks,
        register_blueprints,
        register_errors,
        register_cli,
        register_web,
        register_security_headers,
    ):
        register(app)
    return app


def register_area_hooks(app: Flask) -> None:
    """Everything areas plug into shared flows, in the order it runs (app.hooks)."""
    from app.hooks import AreaHooks
    from app.policies import notes as note_policy
    from app.policies import teams as team_policy
    from app.services import categories, compliance, identity, images, notes, teams, trackables

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
            identity.remove_identity_data,  # tokens, codes: last
        ),
        parent_removals=(images.remove_children_images,),  # a parent's images and files
    )


def use_development_keys(app: Flask) -> None:
    """In development, keys left at the well-known default become the instance's own
    random ones (app.devkeys); tests keep the default."""
    if app.config["ENV_NAME"] != "development":
        return
    from app.devkeys import development_keys

    unset = [name for name in SECRET_SETTINGS if app.config.get(name) in (None, "", DEV_SECRET)]
    if unset:
        app.config.update(development_keys(Path(app.config["DEV_KEYS_FILE"]), unset))


def check_production_secrets(app: Flask) -> None:
    if app.config["ENV_NAME"] in {"development", "testing"}:
        return
    missing = [name for name in SECRET_SETTINGS if app.config.get(name) in (None, "", DEV_SECRET)]
    if missing:
        raise InsecureConfiguration(
            f"Refusing to start in {app.config['ENV_NAME']}: set {', '.join(missing)} "
            "in the environment (each its own long random value)."
        )
    short = [name for name in SECRET_SETTINGS if len(str(app.config[name])) < MIN_SECRET_LENGTH]
    if short:
        raise InsecureConfiguration(
            f"Refusing to start: {', '.join(short)} must be at least "
            f"{MIN_SECRET_LENGTH} characters long."
        )


def register_extensions(app: Flask) -> None:
    from app import models  # noqa: F401 - every table on the metadata
    from app.auth import register_jwt
    from app.database import (
        enforce_foreign_keys,
        engine_options,
        guard_against_outages,
        ping_when_idle,
        track_sync_changes,
    )
    from app.extensions import db, init_limiter, jwt, migrate
    from app.jsonprovider import OrjsonProvider
    from app.logs import configure_logging

    app.json = OrjsonProvider(app)
    configure_logging(app)
    options = engine_options(app.config["SQLALCHEMY_DATABASE_URI"], app.config)
    app.config["SQLALCHEMY_ENGINE_OPTIONS"] = {
        **options,
        **app.config.get("SQLALCHEMY_ENGINE_OPTIONS", {}),
    }
    db.init_app(app)
    with app.app_context():
        enforce_foreign_keys(db.engine)
        guard_against_outages(app, db.engine)  # before the idle ping: a refusal pings nothing
        ping_when_idle(db.engine, app.config["DATABASE_PING_AFTER_IDLE_SECONDS"])
    track_sync_changes()
    migrate.init_app(app, db, directory=str(Path(app.root_path).parent / "migrations"))
    jwt.init_app(app)
    register_jwt(app)
    init_limiter(app)


def register_blueprints(app: Flask) -> None:
    from app.api import register_blueprints as register_api

    register_api(app)


def register_errors(app: Flask) -> None:
    from flask import Response
    from sqlalchemy.exc import DBAPIError

    from app.auth import answer_if_account_gone
    from app.database import is_conflict, register_outage_answers
    from app.errors import register_errors as register
    from app.errors import unexpected_error_response
    from app.extensions import db
    from app.services import compliance

    register(app, track_unexpected=compliance.track_unexpected_error)

    # The database away: 503, not a 500 with a ticket; other database errors stay 500s.
    def unexpected(error: Exception) -> Response:
        gone = answer_if_account_gone(error)  # deleted while the request wrote: 401
        if gone is not None:
            return gone
        return unexpected_error_response(compliance.track_unexpected_error(error))

    register_outage_answers(app, unexpected)

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
    from app.web.routes import register_web as register

    register(app)


def register_security_headers(app: Flask) -> None:
    """Security headers on every response, CORS for the allowed origins (app/headers.py)."""
    from app.headers import install_security_headers

    install_security_headers(app)
