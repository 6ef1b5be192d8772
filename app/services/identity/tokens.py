"""Refresh tokens, the end of every session, and email codes (decisions: Identity).

Refresh tokens are opaque random strings, stored as SHA-256 hashes, single use: redeeming
one marks it used and issues the next token of the same family; presenting a used token
again revokes the family. Email codes are signed with itsdangerous (SECRET_KEY, one salt
per purpose), expire after EMAIL_CODE_HOURS and carry a nonce whose hashed row is deleted
on use, so each code works once.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy import delete, select, update

from app.extensions import db
from app.models.base import utcnow
from app.models.identity import EmailCode, RefreshToken, WebsiteSession
from app.models.user import User
from app.platform.secret_keys import signing_keys

REFRESH_TOKEN_BYTES = 48

CONFIRM_EMAIL = "confirm_email"
CHANGE_EMAIL = "change_email"
RESET_PASSWORD = "reset_password"  # noqa: S105 - a purpose name, not a secret
EMAIL_CODE_PURPOSES = (CONFIRM_EMAIL, CHANGE_EMAIL, RESET_PASSWORD)


def sha256_hex(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _seconds(value: timedelta | int) -> int:
    return int(value.total_seconds()) if isinstance(value, timedelta) else int(value)


# --- refresh tokens ----------------------------------------------------------------------


def issue_refresh_token(
    user: User,
    *,
    config: Mapping[str, Any],
    family_id: uuid.UUID | None = None,
    device: str | None = None,
    signed_in_utc: datetime | None = None,
) -> str:
    """A new refresh token for `user` (a new family at sign-in, which names the `device`;
    the next ones of the family carry its device and sign-in time on). Returns the raw
    token; only its hash is stored."""
    now = utcnow()
    raw = secrets.token_urlsafe(REFRESH_TOKEN_BYTES)
    db.session.add(
        RefreshToken(
            user_id=user.id,
            family_id=family_id or uuid.uuid4(),
            token_hash=sha256_hex(raw),
            security_stamp=user.security_stamp,
            created_utc=now,
            expires_utc=now + timedelta(seconds=_seconds(config["REFRESH_TOKEN_EXPIRES"])),
            device=device,
            signed_in_utc=signed_in_utc or now,
        )
    )
    # Expired tokens serve no purpose any more, not even reuse detection.
    db.session.execute(
        delete(RefreshToken).where(RefreshToken.user_id == user.id, RefreshToken.expires_utc < now)
    )
    db.session.flush()
    return raw


def rotate_refresh_token(raw: str, *, config: Mapping[str, Any]) -> tuple[User, str] | None:
    """Redeem a refresh token: the user and the next token of its family, or None when it
    is unknown, expired, revoked or already used. A used token presented again revokes its
    family (the route commits that before answering 401)."""
    now = utcnow()
    token = db.session.scalar(
        select(RefreshToken).where(RefreshToken.token_hash == sha256_hex(raw))
    )
    if token is None or token.revoked_utc is not None:
        return None
    if token.used_utc is not None:
        revoke_family(token.family_id)
        return None
    user = db.session.get(User, token.user_id)
    if token.expires_utc <= now or user is None or user.security_stamp != token.security_stamp:
        return None
    # Conditional update: of two concurrent redemptions of one token, only one wins.
    claimed = db.session.execute(
        update(RefreshToken)
        .where(RefreshToken.id == token.id, RefreshToken.used_utc.is_(None))
        .values(used_utc=now)
        .execution_options(synchronize_session=False)
    )
    if claimed.rowcount != 1:  # type: ignore[attr-defined]
        revoke_family(token.family_id)
        return None
    following = issue_refresh_token(
        user,
        config=config,
        family_id=token.family_id,
        device=token.device,
        signed_in_utc=token.signed_in_utc or token.created_utc,
    )
    return user, following


def revoke_family(family_id: uuid.UUID) -> None:
    db.session.execute(
        update(RefreshToken)
        .where(RefreshToken.family_id == family_id, RefreshToken.revoked_utc.is_(None))
        .values(revoked_utc=utcnow())
        .execution_options(synchronize_session=False)
    )
    db.session.flush()


def end_sessions(user: User) -> None:
    """Rotate the security stamp, revoke every refresh token and delete every website
    session: each access token of the user stops working at its next request, each signed-in
    browser at its next page (password change or reset, forget machine, sign out
    everywhere)."""
    user.security_stamp = uuid.uuid4().hex
    revoke_refresh_tokens(user)
    delete_website_sessions(user)


def delete_website_sessions(user: User) -> None:
    db.session.execute(
        delete(WebsiteSession)
        .where(WebsiteSession.user_id == user.id)
        .execution_options(synchronize_session=False)
    )
    db.session.flush()


def revoke_refresh_tokens(user: User) -> None:
    """End every refresh token of the user (password change or reset, forget machine)."""
    db.session.execute(
        update(RefreshToken)
        .where(RefreshToken.user_id == user.id, RefreshToken.revoked_utc.is_(None))
        .values(revoked_utc=utcnow())
        .execution_options(synchronize_session=False)
    )
    db.session.flush()


# --- email codes -------------------------------------------------------------------------


@dataclass(frozen=True)
class EmailCodeCheck:
    """A valid, unused code: whose it is, what for, and the address it was sent to."""

    user: User
    purpose: str
    email: str


def _serializer(purpose: str, config: Mapping[str, Any]) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(signing_keys(config), salt=f"location-notes.{purpose}")


def new_email_code(
    user: User, purpose: str, *, email: str, config: Mapping[str, Any]
) -> tuple[str, EmailCode]:
    """A signed, expiring, single-use code, and the row that makes it usable, not yet
    added to the session: account mail adds the row once the mail has gone out, so no
    lock is held while the mail server answers, and a failed delivery stores nothing."""
    now = utcnow()
    nonce = secrets.token_urlsafe(24)
    payload = {
        "u": str(user.id),
        "p": purpose,
        "n": nonce,
        # A password reset or change rotates the stamp: outstanding reset codes die with it.
        "s": user.security_stamp,
    }
    code = _serializer(purpose, config).dumps(payload)
    row = EmailCode(
        nonce_hash=sha256_hex(nonce),
        user_id=user.id,
        purpose=purpose,
        email=email,
        created_utc=now,
        expires_utc=now + timedelta(hours=config["EMAIL_CODE_HOURS"]),
    )
    return code, row


def check_email_code(
    code: str, purpose: str, *, config: Mapping[str, Any]
) -> EmailCodeCheck | None:
    """A code that is genuine, unexpired, of this purpose, unused and (for a reset) of the
    current stamp; else None. Nothing changes: `use_email_code` spends it once the rest of
    the request is valid."""
    try:
        payload = _serializer(purpose, config).loads(
            code, max_age=int(config["EMAIL_CODE_HOURS"]) * 3600
        )
    except BadSignature:  # SignatureExpired is a BadSignature too
        return None
    if not isinstance(payload, dict) or payload.get("p") != purpose:
        return None
    row = db.session.scalar(
        select(EmailCode).where(
            EmailCode.nonce_hash == sha256_hex(str(payload.get("n"))),
            EmailCode.purpose == purpose,
        )
    )
    if row is None or row.expires_utc <= utcnow() or str(row.user_id) != payload.get("u"):
        return None
    user = db.session.get(User, row.user_id)
    if user is None:
        return None
    if purpose == RESET_PASSWORD and payload.get("s") != user.security_stamp:
        return None
    return EmailCodeCheck(user=user, purpose=purpose, email=row.email)


def use_email_code(check: EmailCodeCheck) -> None:
    """Spend a checked code, and the user's other codes of the same purpose with it."""
    discard_email_codes(check.user, check.purpose)


def discard_email_codes(user: User, purpose: str | None = None) -> None:
    """Delete the user's outstanding codes (of one purpose, or all)."""
    statement = delete(EmailCode).where(EmailCode.user_id == user.id)
    if purpose is not None:
        statement = statement.where(EmailCode.purpose == purpose)
    db.session.execute(statement.execution_options(synchronize_session=False))
    db.session.flush()


def delete_identity_rows(user: User) -> None:
    """Account deletion: every refresh token, website session and email code of the user."""
    db.session.execute(delete(RefreshToken).where(RefreshToken.user_id == user.id))
    delete_website_sessions(user)
    discard_email_codes(user)
