"""Accounts (contract: Identity and account, Authentication; decisions: Identity):
registration, password rules, email confirmation and change, password reset, the
manage/info settings and account deletion. Sign-in is in `sign_in`, lockout in `lockout`;
the mail these use cases ask for is written and sent later by a worker (`account_mail`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from sqlalchemy import exc, func, select

from app.auth import Viewer
from app.error_codes import Code
from app.errors import Unauthorized, ValidationFailed
from app.extensions import db
from app.hooks import AccountCleanup
from app.models.user import User
from app.platform import jobs
from app.platform.database import get_for_write
from app.services.identity import tokens
from app.services.identity.lockout import forget_failures
from app.services.identity.passwords import hash_password, verify_password
from app.services.identity.two_factor import delete_recovery_codes
from app.services.shared.account_deletion import DeletionCounts, delete_account

COMMON_PASSWORDS_FILE = Path(__file__).resolve().parents[2] / "data" / "common_passwords.txt"
USER_NAME = re.compile(r"^[a-z0-9_]{3,32}$")
# Names that could pass for the service speaking, or collide with routes and handles.
RESERVED_USER_NAMES = frozenset(
    {
        "admin", "administrator", "api", "system", "support", "root", "superuser", "sysadmin",
        "moderator", "mod", "staff", "team", "help", "helpdesk", "info", "security", "abuse",
        "postmaster", "webmaster", "hostmaster", "noreply", "no_reply", "mail", "email",
        "null", "none", "undefined", "anonymous", "guest", "me", "self", "owner",
        "account", "accounts", "auth", "login", "logout", "register", "signin", "signup",
        "settings", "profile", "profiles", "user", "users", "public", "private", "static",
        "docs", "status", "images", "maps", "notes", "teams", "trackables", "trackable",
        "compliance", "sync", "location_notes", "locationnotes", "official",
    }
)  # fmt: skip

OLD_REQUIRED_MESSAGE = (
    "The old password is required to set a new password. If the old password is forgotten, "
    "use /resetPassword."
)
CURRENT_REQUIRED_MESSAGE = "The current password is required to change the email address."
INCORRECT_MESSAGE = "Incorrect password."
INVALID_CODE = "Invalid token."

# The job kinds of account mail (handlers in `account_mail`). Payloads name the address or
# the account, never a code: the code is made when the mail is written.
CONFIRMATION_MAIL = "identity.confirmation_mail"
EMAIL_CHANGE_MAIL = "identity.email_change_mail"
PASSWORD_RESET_MAIL = "identity.password_reset_mail"  # noqa: S105 - a job kind


def normalize_email(email: str) -> str:
    return email.strip().lower()


def find_user_by_email(normalized_email: str) -> User | None:
    return db.session.scalar(select(User).where(User.normalized_email == normalized_email))


def email_taken(normalized_email: str, *, other_than: User | None = None) -> bool:
    query = select(func.count()).select_from(User).where(User.normalized_email == normalized_email)
    if other_than is not None:
        query = query.where(User.id != other_than.id)
    return bool(db.session.scalar(query))


# --- password rules ----------------------------------------------------------------------


@cache
def common_passwords() -> frozenset[str]:
    lines = COMMON_PASSWORDS_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip().lower() for line in lines if line and not line.startswith("# "))


def password_problems(
    password: str, *, email: str, user_name: str, config: Mapping[str, Any]
) -> list[str]:
    """Why a new password is refused (empty when it is acceptable): 8-128 characters, not
    on the common-password list, not the email address or the user name."""
    problems = []
    minimum, maximum = config["PASSWORD_MIN_LENGTH"], config["PASSWORD_MAX_LENGTH"]
    if len(password) < minimum:
        problems.append(f"Passwords must be at least {minimum} characters.")
    if len(password) > maximum:
        problems.append(f"Passwords must be at most {maximum} characters.")
    lowered = password.strip().lower()
    if lowered in common_passwords():
        problems.append("This password is too common; choose one that is harder to guess.")
    if lowered in {email.strip().lower(), user_name.strip().lower()}:
        problems.append("The password must not be the email address or the user name.")
    return problems


def set_password(user: User, password: str) -> None:
    """Store a new password; every existing session of the user ends."""
    user.password_hash = hash_password(password)
    tokens.end_sessions(user)
    tokens.discard_email_codes(user, tokens.RESET_PASSWORD)


# --- registration and email codes --------------------------------------------------------


def register(*, email: str, user_name: str, password: str, config: Mapping[str, Any]) -> User:
    """Create an account and ask for its confirmation mail (no token: contract)."""
    normalized = normalize_email(email)
    errors: dict[str, list[str]] = {}
    if email_taken(normalized):
        errors["email"] = [f"Email '{email}' is already taken."]
    if user_name in RESERVED_USER_NAMES:
        errors["userName"] = [f"User name '{user_name}' is reserved."]
    elif db.session.scalar(select(func.count()).where(User.user_name == user_name)):
        errors["userName"] = [f"User name '{user_name}' is already taken."]
    problems = password_problems(password, email=email, user_name=user_name, config=config)
    if problems:
        errors["password"] = problems
    if errors:
        raise ValidationFailed(errors, code=Code.EMAIL_TAKEN if "email" in errors else None)
    user = User(
        email=email,
        normalized_email=normalized,
        user_name=user_name,
        password_hash=hash_password(password),
    )
    try:
        with db.session.begin_nested():  # two registrations racing for one name or email
            db.session.add(user)
    except exc.IntegrityError:
        if email_taken(normalized):
            raise ValidationFailed(
                {"email": [f"Email '{email}' is already taken."]}, code=Code.EMAIL_TAKEN
            ) from None
        raise ValidationFailed(
            {"userName": [f"User name '{user_name}' is already taken."]}
        ) from None
    jobs.enqueue(CONFIRMATION_MAIL, {"email": user.email})
    return user


def resend_confirmation(email: str) -> None:
    """Ask for a new confirmation mail to `email`. The worker finds out whether an
    unconfirmed account has it; here every address costs the same (one job row), so the
    answer's timing tells nobody who is registered."""
    jobs.enqueue(CONFIRMATION_MAIL, {"email": email})


