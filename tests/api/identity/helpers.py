"""Helpers shared by the identity tests: the memory outbox (once the worker has sent the
due mail), codes from mails, TOTP codes."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pyotp
from flask import Flask

from app.platform.mail import Mail
from tests.jobs import delivered_mail

LOGIN_URL = "/api/auth/login?useCookies=false&useSessionCookies=false"
STRONG_PASSWORD = "walking-by-the-river-42"
OTHER_STRONG_PASSWORD = "maps-and-lanterns-77"
# The machine code of each sign-in failure string (docs/contract/wire.md, Error codes).
SIGN_IN_CODES = {
    "Failed": "invalid_credentials",
    "LockedOut": "account_locked_out",
    "RequiresTwoFactor": "two_factor_required",
    "NotAllowed": "email_not_confirmed",
}


def mails_to(app: Flask, address: str) -> list[Mail]:
    """The mail delivered to `address`, the due account-mail jobs run first."""
    return [mail for mail in delivered_mail(app) if mail.to.lower() == address.lower()]


def last_mail_to(app: Flask, address: str) -> Mail:
    mails = mails_to(app, address)
    assert mails, f"no mail to {address}"
    return mails[-1]


def confirm_link(mail: Mail) -> str:
    """The path and query of the confirmation link in a mail."""
    match = re.search(r"https?://\S+/api/auth/confirmEmail\?\S+", mail.text)
    assert match, mail.text
    parts = urlsplit(match.group(0))
    return f"{parts.path}?{parts.query}"


def link_query(mail: Mail) -> dict[str, str]:
    query = parse_qs(urlsplit(confirm_link(mail)).query)
    return {key: values[0] for key, values in query.items()}


def reset_code(mail: Mail) -> str:
    match = re.search(r"password:\n\n(\S+)\n", mail.text)
    assert match, mail.text
    return match.group(1)


def totp(shared_key: str, steps_ahead: int = 0) -> str:
    """The TOTP code of the current 30 s step, or of a later one (still inside the allowed
    drift of one step), as an authenticator app would show it."""
    return pyotp.TOTP(shared_key).at(datetime.now(UTC) + timedelta(seconds=30 * steps_ahead))


def register(api: Any, email: str, user_name: str, password: str = STRONG_PASSWORD) -> Any:
    return api.post(
        "/api/auth/register", json={"email": email, "userName": user_name, "password": password}
    )


def bearer(api: Any, tokens: dict[str, Any]) -> Any:
    return api.with_token(tokens["accessToken"])
