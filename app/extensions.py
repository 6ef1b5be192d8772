"""Extensions, created unbound and initialised in create_app."""

from __future__ import annotations

from flask import Flask, request
from flask_jwt_extended import JWTManager
from flask_limiter import Limiter
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy

from app.models.base import Base, render_item


def client_ip() -> str:
    """The caller's address as resolved by integrations.geo (trusted proxies only)."""
    from app.integrations.client_ip import resolve_client_ip

    return resolve_client_ip(request)


db = SQLAlchemy(model_class=Base)
migrate = Migrate(render_as_batch=True, compare_type=True, render_item=render_item)
jwt = JWTManager()
limiter = Limiter(key_func=client_ip, default_limits=[])

# Limits that flask-limiter checks before every request (not only on the routes that
# declare one): none are used, and the check costs a request about as much as Flask's own
# dispatch (bench/README.md, "The cost of a request").
APP_WIDE_LIMIT_SETTINGS = ("RATELIMIT_DEFAULT", "RATELIMIT_APPLICATION", "RATELIMIT_META")


def init_limiter(app: Flask) -> None:
    """Bind the limiter. Every limit here is declared on its route (`limiter.limit`,
    `limiter.shared_limit`), whose decorator checks it when the route runs; the
    before-request check only serves app-wide limits (default, application, meta or
    blueprint limits), so without any it is removed."""
    limiter.init_app(app)
    if not any(app.config.get(name) for name in APP_WIDE_LIMIT_SETTINGS):
        app.before_request_funcs[None].remove(limiter._check_request_limit)