def forgot_password(email: str) -> None:
    """Ask for a reset-code mail to `email`, sent only if an account has it (as above)."""
    jobs.enqueue(PASSWORD_RESET_MAIL, {"email": email})


def reset_password(
    *, email: str, reset_code: str, new_password: str, config: Mapping[str, Any]
) -> User:
    """Set a new password with a reset code from the mail; ends every session."""
    checked = tokens.check_email_code(reset_code, tokens.RESET_PASSWORD, config=config)
    normalized = normalize_email(email)
    # The code must belong to this email, which must still be the account's address.
    if (
        checked is None
        or normalize_email(checked.email) != normalized
        or checked.user.normalized_email != normalized
    ):
        raise ValidationFailed({"resetCode": [INVALID_CODE]}, code=Code.INVALID_EMAIL_CODE)
    user = checked.user
    problems = password_problems(
        new_password, email=user.email, user_name=user.user_name, config=config
    )
    if problems:
        raise ValidationFailed({"newPassword": problems})
    tokens.use_email_code(checked)
    set_password(user, new_password)
    # The code reached the mailbox, which proves the address; a lockout ends with the reset.
    user.is_email_confirmed = True
    forget_failures(normalized, config=config)
    db.session.flush()
    return user


def confirm_email(
    *, user_id: Any, code: str, changed_email: str | None, config: Mapping[str, Any]
) -> None:
    """Confirm the account's address, or switch to `changed_email` (code sent there)."""
    purpose = tokens.CHANGE_EMAIL if changed_email else tokens.CONFIRM_EMAIL
    checked = tokens.check_email_code(code, purpose, config=config)
    if checked is None or checked.user.id != user_id:
        raise ValidationFailed({"code": [INVALID_CODE]}, code=Code.INVALID_EMAIL_CODE)
    user, sent_to = checked.user, normalize_email(checked.email)
    if changed_email:
        normalized = normalize_email(changed_email)
        if sent_to != normalized:
            raise ValidationFailed({"code": [INVALID_CODE]}, code=Code.INVALID_EMAIL_CODE)
        if email_taken(normalized, other_than=user):
            raise ValidationFailed(
                {"changedEmail": [f"Email '{changed_email}' is already taken."]},
                code=Code.EMAIL_TAKEN,
            )
        user.email, user.normalized_email = checked.email, normalized
    elif sent_to != user.normalized_email:  # the address changed since the code was sent
        raise ValidationFailed({"code": [INVALID_CODE]}, code=Code.INVALID_EMAIL_CODE)
    tokens.use_email_code(checked)
    user.is_email_confirmed = True
    db.session.flush()


