"""All models, imported here so metadata (create_all, Alembic) sees every table."""

from app.models.base import Base
from app.models.budget import BudgetSpend
from app.models.category import Category
from app.models.compliance import ContentReport
from app.models.event import AreaWatch, Event, Notification
from app.models.identity import (
    EmailCode,
    LoginFailure,
    RecoveryCode,
    RefreshToken,
    WebsiteSession,
)
from app.models.image import ContentImage, ImageTarget
from app.models.job import Job, JobState
from app.models.keys import KeyFingerprint
from app.models.note import Note, NoteComment
from app.models.note_search import SEARCH_CONFIGS  # and the search index's DDL
from app.models.notification_mail import NotificationDigest, NotificationMail, NotificationSettings
from app.models.privacy import AccountExport, ExportState
from app.models.ratelimit import RateLimitCounter
from app.models.sync import SyncClock, SyncDeparture, SyncNoteMutation
from app.models.team import Team, TeamInviteLink, TeamMembership
from app.models.trackable import (
    JourneyStop,
    Trackable,
    TrackableAccessSession,
    TrackableCode,
    TrackableCodeKey,
    TrackableComment,
    TrackableGroup,
    TrackableGroupWatch,
    TrackableUnlock,
    TrackableWatch,
    note_trackables,
)
from app.models.user import User
from app.models.webhook import WebhookAttempt, WebhookDelivery, WebhookSubscription

__all__ = [
    "SEARCH_CONFIGS",
    "AccountExport",
    "AreaWatch",
    "Base",
    "BudgetSpend",
    "Category",
    "ContentImage",
    "ContentReport",
    "EmailCode",
    "Event",
    "ExportState",
    "ImageTarget",
    "Job",
    "JobState",
    "JourneyStop",
    "KeyFingerprint",
    "LoginFailure",
    "Note",
    "NoteComment",
    "Notification",
    "NotificationDigest",
    "NotificationMail",
    "NotificationSettings",
    "RateLimitCounter",
    "RecoveryCode",
    "RefreshToken",
    "SyncClock",
    "SyncDeparture",
    "SyncNoteMutation",
    "Team",
    "TeamInviteLink",
    "TeamMembership",
    "Trackable",
    "TrackableAccessSession",
    "TrackableCode",
    "TrackableCodeKey",
    "TrackableComment",
    "TrackableGroup",
    "TrackableGroupWatch",
    "TrackableUnlock",
    "TrackableWatch",
    "User",
    "WebhookAttempt",
    "WebhookDelivery",
    "WebhookSubscription",
    "WebsiteSession",
    "note_trackables",
]
