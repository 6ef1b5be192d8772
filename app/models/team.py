"""Teams, their memberships and invite links (contract: Team, Team invite link, Team
membership; decisions: Responses the contract leaves open, Teams).

`notes.team_id`, `categories.team_id` and `trackables.team_id` point at `teams.id` without
a foreign key: tests and factories of the notes area build team-scoped rows with free-standing
team ids, and the trackables model belongs to its own area. Every path that removes a team
(services.teams.delete_team, the account clean-up) first re-homes its notes, deletes its
categories and releases its trackables, so no dangling team id is left behind.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from enum import StrEnum

from sqlalchemy import Boolean, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.base import LINK_DESCRIPTION_MAX_LENGTH, LINK_URL_MAX_LENGTH, Base, new_id, utcnow
from app.models.category import LANGUAGE_TAG_MAX_LENGTH
from app.models.enums import NoteVisibility, stored_enum
from app.models.user import User

TEAM_NAME_MIN_LENGTH = 3
TEAM_NAME_MAX_LENGTH = 50
TEAM_TITLE_MAX_LENGTH = 100
TEAM_DESCRIPTION_MAX_LENGTH = 4000
# A team name: letters, digits, spaces, `-` and `_`, starting and ending with a letter or
# digit. Its slug folds case and each run of separators to one `-`, so names differing
# only there are the same team.
TEAM_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9 _-]*[A-Za-z0-9])?$")
SEPARATORS = re.compile(r"[ _-]+")

# Invite codes: 26 characters of the lowercase RFC 4648 base32 alphabet from `secrets`,
# 130 bits; they are clicked, not typed, and stay readable in a URL.
INVITE_CODE_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"
INVITE_CODE_LENGTH = 26


def team_slug(name: str) -> str:
    """`Berlin  Night_Hikers` -> `berlin-night-hikers` (the team's URL form)."""
    return SEPARATORS.sub("-", name.strip()).strip("-").lower()


class JoinPolicy(StrEnum):
    """How users get in (decisions: Teams)."""

    OPEN = "Open"  # a request makes a member at once
    REQUESTS_ALLOWED = "RequestsAllowed"  # a request (or invite link) waits for an admin
    INVITE_ONLY = "InviteOnly"  # no requests; an invitation or invite link makes a member


class TeamRole(StrEnum):
    """A member's role in a team, as the API writes it (`role`) and `Viewer.team_roles`
    holds it."""

    ADMIN = "Admin"
    MEMBER = "Member"


class PageVisibility(StrEnum):
    """Who sees the team's public page and its notes in public team routes."""

    PUBLIC = "Public"
    MEMBERS_ONLY = "MembersOnly"


class MembershipStatus(StrEnum):
    """Membership states (services.memberships holds the transitions). Only the first three
    are stored; `Denied` and `Refused` are reported by deny and refuse, which end the
    record."""

    REQUESTING = "RequestingMembership"
    INVITED = "Invited"
    MEMBER = "Member"
    DENIED = "Denied"
    REFUSED = "Refused"


class Team(Base):
    __tablename__ = "teams"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(TEAM_NAME_MAX_LENGTH))
    # Unique: the public handle is unique up to case and separators. Fixed after creation
    # (invite links and public routes carry it).
    slug: Mapped[str] = mapped_column(String(TEAM_NAME_MAX_LENGTH), unique=True)
    title: Mapped[str] = mapped_column(String(TEAM_TITLE_MAX_LENGTH))
    description: Mapped[str] = mapped_column(Text, default="")
    external_link_url: Mapped[str | None] = mapped_column(String(LINK_URL_MAX_LENGTH), default=None)
    external_link_description: Mapped[str] = mapped_column(
        String(LINK_DESCRIPTION_MAX_LENGTH), default=""
    )
    join_policy: Mapped[JoinPolicy] = mapped_column(
        stored_enum(JoinPolicy), default=JoinPolicy.REQUESTS_ALLOWED
    )
    page_visibility: Mapped[PageVisibility] = mapped_column(
        stored_enum(PageVisibility), default=PageVisibility.PUBLIC
    )
    default_note_visibility: Mapped[NoteVisibility] = mapped_column(
        stored_enum(NoteVisibility), default=NoteVisibility.PRIVATE
    )
    content_language: Mapped[str] = mapped_column(String(LANGUAGE_TAG_MAX_LENGTH))
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    updated_utc: Mapped[datetime] = mapped_column(default=utcnow)
    # Team-level activity (creation, settings, memberships, notes leaving the team); the
    # read model also counts its notes' activity (services.teams.last_activity).
    last_activity_utc: Mapped[datetime] = mapped_column(default=utcnow)


class TeamMembership(Base):
    """One user's standing in one team: a request, an invitation or a membership."""

    __tablename__ = "team_memberships"
    __table_args__ = (UniqueConstraint("team_id", "user_id"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    status: Mapped[MembershipStatus] = mapped_column(stored_enum(MembershipStatus))
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    updated_utc: Mapped[datetime] = mapped_column(default=utcnow)

    user: Mapped[User] = relationship(User, lazy="joined", innerjoin=True)
    team: Mapped[Team] = relationship(Team)

    @property
    def user_name(self) -> str:
        return self.user.user_name

    @property
    def is_active(self) -> bool:
        return self.status == MembershipStatus.MEMBER


class TeamInviteLink(Base):
    """A shareable join link. It works while it exists, is unused (single use) and its
    creator is still an admin of the team."""

    __tablename__ = "team_invite_links"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    team_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("teams.id", ondelete="CASCADE"), index=True
    )
    # Admins list their team's codes, so the code is kept as issued.
    code: Mapped[str] = mapped_column(String(INVITE_CODE_LENGTH), unique=True)
    created_by_user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    is_single_use: Mapped[bool] = mapped_column(Boolean, default=False)
    # Set once, by the conditional UPDATE that claims a single-use link.
    used_utc: Mapped[datetime | None] = mapped_column(default=None)
    used_by_user_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)

    created_by: Mapped[User] = relationship(
        User, foreign_keys=[created_by_user_id], lazy="joined", innerjoin=True
    )
    team: Mapped[Team] = relationship(Team)