# --- manage/info -------------------------------------------------------------------------


def account_info(viewer: Viewer) -> dict[str, Any]:
    user = viewer.account
    return {
        "email": user.email,
        "is_email_confirmed": user.is_email_confirmed,
        "experience_mode": user.experience_mode,
        "map_source": user.map_source,
    }


def update_account_info(
    viewer: Viewer,
    *,
    config: Mapping[str, Any],
    new_email: str | None = None,
    new_password: str | None = None,
    old_password: str | None = None,
    preferences: Mapping[str, str | None] | None = None,
) -> None:
    """Change password (needs the old one), start an email change (needs the current
    password; the new address is confirmed by a mailed link) and save preferences.
    Nothing changes unless every part is valid."""
    user = viewer.account
    changes_email = bool(new_email) and normalize_email(new_email or "") != user.normalized_email
    errors: dict[str, list[str]] = {}
    if new_password or changes_email:
        if not old_password:
            errors["oldPassword"] = [
                OLD_REQUIRED_MESSAGE if new_password else CURRENT_REQUIRED_MESSAGE
            ]
        elif not verify_password(user.password_hash, old_password):
            errors["oldPassword"] = [INCORRECT_MESSAGE]
    if changes_email and email_taken(normalize_email(new_email or ""), other_than=user):
        errors["newEmail"] = [f"Email '{new_email}' is already taken."]
    if new_password:
        problems = password_problems(
            new_password, email=user.email, user_name=user.user_name, config=config
        )
        if problems:
            errors["newPassword"] = problems
    if errors:
        raise ValidationFailed(errors, code=Code.EMAIL_TAKEN if "newEmail" in errors else None)
    for name, value in (preferences or {}).items():
        setattr(user, name, value)
    if new_password:
        set_password(user, new_password)
    if changes_email and new_email:
        jobs.enqueue(EMAIL_CHANGE_MAIL, {"user_id": str(user.id), "email": new_email.strip()})
    db.session.flush()


# --- account deletion --------------------------------------------------------------------


def delete_my_account(
    viewer: Viewer, *, config: Mapping[str, Any], cleanups: Sequence[AccountCleanup]
) -> DeletionCounts:
    """DELETE /api/account: every area's clean-up (`cleanups`, in order), then the user.

    The account row is locked exclusively (`get_for_write`; the route's token read took
    the lock already): the owner's writes in flight finish first (and are deleted with
    the rest), later ones wait and then find no account (401). Deletions of one account
    take turns; one that finds the account gone (deleted by a request sent at the same
    time) answers as a repeated request does: 401, the token's account no longer
    exists."""
    user = get_for_write(db.session, User, viewer.account.id, exclusive=True)
    if user is None:
        gone = Unauthorized(
            "The bearer token's account no longer exists.", code=Code.ACCOUNT_DELETED
        )
        gone.headers["WWW-Authenticate"] = 'Bearer error="invalid_token"'
        raise gone
    forget_failures(user.normalized_email, config=config)
    return delete_account(user, cleanups)


def remove_identity_data(user: User, counts: DeletionCounts) -> None:
    """Identity's part: refresh tokens, email codes, recovery codes. Nothing of this
    service signs in through external providers, so `linkedProvidersDeleted` stays 0."""
    tokens.delete_identity_rows(user)
    delete_recovery_codes(user)
    db.session.flush()
