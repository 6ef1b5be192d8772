"""Access sessions for secret codes (contract: Active secret session; Authentication item 6;
decisions: Access sessions for secret codes).

A secret lookup or a QR visit opens a session for that trackable on the client. The client
holds one signed HttpOnly cookie whose only content is a random client id; the server keeps
one `TrackableAccessSession` row per client and trackable, keyed by a keyed hash of that id,
so a database leak gives no usable cookie. A signed-in caller's unlock is also stored on the
account, so their other devices reopen the trackable. Only the API and web layers read and
set the cookie; these functions take its values, except `access_session_unlocks`.
"""

from __future__ import annotations

import functools
import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask import current_app, has_request_context, request
from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy import delete, select

from app.extensions import db
from app.models.base import utcnow
from app.models.trackable import TrackableAccessSession, TrackableUnlock
from app.models.user import User
from app.platform.database import insert_ignoring_duplicates
from app.platform.secret_keys import record_hmac, record_key, signing_keys
from app.services.trackables import queries

COOKIE_SALT = "trackable-access-session"
CLIENT_KEYS = "trackable-access-clients"  # the purpose of the client keys' HMAC key
CLIENT_ID_BYTES = 32  # secrets.token_urlsafe(32): 43 characters


# SameSite=Lax, signed with SECRET_KEY (checked against its fallbacks too) and a salt of its own.
# A cookie with a bad signature, or older than its max age, is no cookie at all.
@dataclass(frozen=True)
class AccessCookie:
    """The access-session cookie of one deployment (config: TRACKABLE_ACCESS_COOKIE_*)."""

    name: str
    keys: tuple[str, ...]  # signing keys, the current one last (secret_keys.signing_keys)
    client_keys: bytes  # the key of the client keys (secret_keys.record_key)
    max_age_seconds: int
    secure: bool

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> AccessCookie:
        secure = config.get("TRACKABLE_ACCESS_COOKIE_SECURE")
        if secure is None:
            secure = config.get("ENV_NAME") == "production"
        return cls(
            name=config["TRACKABLE_ACCESS_COOKIE_NAME"],
            keys=tuple(signing_keys(config)),
            client_keys=record_key(config, CLIENT_KEYS),
            max_age_seconds=int(config["TRACKABLE_ACCESS_COOKIE_MAX_AGE_DAYS"]) * 86400,
            secure=bool(secure),
        )

    def _serializer(self) -> URLSafeTimedSerializer:
        return _serializer(self.keys)

    def sign(self, client_id: str) -> str:
        """The cookie value carrying `client_id`."""
        return self._serializer().dumps(client_id)

    def client_id(self, cookies: Mapping[str, str]) -> str | None:
        """The client id of a valid cookie among `cookies`; None when absent, tampered,
        signed with another key or expired."""
        value = cookies.get(self.name)
        if not value:
            return None
        try:
            client_id = self._serializer().loads(value, max_age=self.max_age_seconds)
        except BadSignature:  # includes an expired signature
            return None
        return client_id if isinstance(client_id, str) and client_id else None

    def client_key(self, cookies: Mapping[str, str]) -> str | None:
        """The server-side key of the client a valid cookie names, or None."""
        client_id = self.client_id(cookies)
        return _client_key(self.client_keys, client_id) if client_id else None

    def options(self) -> dict[str, Any]:
        """Keyword arguments of `Response.set_cookie` besides name and value."""
        return {
            "max_age": self.max_age_seconds,
            "path": "/",
            "httponly": True,
            "samesite": "Lax",
            "secure": self.secure,
        }


@functools.lru_cache(maxsize=4)
def _serializer(keys: tuple[str, ...]) -> URLSafeTimedSerializer:
    """The cookie's serializer for its keys, made once (it keeps no state between uses)."""
    return URLSafeTimedSerializer(list(keys), salt=COOKIE_SALT)


def new_client_id() -> str:
    return secrets.token_urlsafe(CLIENT_ID_BYTES)


def client_key(config: Mapping[str, Any], client_id: str) -> str:
    """Where a client's sessions are kept: HMAC-SHA256 of its id, hex."""
    return _client_key(record_key(config, CLIENT_KEYS), client_id)


def _client_key(key: bytes, client_id: str) -> str:
    return record_hmac(key, b"trackable-access-client:" + client_id.encode())


# Opening one twice, even by two concurrent requests, leaves one row.
def open_session(client: str, trackable_id: uuid.UUID) -> uuid.UUID:
    """The id of the client's session for the trackable, opened now or refreshed
    (`last_used_utc`): one statement, which a concurrent twin cannot make twice."""
    return queries.open_access_session(client, trackable_id, uuid.uuid4(), utcnow())


def record_unlock(user: User, trackable_id: uuid.UUID) -> None:
    """Link the unlock to the account (idempotent, safe against a concurrent twin)."""
    insert_ignoring_duplicates(
        db.session,
        TrackableUnlock,
        [TrackableUnlock.user_id, TrackableUnlock.trackable_id],
        [{"user_id": user.id, "trackable_id": trackable_id, "unlocked_utc": utcnow()}],
    )


def find_session(client: str | None, trackable_id: uuid.UUID) -> TrackableAccessSession | None:
    if client is None:
        return None
    return db.session.scalar(
        select(TrackableAccessSession).where(
            TrackableAccessSession.client_key == client,
            TrackableAccessSession.trackable_id == trackable_id,
        )
    )


def session_trackable_ids(client: str | None) -> frozenset[uuid.UUID]:
    """The trackables this client holds a session for."""
    if client is None:
        return frozenset()
    return frozenset(
        db.session.scalars(
            select(TrackableAccessSession.trackable_id).where(
                TrackableAccessSession.client_key == client
            )
        )
    )


def end_session(client: str | None, trackable_id: uuid.UUID) -> None:
    """End this client's session for the trackable, if any (other clients' sessions and
    the account unlock stay)."""
    if client is None:
        return
    db.session.execute(
        delete(TrackableAccessSession).where(
            TrackableAccessSession.client_key == client,
            TrackableAccessSession.trackable_id == trackable_id,
        )
    )


def access_session_unlocks(user: User | None) -> Mapping[str, Any]:
    """Viewer part (app.hooks): the trackables this request's client holds an access
    session for, by its cookie; build_viewer merges them with the account's unlocks. With
    them, which session that is for each (`access_sessions`): an anonymous writer's proof
    for its own entries. The one place here that reads the request: a viewer part is
    called inside it."""
    if not has_request_context():
        return {}
    client = AccessCookie.from_config(current_app.config).client_key(request.cookies)
    if client is None:
        return {}
    rows = db.session.execute(
        select(TrackableAccessSession.trackable_id, TrackableAccessSession.id).where(
            TrackableAccessSession.client_key == client
        )
    )
    sessions = {row.trackable_id: row.id for row in rows}
    return {"unlocked_trackable_ids": frozenset(sessions), "access_sessions": sessions}
