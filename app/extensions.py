"""Extensions, created unbound and initialised in create_app."""

from __future__ import annotations

from flask import request
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
