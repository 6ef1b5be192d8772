"""Website sessions (contract notes: Website pages, Sign-in on the website; Account page):
a signed-in browser's cookie holds only a random id (256 bits) whose SHA-256 is a row
here, so sign-out, a new password or "sign out everywhere" ends it at once. The account
page lists them beside the app's sign-ins (refresh-token families) and ends either kind,
the caller's own only (policies.identity). Last use is written at most every
LAST_USE_EVERY, so a page view does not write each time.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select, update

from app.auth import Viewer
from app.extensions import db
from app.models.base import utcnow
from app.models.identity import RefreshToken, WebsiteSession
from app.models.user import User
from app.policies import identity as policy
from app.services.identity import tokens
from app.services.identity.devices import device_name

SESSION_BYTES = 32
LAST_USE_EVERY = timedelta(minutes=5)


@dataclass(frozen=True)
class SignedInBrowser:
    """A live website session: its account and its id (the row's, never the secret)."""

    user: User
    session_id: uuid.UUID
    last_used_utc: datetime


@dataclass(frozen=True)
class SessionView:
    """One line of the account page: a website session (`id` its row) or an app's
    sign-in (`id` its refresh-token family)."""

    id: uuid.UUID
    device: str
    started_utc: datetime
    last_used_utc: datetime
    is_this_browser: bool = False


@dataclass(frozen=True)
class AccountSessions:
    website: list[SessionView]
    apps: list[SessionView]


def _max_age(config: Mapping[str, Any]) -> timedelta:
    return timedelta(hours=float(config["SESSION_MAX_AGE_HOURS"]))


def start_website_session(user: User, *, user_agent: str | None, config: Mapping[str, Any]) -> str:
    """A new session for `user` on this browser; the raw id for its cookie (only its hash
    is stored). The user's sessions past SESSION_MAX_AGE_HOURS go at the same time."""
    now = utcnow()
    raw = secrets.token_urlsafe(SESSION_BYTES)
    db.session.execute(
        delete(WebsiteSession)
        .where(
            WebsiteSession.user_id == user.id,
            WebsiteSession.created_utc <= now - _max_age(config),
        )
        .execution_options(synchronize_session=False)
    )
    db.session.add(
        WebsiteSession(
            user_id=user.id,
            token_hash=tokens.sha256_hex(raw),
            security_stamp=user.security_stamp,
            device=device_name(user_agent),
            created_utc=now,
            last_used_utc=now,
        )
    )
    db.session.flush()
    return raw


def website_session_user(raw: str, *, config: Mapping[str, Any]) -> SignedInBrowser | None:
    """The browser's live session, or None when the id is unknown (signed out), its
    account's stamp changed, or it is older than SESSION_MAX_AGE_HOURS. One statement,
    which writes nothing (`note_use` writes the use when due)."""
    row = db.session.execute(
        select(WebsiteSession, User)
        .join(User, User.id == WebsiteSession.user_id)
        .where(WebsiteSession.token_hash == tokens.sha256_hex(raw))
    ).first()
    if row is None:
        return None
    record, user = row
    if record.security_stamp != user.security_stamp:
        return None
    if record.created_utc <= utcnow() - _max_age(config):
        return None
    return SignedInBrowser(user=user, session_id=record.id, last_used_utc=record.last_used_utc)


def note_use(browser: SignedInBrowser) -> bool:
    """Write the session's last use now, unless it was written within LAST_USE_EVERY (no
    statement then); whether it wrote (the caller commits). Conditional, so of two
    requests at once one writes."""
    now = utcnow()
    if now - browser.last_used_utc < LAST_USE_EVERY:
        return False
    written = db.session.execute(
        update(WebsiteSession)
        .where(
            WebsiteSession.id == browser.session_id,
            WebsiteSession.last_used_utc <= now - LAST_USE_EVERY,
        )
        .values(last_used_utc=now)
        .execution_options(synchronize_session=False)
    )
    return bool(written.rowcount)  # type: ignore[attr-defined]


def end_website_session(raw: str) -> None:
    """Sign-out: the browser's session is deleted (its cookie names nothing after)."""
    db.session.execute(
        delete(WebsiteSession)
        .where(WebsiteSession.token_hash == tokens.sha256_hex(raw))
        .execution_options(synchronize_session=False)
    )
    db.session.flush()


def account_sessions(
    viewer: Viewer, *, this_browser: uuid.UUID | None, config: Mapping[str, Any]
) -> AccountSessions:
    """The caller's live website sessions (this browser's marked) and app sign-ins (a
    refresh-token family with an unused, unrevoked, unexpired token of the current stamp),
    most recently used first."""
    user, now = viewer.account, utcnow()
    rows = db.session.scalars(
        select(WebsiteSession).where(
            WebsiteSession.user_id == user.id,
            WebsiteSession.security_stamp == user.security_stamp,
            WebsiteSession.created_utc > now - _max_age(config),
        )
    )
    website = [
        SessionView(row.id, row.device, row.created_utc, row.last_used_utc, row.id == this_browser)
        for row in rows
    ]
    live = db.session.scalars(
        select(RefreshToken).where(
            RefreshToken.user_id == user.id,
            RefreshToken.security_stamp == user.security_stamp,
            RefreshToken.used_utc.is_(None),
            RefreshToken.revoked_utc.is_(None),
            RefreshToken.expires_utc > now,
        )
    )
    # The newest token of a family was issued at its last refresh: the app's last use.
    families: dict[uuid.UUID, SessionView] = {}
    for token in live:
        seen = families.get(token.family_id)
        if seen is None or token.created_utc > seen.last_used_utc:
            started = token.signed_in_utc or token.created_utc
            view = SessionView(token.family_id, token.device or "", started, token.created_utc)
            families[token.family_id] = view
    return AccountSessions(
        website=sorted(website, key=lambda view: view.last_used_utc, reverse=True),
        apps=sorted(families.values(), key=lambda view: view.last_used_utc, reverse=True),
    )


def end_own_website_session(viewer: Viewer, session_id: uuid.UUID) -> None:
    """Sign out one of the caller's browsers (404 for anyone else's or an unknown id)."""
    found = policy.get_own_website_session(viewer, session_id)
    db.session.delete(found)
    db.session.flush()


def end_own_app_session(viewer: Viewer, family_id: uuid.UUID) -> None:
    """Sign out one of the caller's app sign-ins: its refresh tokens are revoked; its
    access token lasts out its minutes, as after the API's own revocation."""
    policy.require_own_family(viewer, family_id)
    tokens.revoke_family(family_id)


def sign_out_everywhere(viewer: Viewer) -> None:
    """Every website session and every app sign-in of the caller ends: the API's
    `forgetMachine` (a new security stamp, every refresh token revoked), so access tokens
    already out stop working at their next request too."""
    tokens.end_sessions(viewer.account)


def remove_expired_website_sessions(now: datetime, config: Mapping[str, Any]) -> int:
    """A worker clean-up: sessions past SESSION_MAX_AGE_HOURS. How many went."""
    removed = db.session.execute(
        delete(WebsiteSession)
        .where(WebsiteSession.created_utc <= now - _max_age(config))
        .execution_options(synchronize_session=False)
    )
    return int(removed.rowcount)  # type: ignore[attr-defined]
