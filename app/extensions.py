"""Extensions, created unbound and initialised in create_app."""

from __future__ import annotations

from flask import Flask, request
from flask_limiter import Limiter
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy

from app.models.base import Base, render_item
from app.platform.database.replica import RoutingSession
from app.platform.fast import JWTDecodeCache


def client_ip() -> str:
    """The caller's address as resolved by integrations.geo (trusted proxies only)."""
    from app.integrations.client_ip import resolve_client_ip

    return resolve_client_ip(request)


db = SQLAlchemy(model_class=Base, session_options={"class_": RoutingSession})
migrate = Migrate(render_as_batch=True, compare_type=True, render_item=render_item)


jwt = JWTDecodeCache()
limiter = Limiter(key_func=client_ip, default_limits=[])


def init_limiter(app: Flask) -> None:
    """Bind the limiter. Every limit here is declared on its route (`limiter.limit`,
    `limiter.shared_limit`), whose decorator checks it when the route runs; its
    before-request check is removed by the factory when it has nothing to check
    (app.platform.fast, `limiter_hook`)."""
    from app.platform import ratelimit_storage  # noqa: F401 - registers the database:// storage

    limiter.init_app(app)
