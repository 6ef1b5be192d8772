"""The inbox: a user's notifications, newest first, paged as every
list (services.shared.pages), each text made when read, from the event's stored fields,
in the reader's language (their notification settings, as their mail); the unread count;
marking read; the account clean-up.

Marking read names notifications by id, or `up_to` one: it and every older one. Ids that
are not the caller's (another user's, or none at all) are ignored rather than refused, so
the inbox never tells whether someone else's notification exists.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from flask_babel import force_locale
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from sqlalchemy import and_, delete, func, or_, select, update
from sqlalchemy.sql.elements import ColumnElement

from app.auth import Viewer
from app.extensions import db
from app.hooks import DeletionCounts
from app.models.base import utcnow
from app.models.event import Notification
from app.models.user import User
from app.services.events.mail_settings import mail_settings_of
from app.services.events.recording import EventType
from app.services.shared.pages import Listing, Order, Page, read_list

ORDER = Order(Notification.created_utc.desc(), Notification.id.desc())


@dataclass(frozen=True)
class NotificationView:
    notification_id: uuid.UUID
    event_type: str
    created_utc: datetime
    read_utc: datetime | None
    trackable_id: uuid.UUID | None
    group_id: uuid.UUID | None
    note_id: uuid.UUID | None
    team_id: uuid.UUID | None
    text: str


def list_notifications(
    viewer: Viewer, *, page: Page | None = None, cap: int | None = None
) -> Listing[NotificationView]:
    """The caller's notifications, newest first: one `page`, or the first `cap`; their
    texts in the caller's language (the `language` of their notification settings)."""
    query = select(Notification).where(Notification.user_id == viewer.account.id)
    found = read_list(query, ORDER, page=page, cap=cap, scalars=True)
    with force_locale(mail_settings_of(viewer.account.id).language):
        return found.with_items([_view(one) for one in found.items])


def unread_count(viewer: Viewer) -> int:
    return (
        db.session.scalar(
            select(func.count()).where(
                Notification.user_id == viewer.account.id, Notification.read_utc.is_(None)
            )
        )
        or 0
    )


def mark_read(
    viewer: Viewer,
    *,
    notification_ids: Sequence[uuid.UUID] | None = None,
    up_to: uuid.UUID | None = None,
) -> None:
    """Mark the caller's named notifications read, or `up_to` one and all older ones.
    Already read ones keep their first read time."""
    mine = and_(Notification.user_id == viewer.account.id, Notification.read_utc.is_(None))
    which: ColumnElement[bool]
    if notification_ids is not None:
        which = Notification.id.in_(list(notification_ids))
    else:
        last = db.session.get(Notification, up_to)
        if last is None or last.user_id != viewer.account.id:
            return
        which = or_(
            Notification.created_utc < last.created_utc,
            and_(Notification.created_utc == last.created_utc, Notification.id <= last.id),
        )
    db.session.execute(
        update(Notification)
        .where(mine, which)
        .values(read_utc=utcnow())
        .execution_options(synchronize_session=False)
    )
    db.session.flush()


def delete_account_notifications(user: User, counts: DeletionCounts) -> None:
    """Account deletion: the user's inbox goes (their events stay, without the actor)."""
    db.session.execute(delete(Notification).where(Notification.user_id == user.id))


# --- the short text ----------------------------------------------------------------------

# Marked for the catalogues (`make messages`): the inbox and mail read them in their user's
# language.
TEXTS = {
    EventType.ACTIVATED: _l("{item} was activated."),
    EventType.COMMENT_WRITTEN: _l("A comment was written on {item}."),
    EventType.COMMENT_EDITED: _l("A comment on {item} was edited."),
    EventType.COMMENT_DELETED: _l("A comment on {item} was deleted."),
    EventType.STOP_ADDED: _l("{item} has a new journey stop."),
    EventType.STOP_DELETED: _l("A journey stop of {item} was deleted."),
    EventType.STATUS_MESSAGE_CHANGED: _l("A finder changed the status message of {item}."),
    EventType.ATTACHED_TO_NOTE: _l("{item} was attached to a note."),
    EventType.SECRET_ROTATED: _l("The secret code of {item} was replaced."),
    EventType.GROUP_ITEM_ADDED: _l("{item} joined a group."),
    EventType.GROUP_ITEM_REMOVED: _l("{item} left a group."),
    EventType.TEAM_NOTE_CREATED: _l("A note was added to team {team}."),
    EventType.TEAM_NOTE_EDITED: _l("A note of team {team} was edited."),
    EventType.TEAM_NOTE_DELETED: _l("A note of team {team} was deleted."),
    EventType.TEAM_NOTE_REMOVED: _l("A note left team {team}."),
    EventType.MEMBERSHIP_REQUESTED: _l("Someone asked to join team {team}."),
    EventType.MEMBER_JOINED: _l("A member joined team {team}."),
    EventType.MEMBER_LEFT: _l("A member left team {team}."),
    EventType.MEMBER_REMOVED: _l("A member was removed from team {team}."),
    EventType.MEMBER_ROLE_CHANGED: _l("A member of team {team} became an admin."),
    EventType.NOTE_PUBLISHED: _l("A new public note in an area you watch."),
}


def describe(event_type: str, fields: dict[str, object]) -> str:
    """The notification's short text, from the event's public fields, in the language
    its reader's settings force (flask_babel.force_locale; the catalogues of app/web)."""
    code, name = fields.get("publicCode", ""), fields.get("name", "")
    item = f"{code} ({name})" if name else str(code or _("A trackable"))
    team = str(fields.get("teamName", ""))
    return str(TEXTS[EventType(event_type)]).format(item=item, team=team)


def _view(notification: Notification) -> NotificationView:
    event = notification.event
    return NotificationView(
        notification_id=notification.id,
        event_type=event.event_type,
        created_utc=notification.created_utc,
        read_utc=notification.read_utc,
        trackable_id=event.trackable_id,
        group_id=event.group_id,
        note_id=event.note_id,
        # Only a team's own events name it: a trackable's team is not the watcher's business.
        team_id=event.team_id if EventType(event.event_type).is_team_event else None,
        text=describe(event.event_type, event.fields),
    )
