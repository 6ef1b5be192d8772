"""Notification mail: the event listener that queues mail for the inbox rows a fan-out
wrote, and the worker's jobs that send it (docs/contract/events.md, Notification mail).

Everything is decided again when the mail is sent: the setting at that time, a confirmed
address, the notification still unread, and its subject still visible to the user (the
fan-out's rule, by their account). Mail goes out in the user's language through the
website's catalogues. Sending raises when the mail server refuses, and the job is tried
again later (app.platform.jobs): at least once, as account mail is.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

from flask import current_app
from flask_babel import force_locale, ngettext
from flask_babel import gettext as _
from sqlalchemy import exists, insert, select

from app.extensions import db
from app.models.base import utcnow
from app.models.event import Event, Notification
from app.models.notification_mail import (
    MailChoice,
    MailKind,
    MailState,
    NotificationDigest,
    NotificationMail,
)
from app.models.trackable import Trackable
from app.models.user import User
from app.platform.database import insert_ignoring_duplicates
from app.platform.jobs import JobKind, Task, enqueue, enqueue_many
from app.platform.mail import Mail, deliver
from app.services.events.fanout import Delivered, may_still_hear
from app.services.events.inbox import describe
from app.services.events.mail_settings import IN_CHUNK, mail_choices, mail_settings_of
from app.services.events.unsubscribe import unsubscribe_token

MAIL_QUEUE = "notifications.mail_queue"
MAIL_ONE = "notifications.mail"
MAIL_DIGEST = "notifications.digest"
DIGEST_MAX_ITEMS = 50  # listed in one digest; the rest are counted, and wait in the inbox
# A digest row this far past its time lost its job (dead after a day of retries, or the
# workers were away): the next notification schedules a new one.
DIGEST_STALE_AFTER = timedelta(days=1, hours=1)


# --- queueing (the fan-out's event listener) ------------------------------------------


def mail_notifications(event: Event, written: Sequence[Delivered]) -> None:
    """The fan-out's listener: when inbox rows were written, one job queues their mail
    (`queue_event_mail`), so the inbox rows commit without waiting for mail's work."""
    if written:
        enqueue(MAIL_QUEUE, {"eventId": str(event.id)})


def queue_event_mail(task: Task) -> None:
    """The job: queue the mail of the event's inbox rows that have none yet, as each
    user's setting asks: the mail rows, the one-mail jobs and the digests in a few
    multi-row statements, whatever the number of hearers. A rerun finds its rows and
    adds nothing."""
    event_id = uuid.UUID(task.payload["eventId"])
    written = [
        Delivered(notification_id, user_id)
        for notification_id, user_id in db.session.execute(
            select(Notification.id, Notification.user_id).where(
                Notification.event_id == event_id,
                ~exists().where(NotificationMail.notification_id == Notification.id),
            )
        )
    ]
    if not written:
        return
    choices = mail_choices({row.user_id for row in written})
    now, rows, each, daily = utcnow(), [], [], set()
    for row in written:
        choice = choices.get(row.user_id, MailChoice.NONE)
        if choice is MailChoice.NONE:
            continue
        kind = MailKind.EACH if choice is MailChoice.EACH else MailKind.DIGEST
        rows.append(
            {
                "notification_id": row.id,
                "user_id": row.user_id,
                "kind": kind,
                "state": MailState.QUEUED,
                "created_utc": now,
                "sent_utc": None,
            }
        )
        if kind is MailKind.EACH:
            each.append({"notificationId": str(row.id)})
        else:
            daily.add(row.user_id)
    if rows:
        db.session.execute(insert(NotificationMail), rows)
    enqueue_many(MAIL_ONE, each)
    hour = int(current_app.config["NOTIFICATION_DIGEST_HOUR_UTC"])
    schedule_digests(daily, next_digest_time(now, hour), now)


def next_digest_time(now: datetime, hour: int) -> datetime:
    """The first digest hour (UTC) after `now`."""
    if not 0 <= hour <= 23:
        raise ValueError(f"NOTIFICATION_DIGEST_HOUR_UTC must be 0-23, not {hour}")
    due = now.replace(hour=hour, minute=0, second=0, microsecond=0)
    return due if due > now else due + timedelta(days=1)


