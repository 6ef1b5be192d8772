"""The few shortcuts on library internals, behind one switch (`FAST_PATHS`), and the list
of every internal app/ touches (`INTERNALS`).

Each reaches past a library's public interface for a gain on its route (bench/README.md,
"Shortcuts on library internals") and rests on the library version it was tested with:
while a shortcut is on, a start on another version of its library is refused
(`check_versions`). `FAST_PATHS=off` turns them all off (public interfaces only, a little
slower); a comma-separated list turns on only those named. CI runs each shortcut's route
tests both ways. The switch is per process (the app made last sets it): a shortcut runs
where no app is at hand.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from importlib import metadata
from typing import Any

import flask_jwt_extended.view_decorators as jwt_views
from flask import Flask, current_app
from flask_jwt_extended import JWTManager
from flask_jwt_extended.config import config as jwt_config

# name -> (the distributions whose internals it uses, what it does)
SHORTCUTS: dict[str, tuple[tuple[str, ...], str]] = {
    "jwt_decode_cache": (
        ("flask-jwt-extended",),
        "a verified access token's claims and header kept until it expires (overrides a "
        "private method; the header read of flask_jwt_extended.view_decorators)",
    ),
    "limiter_hook": (
        ("flask-limiter",),
        "Flask-Limiter's before-request check removed while no app-wide or blueprint limit "
        "exists (every limit here is checked by its route's decorator)",
    ),
    "driver_reads": (
        ("sqlalchemy", "psycopg2-binary"),
        "the token's account read through psycopg2 with a statement compiled once "
        "(app.platform.database.get_by_driver), attached to the session as loaded",
    ),
    "driver_statements": (
        ("sqlalchemy", "psycopg2-binary"),
        "statements compiled once and sent through psycopg2 on the session's connection, "
        "values converted by their columns' types (execute_by_driver, insert_by_driver: "
        "the queries.py of the notes, shared and trackables areas)",
    ),
    "driver_cursor": (
        ("sqlalchemy", "psycopg2-binary"),
        "anonymous discovery's reads on a pooled connection of their own in autocommit, "
        "planned once per connection (cursor_alone, PreparedStatement; notes' queries.py)",
    ),
}

# The versions the shortcuts were tested with: the pins of requirements/runtime.txt
# (a test keeps the two equal, so `make lock UPGRADE=1` asks for this table too).
TESTED = {
    "flask-jwt-extended": "4.7.4",
    "flask-limiter": "4.1.1",
    "sqlalchemy": "2.1.9",
    "psycopg2-binary": "2.9.13",
    "flask": "3.1.3",
    "flask-smorest": "0.47.0",
    "flask-sqlalchemy": "3.1.1",
    "marshmallow": "4.4.0",
    "webargs": "8.7.1",
    "werkzeug": "3.1.9",
}

# Each library internal app/ touches, by the attribute it relies on: the shortcuts' (above,
# switched by FAST_PATHS), and those no public interface replaces, always on, each with
# what the contract needs of it. Their libraries are pinned in TESTED;
# tests/platform/test_internals.py finds every touch in app/, fails on one not listed
# here, and on a listed attribute the installed library no longer has.
INTERNALS: dict[str, tuple[str, str]] = {
    "flask_jwt_extended.JWTManager._decode_jwt_from_config": (
        "flask-jwt-extended",
        "shortcut jwt_decode_cache",
    ),
    "flask_limiter.Limiter._check_request_limit": ("flask-limiter", "shortcut limiter_hook"),
    "flask_smorest.Api._register_responses": (
        "flask-smorest",
        "the per-status responses of the document as problem+json",
    ),
    "webargs.core.Parser._raw_load_json": (
        "webargs",
        "JSON bodies read strictly (NaN, nesting, NUL refused), 415 for another media type",
    ),
    "webargs.core.Parser._handle_invalid_json_error": (
        "webargs",
        "a body that is not JSON answered as 400 invalid_json",
    ),
    "webargs.core.Parser._makeproxy": (
        "webargs",
        "a multipart form's files and text fields read by one schema",
    ),
    "marshmallow.validate.Regexp._format_error": (
        "marshmallow",
        "the validator's own message, from our whole-text Regexp",
    ),
    "werkzeug.wrappers.Request._load_form_data": (
        "werkzeug",
        "a form over its limits answered as 413 naming the limit",
    ),
    "flask_sqlalchemy.session.Session._db": (
        "flask-sqlalchemy",
        "the request session reaches the replica's engine",
    ),
    "sqlalchemy.orm.Session._flushing": (
        "sqlalchemy",
        "a flush writes to the primary whatever the request reads from",
    ),
    "flask.json.provider.JSONProvider._app": ("flask", "the JSON provider's app, as Flask's own"),
    "flask.json.provider.JSONProvider._prepare_response_obj": (
        "flask",
        "jsonify's arguments read as Flask reads them",
    ),
    "sqlalchemy.sql.compiler.SQLCompiler.visit_table:fromhints": (
        "sqlalchemy",
        "SQLite's index hints (INDEXED BY) on the tables of discovery",
    ),
}

_enabled: frozenset[str] = frozenset(SHORTCUTS)


class UntestedLibrary(RuntimeError):
    """A shortcut is on and its library is not the version it was tested with."""


def parse(setting: object) -> frozenset[str]:
    """`FAST_PATHS`: on/all (default), off/none, or a comma-separated list of names."""
    text = str(setting if setting is not None else "all").strip().lower()
    if text in {"", "all", "on", "true", "1"}:
        return frozenset(SHORTCUTS)
    if text in {"none", "off", "false", "0"}:
        return frozenset()
    names = frozenset(part.strip() for part in text.split(",") if part.strip())
    unknown = names - set(SHORTCUTS)
    if unknown:
        raise ValueError(
            f"FAST_PATHS names no shortcut {sorted(unknown)}; known: {sorted(SHORTCUTS)}"
        )
    return names


def configure(config: Mapping[str, Any]) -> None:
    """Set the process's shortcuts from the app's settings, after checking versions."""
    global _enabled
    enabled = parse(config.get("FAST_PATHS"))
    check_versions(enabled)
    _enabled = enabled


def on(name: str) -> bool:
    return name in _enabled


def check_versions(enabled: frozenset[str], installed: Callable[[str], str] | None = None) -> None:
    """Refuse shortcuts whose libraries are not at their tested versions, naming each."""
    version = installed or metadata.version
    problems = []
    for name in sorted(enabled):
        for distribution in SHORTCUTS[name][0]:
            found = version(distribution)
            if found != TESTED[distribution]:
                problems.append(
                    f"{name} relies on the internals of {distribution} {TESTED[distribution]}, "
                    f"and {found} is installed"
                )
    if problems:
        raise UntestedLibrary(
            "Refusing to start: "
            + "; ".join(problems)
            + ". Run the tests on the new version and update TESTED in app/platform/fast.py, "
            "or start with FAST_PATHS=off (public interfaces only)."
        )


# --- the shortcuts --------------------------------------------------------------------------


class JWTDecodeCache(JWTManager):
    """flask-jwt-extended's manager, remembering the tokens it verified (`jwt_decode_cache`).

    A client sends the same access token with every request until it expires, and
    verifying one took as long as the rest of an authenticated read (PyJWT parses the
    token three times: claims, header, then with the signature). A token verified once
    with these keys decodes to the same claims until it expires, so its claims are kept,
    per process, until then; an expired one is decoded again and refused as before.
    Its header, which flask-jwt-extended parses again after each decode (PyJWT's
    unverified header read: base64 and JSON, with a check of every character), is kept
    beside the claims and handed out only for a token verified here.
    Revocation does not depend on this: every request still compares the token's
    security stamp with the account's (app.auth)."""

    MAX_ENTRIES = 1024

    def __init__(self) -> None:
        super().__init__()
        self._verified: dict[tuple[Any, ...], tuple[float, dict[str, Any]]] = {}
        self._headers: dict[str, dict[str, Any]] = {}
        if jwt_views.get_unverified_jwt_headers is _library_headers:
            jwt_views.get_unverified_jwt_headers = self._unverified_headers

    def _decode_jwt_from_config(
        self, encoded_token: str, csrf_value: Any = None, allow_expired: bool = False
    ) -> dict:
        if not on("jwt_decode_cache"):
            return super()._decode_jwt_from_config(encoded_token, csrf_value, allow_expired)
        # Every key that could verify it: the current one and those it replaced (app.auth).
        previous = tuple(current_app.config.get("JWT_SECRET_KEYS_PREVIOUS", ()))
        key = (encoded_token, csrf_value, allow_expired, jwt_config.decode_key, previous)
        found = self._verified.get(key)
        if found is not None and (allow_expired or time.time() < found[0]):
            return dict(found[1])
        claims = super()._decode_jwt_from_config(encoded_token, csrf_value, allow_expired)
        if len(self._verified) >= self.MAX_ENTRIES:
            self._verified.clear()  # simpler than LRU, and as good for tokens reused in turn
            self._headers.clear()
        expires = claims.get("exp")
        if isinstance(expires, int | float):  # a token without expiry is not kept
            self._verified[key] = (expires + jwt_config.leeway, dict(claims))
            self._headers[encoded_token] = _library_headers(encoded_token)
        return claims

    def _unverified_headers(self, encoded_token: str) -> dict[str, Any]:
        """flask-jwt-extended's header read (right after it decoded the token): the kept
        header of a token verified here, else the library's own read."""
        found = self._headers.get(encoded_token) if on("jwt_decode_cache") else None
        return dict(found) if found is not None else _library_headers(encoded_token)


_library_headers = jwt_views.get_unverified_jwt_headers


APP_WIDE_LIMIT_SETTINGS = ("RATELIMIT_DEFAULT", "RATELIMIT_APPLICATION", "RATELIMIT_META")


def drop_limiter_hook(app: Flask, limiter: Any) -> bool:
    """`limiter_hook`: remove Flask-Limiter's before-request check when it has nothing to
    check: no app-wide limit setting and no blueprint limit (read through the limiter's
    `limit_manager`, as its own CLI does). Call it once every blueprint is registered, so
    a limit declared on a blueprint keeps the hook. Returns whether it was removed."""
    if not on("limiter_hook"):
        return False
    if any(app.config.get(name) for name in APP_WIDE_LIMIT_SETTINGS):
        return False
    if any(limiter.limit_manager.blueprint_limits(app, name) for name in app.blueprints):
        return False
    hooks = app.before_request_funcs.get(None, [])
    check = limiter._check_request_limit
    if check not in hooks:  # not installed (RATELIMIT_ENABLED off)
        return False
    hooks.remove(check)
    return True
