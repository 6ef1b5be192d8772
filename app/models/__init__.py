"""All models, imported here so metadata (create_all, Alembic) sees every table."""

from app.models.base import Base
from app.models.category import Category
from app.models.compliance import ContentReport
from app.models.identity import EmailCode, LoginFailure, RecoveryCode, RefreshToken
from app.models.note import Note, NoteComment
from app.models.team import Team, TeamInviteLink, TeamMembership
from app.models.trackable import Trackable, TrackableUnlock, note_trackables
from app.models.user import User

__all__ = [
    "Base",
    "Category",
    "ContentReport",
    "EmailCode",
    "LoginFailure",
    "Note",
    "NoteComment",
    "RecoveryCode",
    "RefreshToken",
    "Team",
    "TeamInviteLink",
    "TeamMembership",
    "Trackable",
    "TrackableUnlock",
    "User",
    "note_trackables",
]