# daily: the notification's mail row waits in the user's queue; the first one queues the user's
# digest job for the next digest hour (NOTIFICATION_DIGEST_HOUR_UTC), and the user's one digest row
# names that job, so two fan-outs at once schedule one digest. The digest lists what waits; nothing
# is sent when nothing does.
def schedule_digests(user_ids: set[uuid.UUID], due: datetime, now: datetime) -> None:
    """Make sure a digest job is waiting for each user's queue (a new one is `due` then).
    Their digest rows are locked first: a digest being sent right now finishes before
    this looks (and then it is gone, so a new one is scheduled for what it did not see).
    A digest row another fan-out writes at the same moment wins (its job sends these
    too); the job made here then finds it is not the one named and sends nothing."""
    if not user_ids:
        return
    found: dict[uuid.UUID, NotificationDigest] = {}
    ordered = sorted(user_ids)  # one lock order for every fan-out
    for start in range(0, len(ordered), IN_CHUNK):
        found.update(
            (digest.user_id, digest)
            for digest in db.session.scalars(
                select(NotificationDigest)
                .where(NotificationDigest.user_id.in_(ordered[start : start + IN_CHUNK]))
                .order_by(NotificationDigest.user_id)
                .with_for_update()
                .execution_options(populate_existing=True)
            )
        )
    waiting = {
        user_id for user_id, digest in found.items() if digest.due_utc > now - DIGEST_STALE_AFTER
    }
    needed = [user_id for user_id in ordered if user_id not in waiting]
    jobs = enqueue_many(
        MAIL_DIGEST, [{"userId": str(user_id)} for user_id in needed], delay=due - now
    )
    fresh = []
    for user_id, job_id in zip(needed, jobs, strict=True):
        stale = found.get(user_id)
        if stale is not None:  # this job takes over (the old one finds it is not named)
            stale.due_utc, stale.job_id = due, job_id
        else:
            fresh.append({"user_id": user_id, "due_utc": due, "job_id": job_id})
    insert_ignoring_duplicates(db.session, NotificationDigest, ["user_id"], fresh)


# --- sending (the worker's jobs) ---------------------------------------------------------


# each: one job per notification; the notification's mail row (one per notification) says whether it
# went, so a job run twice mails once.
def send_notification_mail(task: Task) -> None:
    """The mail of one notification, unless it went already or is no longer wanted."""
    item = db.session.scalars(
        select(NotificationMail)
        .where(NotificationMail.notification_id == uuid.UUID(task.payload["notificationId"]))
        .with_for_update()
    ).first()
    if item is None or item.state is not MailState.QUEUED:
        return  # sent by an earlier run, or the notification or account is gone
    notification = db.session.get_one(Notification, item.notification_id)
    user = db.session.get_one(User, item.user_id)
    settings = mail_settings_of(user.id)
    if settings.mail is not MailChoice.EACH or not _deliverable(user, notification):
        item.state = MailState.SKIPPED
        return
    deliver(each_mail(user, notification, settings.language, task.config))
    item.state, item.sent_utc = MailState.SENT, utcnow()


def send_digest(task: Task) -> None:
    """The user's digest, when this job is the one their digest row names."""
    user_id = uuid.UUID(task.payload["userId"])
    digest = db.session.get(
        NotificationDigest, user_id, with_for_update=True, populate_existing=True
    )
    if digest is None or digest.job_id != task.id:
        return  # sent already, or superseded by another job
    db.session.delete(digest)
    waiting = db.session.scalars(
        select(NotificationMail).where(
            NotificationMail.user_id == user_id,
            NotificationMail.kind == MailKind.DIGEST,
            NotificationMail.state == MailState.QUEUED,
        )
    ).all()
    user = db.session.get_one(User, user_id)
    settings = mail_settings_of(user_id)
    listed = []
    for item in waiting:
        notification = db.session.get_one(Notification, item.notification_id)
        if settings.mail is MailChoice.DAILY and _deliverable(user, notification):
            listed.append((item, notification))
        else:
            item.state = MailState.SKIPPED
    if not listed:
        return
    listed.sort(key=lambda pair: pair[1].created_utc, reverse=True)
    notifications = [notification for _item, notification in listed]
    deliver(digest_mail(user, notifications, settings.language, task.config))
    now = utcnow()
    for item, _notification in listed:
        item.state, item.sent_utc = MailState.SENT, now


