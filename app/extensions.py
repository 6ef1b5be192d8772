"""Extensions, created unbound and initialised in create_app."""

from __future__ import annotations

import time
from typing import Any

from flask import Flask, request
from flask_jwt_extended import JWTManager
from flask_jwt_extended.config import config as jwt_config
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


class JWTDecodeCache(JWTManager):
    """flask-jwt-extended's manager, remembering the tokens it verified.

    A client sends the same access token with every request until it expires, and
    verifying one took as long as the rest of an authenticated read (PyJWT parses the
    token three times: claims, header, then with the signature). A token verified once
    with this key decodes to the same claims until it expires, so its claims are kept,
    per process, until then; an expired one is decoded again and refused as before.
    Revocation does not depend on this: every request still compares the token's
    security stamp with the account's (app.auth)."""

    MAX_ENTRIES = 1024

    def __init__(self) -> None:
        super().__init__()
        self._verified: dict[tuple[Any, ...], tuple[float, dict[str, Any]]] = {}

    def _decode_jwt_from_config(
        self, encoded_token: str, csrf_value: Any = None, allow_expired: bool = False
    ) -> dict:
        key = (encoded_token, csrf_value, allow_expired, jwt_config.decode_key)
        found = self._verified.get(key)
        if found is not None and (allow_expired or time.time() < found[0]):
            return dict(found[1])
        claims = super()._decode_jwt_from_config(encoded_token, csrf_value, allow_expired)
        if len(self._verified) >= self.MAX_ENTRIES:
            self._verified.clear()  # simpler than LRU, and as good for tokens reused in turn
        expires = claims.get("exp")
        if isinstance(expires, int | float):  # a token without expiry is not kept
            self._verified[key] = (expires + jwt_config.leeway, dict(claims))
        return claims


jwt = JWTDecodeCache()
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
    from app import ratelimit_storage  # noqa: F401 - registers the database:// storage

    limiter.init_app(app)
    hooks = app.before_request_funcs.get(None, [])
    check = limiter._check_request_limit
    # Not installed at all when RATELIMIT_ENABLED is off.
    if check in hooks and not any(app.config.get(name) for name in APP_WIDE_LIMIT_SETTINGS):
        hooks.remove(check)
