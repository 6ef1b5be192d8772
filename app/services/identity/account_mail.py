"""Account mail (contract: Identity and account): confirmation, email change and password
reset messages, written and sent by a worker (app.platform.jobs).

A request only enqueues a job naming the address (`accounts`); the handler here looks the
account up, makes the code, sends the mail, and stores the code's row in the job's own
transaction, once the mail has gone out. A mail server that refuses fails the job, which
is tried again later with nothing stored. Delivery is at least once: a worker stopped
between sending and committing sends the mail again, with a new code (the first one's
row was never stored, so only the second link works).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from app.extensions import db
from app.models.user import User
from app.platform.jobs import JobKind, Task
from app.platform.mail import Mail, deliver
from app.services.identity import tokens
from app.services.identity.accounts import (
    CONFIRMATION_MAIL,
    EMAIL_CHANGE_MAIL,
    PASSWORD_RESET_MAIL,
    find_user_by_email,
    normalize_email,
)


def _link(config: Mapping[str, Any], path: str, **query: str) -> str:
    return f"{config['PUBLIC_BASE_URL'].rstrip('/')}{path}?{urlencode(query)}"


def _send_with_code(
    user: User,
    purpose: str,
    *,
    to: str,
    config: Mapping[str, Any],
    compose: Callable[[str], Mail],
) -> None:
    """Make a code of `purpose` for `user`, send `compose(code)` to `to`, then store the
    code's row (committed with the job's done mark)."""
    code, row = tokens.new_email_code(user, purpose, email=to, config=config)
    deliver(compose(code))
    db.session.add(row)


def confirmation_mail(
    user: User, to: str, code: str, config: Mapping[str, Any], *, change: bool = False
) -> Mail:
    """The mail with a confirmation link (`changedEmail` when it confirms a new address)."""
    query = {"userId": str(user.id), "code": code}
    if change:
        query["changedEmail"] = to
    link = _link(config, "/api/auth/confirmEmail", **query)
    return Mail(
        to=to,
        subject="Confirm your email",
        text=(
            "Please confirm your email address for Location Notes by opening this link:\n\n"
            f"{link}\n\nThe link works once and expires in {config['EMAIL_CODE_HOURS']} "
            "hours. If you did not ask for this, you can ignore this message.\n"
        ),
    )


def reset_mail(user: User, code: str, config: Mapping[str, Any]) -> Mail:
    return Mail(
        to=user.email,
        subject="Reset your password",
        text=(
            "Use this code to reset your Location Notes password:\n\n"
            f"{code}\n\nThe code works once and expires in {config['EMAIL_CODE_HOURS']} "
            "hours. If you did not ask for this, you can ignore this message.\n"
        ),
    )


def send_confirmation(task: Task) -> None:
    """A confirmation mail for the unconfirmed account with this address; nothing for an
    unknown or already confirmed one."""
    user = find_user_by_email(normalize_email(task.payload["email"]))
    if user is None or user.is_email_confirmed:
        return
    _send_with_code(
        user,
        tokens.CONFIRM_EMAIL,
        to=user.email,
        config=task.config,
        compose=lambda code: confirmation_mail(user, user.email, code, task.config),
    )


def send_email_change(task: Task) -> None:
    """The link confirming a new address, sent to that address; nothing when the account
    is gone or already has it."""
    user = db.session.get(User, uuid.UUID(task.payload["user_id"]))
    new_email = task.payload["email"]
    if user is None or user.normalized_email == normalize_email(new_email):
        return
    _send_with_code(
        user,
        tokens.CHANGE_EMAIL,
        to=new_email,
        config=task.config,
        compose=lambda code: confirmation_mail(user, new_email, code, task.config, change=True),
    )


def send_password_reset(task: Task) -> None:
    """A reset code for the account with this address, confirmed or not; nothing for an
    unknown address."""
    user = find_user_by_email(normalize_email(task.payload["email"]))
    if user is None:
        return
    _send_with_code(
        user,
        tokens.RESET_PASSWORD,
        to=user.email,
        config=task.config,
        compose=lambda code: reset_mail(user, code, task.config),
    )


def _mail_kind(name: str, run: Callable[[Task], None]) -> JobKind:
    """A mail server down for hours still gets the mail: tries for a day, an hour apart
    at most (the code is made when the mail is sent, so a late mail carries a fresh one)."""
    return JobKind(name, run, max_attempts=30, max_age=timedelta(days=1), lane="account")


JOB_KINDS = (
    _mail_kind(CONFIRMATION_MAIL, send_confirmation),
    _mail_kind(EMAIL_CHANGE_MAIL, send_email_change),
    _mail_kind(PASSWORD_RESET_MAIL, send_password_reset),
)
