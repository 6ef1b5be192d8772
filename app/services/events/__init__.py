"""Events and the inbox (issue 25): a change worth hearing about is recorded with the
change (`record`, a transactional outbox); the worker fans it out to the inboxes of who
may hear it (`JOB_KINDS`); users read and mark their inbox. The face other areas call."""

from app.services.events.fanout import JOB_KINDS
from app.services.events.inbox import (
    NotificationView,
    delete_account_notifications,
    list_notifications,
    mark_read,
    unread_count,
)
from app.services.events.recording import EventType, record

__all__ = [
    "JOB_KINDS",
    "EventType",
    "NotificationView",
    "delete_account_notifications",
    "list_notifications",
    "mark_read",
    "record",
    "unread_count",
]