def _deliverable(user: User, notification: Notification) -> bool:
    """Still worth a mail: a confirmed address, unread, and its subject still visible."""
    return (
        user.is_email_confirmed
        and notification.read_utc is None
        and may_still_hear(notification.event, user)
    )


# --- the messages ------------------------------------------------------------------------


def _base(config: Mapping[str, Any]) -> str:
    return str(config["PUBLIC_BASE_URL"]).rstrip("/")


def _page_link(event: Event, language: str, config: Mapping[str, Any]) -> str | None:
    """The trackable's public page in the mail's language (notes and teams have none)."""
    trackable = db.session.get(Trackable, event.trackable_id) if event.trackable_id else None
    if trackable is None:
        return None
    return f"{_base(config)}/{language}/trackables/{quote(trackable.public_code, safe='')}"


def _settings_line(language: str, config: Mapping[str, Any], *, daily: bool) -> str:
    """Why this mail came, and the settings page in the mail's language."""
    reason = (
        _("You get one digest a day because of your notification settings.")
        if daily
        else _("You get one mail per notification because of your notification settings.")
    )
    change = _(
        "To change that (no mail, one per notification, or a daily digest), open your "
        "notification settings: %(url)s",
        url=f"{_base(config)}/{language}/account/notifications",
    )
    return f"{reason} {change}"


def _unsubscribe_headers(
    user: User, language: str, config: Mapping[str, Any]
) -> tuple[tuple[str, str], ...]:
    """One-click unsubscribe (RFC 8058): the account's signed link, which a mail client
    POSTs to; the page it leads to in the mail's language (app.web.mail_settings)."""
    token = unsubscribe_token(user.id, config)
    url = f"{_base(config)}/{language}/account/notifications/unsubscribe/{token}"
    return (
        ("List-Unsubscribe", f"<{url}>"),
        ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"),
    )


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def each_mail(
    user: User, notification: Notification, language: str, config: Mapping[str, Any]
) -> Mail:
    """One notification's mail, in `language`."""
    event = notification.event
    with force_locale(language):
        text = describe(event.event_type, event.fields)
        lines = [text, ""]
        link = _page_link(event, language, config)
        if link is not None:
            lines += [_("See it here: %(link)s", link=link), ""]
        lines += ["--", _settings_line(language, config, daily=False)]
        return Mail(
            to=user.email,
            subject=_("Location Notes: %(text)s", text=text),
            text="\n".join(lines) + "\n",
            headers=_unsubscribe_headers(user, language, config),
        )


def digest_mail(
    user: User, notifications: Sequence[Notification], language: str, config: Mapping[str, Any]
) -> Mail:
    """The digest of `notifications` (newest first), in `language`."""
    count = len(notifications)
    with force_locale(language):
        lines = [_("What happened since your last digest:"), ""]
        for notification in notifications[:DIGEST_MAX_ITEMS]:
            event = notification.event
            text = describe(event.event_type, event.fields)
            lines.append(f"- {_when(notification.created_utc)}: {text}")
            link = _page_link(event, language, config)
            if link is not None:
                lines.append(f"  {link}")
        rest = count - DIGEST_MAX_ITEMS
        if rest > 0:
            lines += ["", _("And %(count)d more in your inbox.", count=rest)]
        lines += ["", "--", _settings_line(language, config, daily=True)]
        subject = ngettext(
            "Location Notes: %(num)d new notification",
            "Location Notes: %(num)d new notifications",
            count,
        )
        return Mail(
            to=user.email,
            subject=subject,
            text="\n".join(lines) + "\n",
            headers=_unsubscribe_headers(user, language, config),
        )


def _mail_kind(name: str, run: Callable[[Task], None]) -> JobKind:
    """As account mail: a mail server down for hours still gets the mail (a day of tries,
    an hour apart at most)."""
    return JobKind(name, run, max_attempts=30, max_age=timedelta(days=1), lane="events")


JOB_KINDS = (
    JobKind(MAIL_QUEUE, queue_event_mail, lane="events"),
    _mail_kind(MAIL_ONE, send_notification_mail),
    _mail_kind(MAIL_DIGEST, send_digest),
)
