"""Sign-in (contract: Authentication; decisions: Identity): password, then the two-factor
code when 2FA is on, with lockout counted per email whether or not an account exists.

A failure is one of the strings clients of this identity API already handle: `Failed`,
`LockedOut`, `RequiresTwoFactor`, `NotAllowed`. Failures are counted in the database
(services.lockout); the route commits them before answering 401.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.models.base import utcnow
from app.models.user import User
from app.services.identity import tokens, two_factor
from app.services.identity.accounts import find_user_by_email, normalize_email
from app.services.identity.devices import device_name
from app.services.identity.lockout import email_key, forget_failures, is_locked_out, record_failure
from app.services.identity.passwords import hash_password, needs_rehash, verify_password

FAILED = "Failed"
LOCKED_OUT = "LockedOut"
REQUIRES_TWO_FACTOR = "RequiresTwoFactor"
NOT_ALLOWED = "NotAllowed"


@dataclass(frozen=True)
class SignIn:
    """The outcome: a user and a new refresh token, or the failure string."""

    user: User | None = None
    refresh_token: str | None = None
    failure: str | None = None


def sign_in(
    *,
    email: str,
    password: str,
    config: Mapping[str, Any],
    two_factor_code: str | None = None,
    two_factor_recovery_code: str | None = None,
    issue_refresh_token: bool = True,
    user_agent: str | None = None,
) -> SignIn:
    """Check lockout, password, confirmation (when required) and the second factor. The
    website signs in without a refresh token (`issue_refresh_token=False`): its session
    is a website session (`website_sessions`). The refresh token's family names the
    device of `user_agent`."""
    normalized = normalize_email(email)
    key = email_key(normalized, config=config)
    now = utcnow()
    if is_locked_out(key, now):
        return SignIn(failure=LOCKED_OUT)
    user = find_user_by_email(normalized)
    # An unknown email still costs one Argon2 verification (passwords.verify_password).
    if not verify_password(user.password_hash if user else None, password) or user is None:
        return _failure(key, now, config)
    # After the password, not before: an unconfirmed account is not revealed to strangers.
    if config["REQUIRE_CONFIRMED_EMAIL"] and not user.is_email_confirmed:
        return SignIn(failure=NOT_ALLOWED)
    if user.is_two_factor_enabled:
        if two_factor_code:
            passed = two_factor.accept_totp(user, two_factor_code)
        elif two_factor_recovery_code:
            passed = two_factor.redeem_recovery_code(user, two_factor_recovery_code, config=config)
        else:
            return SignIn(failure=REQUIRES_TWO_FACTOR)
        if not passed:
            return _failure(key, now, config)
    forget_failures(normalized, config=config)
    if needs_rehash(user.password_hash):
        user.password_hash = hash_password(password)
    if not issue_refresh_token:
        return SignIn(user=user)
    device = device_name(user_agent)
    raw = tokens.issue_refresh_token(user, config=config, device=device)
    return SignIn(user=user, refresh_token=raw)


def _failure(key: str, now: datetime, config: Mapping[str, Any]) -> SignIn:
    return SignIn(failure=LOCKED_OUT if record_failure(key, now, config) else FAILED)
