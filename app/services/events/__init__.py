"""Events and the inbox (issue 25): a change worth hearing about is recorded with the
change (`record`, `record_team`, `record_note_published`: a transactional outbox); the
worker fans it out to the inboxes of who may hear it (`JOB_KINDS`); users read and mark
their inbox, and keep area watches (beyond the contract). The face other areas call."""

from app.services.events.area_watches import (
    create_area_watch,
    delete_account_area_watches,
    delete_area_watch,
    list_area_watches,
)
from app.services.events.fanout import JOB_KINDS
from app.services.events.inbox import (
    NotificationView,
    delete_account_notifications,
    list_notifications,
    mark_read,
    unread_count,
)
from app.services.events.recording import EventType, record, record_note_published, record_team

__all__ = [
    "JOB_KINDS",
    "EventType",
    "NotificationView",
    "create_area_watch",
    "delete_account_area_watches",
    "delete_account_notifications",
    "delete_area_watch",
    "list_area_watches",
    "list_notifications",
    "mark_read",
    "record",
    "record_note_published",
    "record_team",
    "unread_count",
]
