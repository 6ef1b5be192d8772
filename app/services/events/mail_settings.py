"""A user's notification mail settings: no mail, one per notification,
or a daily digest, and the mail's language; read and changed by the user, removed with
the account (docs/contract/events.md, Notification mail).

No row means the defaults: a daily digest in English. A watch exists to be told of
something, and a digest tells without flooding; mail only ever goes to a confirmed
address, and each one says how to change this. The account keeps no language of its own,
so the language is part of these settings.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import delete, exc, select

from app.auth import Viewer
from app.extensions import db
from app.hooks import DeletionCounts
from app.models.notification_mail import (
    MailChoice,
    NotificationDigest,
    NotificationMail,
    NotificationSettings,
)
from app.models.user import User

# The website's languages (services.trackables.SITE_LANGUAGES), which the catalogues have.
MAIL_LANGUAGES = ("en", "de")
IN_CHUNK = 500  # ids per IN (...) list, well within every driver's bind limit
DEFAULT_MAIL = MailChoice.DAILY
DEFAULT_LANGUAGE = "en"


@dataclass(frozen=True)
class MailSettings:
    mail: MailChoice
    language: str


DEFAULTS = MailSettings(mail=DEFAULT_MAIL, language=DEFAULT_LANGUAGE)


def mail_settings_of(user_id: uuid.UUID) -> MailSettings:
    """The user's settings, or the defaults."""
    row = db.session.get(NotificationSettings, user_id)
    return MailSettings(row.mail, row.language) if row is not None else DEFAULTS


def mail_choices(user_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, MailChoice]:
    """Each of these users' mail choice, for those with a confirmed address (mail never
    goes to an unconfirmed one; the others are left out)."""
    ordered = sorted(user_ids)
    found: dict[uuid.UUID, MailChoice] = {}
    for start in range(0, len(ordered), IN_CHUNK):
        rows = db.session.execute(
            select(User.id, NotificationSettings.mail)
            .outerjoin(NotificationSettings, NotificationSettings.user_id == User.id)
            .where(
                User.id.in_(ordered[start : start + IN_CHUNK]), User.is_email_confirmed.is_(True)
            )
        )
        found.update((user_id, mail or DEFAULT_MAIL) for user_id, mail in rows)
    return found


def get_mail_settings(viewer: Viewer) -> MailSettings:
    return mail_settings_of(viewer.account.id)


def update_mail_settings(
    viewer: Viewer, *, mail: MailChoice | None = None, language: str | None = None
) -> MailSettings:
    """Apply the fields given; the others keep their value (or default). Mail already on
    its way follows the setting at the time it is sent (services.events.mail)."""
    return apply_mail_settings(viewer.account.id, mail=mail, language=language)


def apply_mail_settings(
    user_id: uuid.UUID, *, mail: MailChoice | None = None, language: str | None = None
) -> MailSettings:
    """`update_mail_settings` for an account named by id (the unsubscribe link's)."""
    if language is not None and language not in MAIL_LANGUAGES:
        raise ValueError(f"not a mail language: {language!r}")  # the callers' forms check
    row = db.session.get(NotificationSettings, user_id, with_for_update=True)
    if row is None:
        row = NotificationSettings(user_id=user_id, mail=DEFAULT_MAIL, language=DEFAULT_LANGUAGE)
        try:
            with db.session.begin_nested():  # two first changes at once: the later one wins
                db.session.add(row)
        except exc.IntegrityError:
            row = db.session.get_one(NotificationSettings, user_id, with_for_update=True)
    if mail is not None:
        row.mail = mail
    if language is not None:
        row.language = language
    db.session.flush()
    return MailSettings(row.mail, row.language)


def delete_account_mail(user: User, counts: DeletionCounts) -> None:
    """Account deletion: the user's settings, pending digest and mail rows go."""
    for model in (NotificationMail, NotificationDigest, NotificationSettings):
        db.session.execute(delete(model).where(model.user_id == user.id))
