"""Events and the inbox: a change worth hearing about is recorded with the
change (`record`, `record_team`, `record_note_published`: a transactional outbox); the
worker fans it out to the inboxes of who may hear it (`JOB_KINDS`); users read and mark
their inbox, keep area watches (beyond the contract) and choose whether mail tells them
(`mail_notifications` listens to each fan-out, `MAIL_JOB_KINDS` send; each mail's link
unsubscribes in one click). The face other areas call."""

from app.services.events.area_watches import (
    create_area_watch,
    delete_account_area_watches,
    delete_area_watch,
    list_area_watches,
)
from app.services.events.fanout import JOB_KINDS, may_still_hear
from app.services.events.inbox import (
    NotificationView,
    delete_account_notifications,
    list_notifications,
    mark_read,
    unread_count,
)
from app.services.events.mail import JOB_KINDS as MAIL_JOB_KINDS
from app.services.events.mail import mail_notifications
from app.services.events.mail_settings import (
    MAIL_LANGUAGES,
    MailSettings,
    delete_account_mail,
    get_mail_settings,
    update_mail_settings,
)
from app.services.events.recording import (
    EventType,
    NoteEvents,
    record,
    record_note_published,
    record_team,
)
from app.services.events.unsubscribe import (
    LinkState,
    UnsubscribeLink,
    read_unsubscribe_link,
    unsubscribe,
    unsubscribe_token,
)

__all__ = [
    "JOB_KINDS",
    "MAIL_JOB_KINDS",
    "MAIL_LANGUAGES",
    "EventType",
    "LinkState",
    "MailSettings",
    "NoteEvents",
    "NotificationView",
    "UnsubscribeLink",
    "create_area_watch",
    "delete_account_area_watches",
    "delete_account_mail",
    "delete_account_notifications",
    "delete_area_watch",
    "get_mail_settings",
    "list_area_watches",
    "list_notifications",
    "mail_notifications",
    "mark_read",
    "may_still_hear",
    "read_unsubscribe_link",
    "record",
    "record_note_published",
    "record_team",
    "unread_count",
    "unsubscribe",
    "unsubscribe_token",
    "update_mail_settings",
]
