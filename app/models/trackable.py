"""Trackables (contract: Trackable, Trackable group, Trackable activation, Trackable group
membership, Trackable watch, Journey stop; decisions: Trackable codes, Access sessions).

A trackable is activated when it has an owner (`owner_user_id`; a team-owned one also names
`team_id`): there is no activation flag. Its codes (public code, short secret, QR token) live
in `trackable_codes` keyed by the HMAC of their normalised form, one key space, so the
database refuses any collision; secrets and tokens are never stored in plain text. A
trackable is in at most one group. Journey stops are immutable snapshots, and the
`journey_*` statistics are recomputed from them in the transaction that adds or deletes one,
under the trackable's row lock (services.trackables.statistics).
"""

from __future__ import annotations

import uuid
from datetime import date, datetime
from enum import StrEnum

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Date,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.base import (
    GUID,
    LINK_DESCRIPTION_MAX_LENGTH,
    LINK_URL_MAX_LENGTH,
    Base,
    UtcDateTime,
    new_id,
    utcnow,
)
from app.models.enums import stored_enum
from app.models.user import User

TRACKABLE_NAME_MAX_LENGTH = 200
TRACKABLE_DESCRIPTION_MAX_LENGTH = 4000
STATUS_MESSAGE_MAX_LENGTH = 500
GROUP_NAME_MAX_LENGTH = 100
CODE_HASH_LENGTH = 64  # hex HMAC-SHA256
CLIENT_MUTATION_ID_MAX_LENGTH = 100
COMMENT_NAME_MAX_LENGTH = 50
COMMENT_BODY_MAX_LENGTH = 4000


class TrackableVisibility(StrEnum):
    """Who may open an activated trackable (contract: Trackable)."""

    ALWAYS_VISIBLE = "AlwaysVisibleToEveryone"
    ONCE_ACCESSED = "VisibleOnceAccessed"  # its manager, and whoever unlocked it


class StopPrecision(StrEnum):
    """How finely a journey stop's position is kept, as its writer chose: the grid it is
    snapped to (services.trackables.journey) before anything is stored."""

    EXACT = "exact"  # 1e-4 degrees, about 11 m
    ABOUT_1KM = "about1km"  # 0.01 degrees, about 1.1 km
    ABOUT_10KM = "about10km"  # 0.1 degrees, about 11 km


class CodeKind(StrEnum):
    PUBLIC = "public"
    SECRET = "secret"  # noqa: S105 - a kind of code, not a secret: the short secret code
    QR = "qr"  # the long scan-only token


class TrackableGroup(Base):
    __tablename__ = "trackable_groups"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(GROUP_NAME_MAX_LENGTH))
    # Lowercase with underscores, fixed after creation (the group's page).
    slug: Mapped[str] = mapped_column(String(GROUP_NAME_MAX_LENGTH), unique=True)
    description: Mapped[str] = mapped_column(Text, default="")
    default_trackable_title: Mapped[str] = mapped_column(
        String(TRACKABLE_NAME_MAX_LENGTH), default=""
    )
    default_trackable_description: Mapped[str] = mapped_column(Text, default="")
    default_external_link_url: Mapped[str | None] = mapped_column(
        String(LINK_URL_MAX_LENGTH), default=None
    )
    default_external_link_description: Mapped[str] = mapped_column(
        String(LINK_DESCRIPTION_MAX_LENGTH), default=""
    )
    default_external_link_append_public_code: Mapped[bool] = mapped_column(Boolean, default=False)
    default_status_message: Mapped[str] = mapped_column(
        String(STATUS_MESSAGE_MAX_LENGTH), default=""
    )
    visibility: Mapped[TrackableVisibility] = mapped_column(
        stored_enum(TrackableVisibility), default=TrackableVisibility.ALWAYS_VISIBLE
    )
    # The group's creator controls it; a team group is also managed by the team's admins.
    owner_user_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None, index=True
    )
    team_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("teams.id", ondelete="SET NULL"), default=None, index=True
    )
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    updated_utc: Mapped[datetime] = mapped_column(default=utcnow)
    last_activity_utc: Mapped[datetime] = mapped_column(default=utcnow)

    trackables: Mapped[list[Trackable]] = relationship(
        back_populates="group", order_by="Trackable.public_code"
    )


class Trackable(Base):
    __tablename__ = "trackables"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    # The public code is also kept in plain text here for display and links.
    public_code: Mapped[str] = mapped_column(String(32), unique=True)
    name: Mapped[str] = mapped_column(String(TRACKABLE_NAME_MAX_LENGTH), default="")
    description: Mapped[str] = mapped_column(Text, default="")
    status_message: Mapped[str] = mapped_column(String(STATUS_MESSAGE_MAX_LENGTH), default="")
    visibility: Mapped[TrackableVisibility] = mapped_column(
        stored_enum(TrackableVisibility), default=TrackableVisibility.ALWAYS_VISIBLE
    )
    external_link_url: Mapped[str | None] = mapped_column(String(LINK_URL_MAX_LENGTH), default=None)
    external_link_description: Mapped[str] = mapped_column(
        String(LINK_DESCRIPTION_MAX_LENGTH), default=""
    )
    external_link_append_public_code: Mapped[bool] = mapped_column(Boolean, default=False)
    # Who created it (holds the secret from the create response until someone activates).
    created_by_user_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None, index=True
    )
    # No owner means unactivated (contract: Trackable activation); the owner is the
    # activator, who keeps control of a team-owned one while on the team.
    owner_user_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id"), default=None, index=True
    )
    team_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("teams.id", ondelete="SET NULL"), default=None, index=True
    )
    group_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("trackable_groups.id", ondelete="SET NULL"), default=None, index=True
    )
    has_custom_secret: Mapped[bool] = mapped_column(Boolean, default=False)
    activated_utc: Mapped[datetime | None] = mapped_column(default=None)
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    updated_utc: Mapped[datetime] = mapped_column(default=utcnow)
    last_activity_utc: Mapped[datetime] = mapped_column(default=utcnow)
    # The journey's statistics, as its stops give them now (kept by services.trackables.
    # statistics): great-circle km along the stops oldest first, how many, the ISO 3166-1
    # alpha-2 codes of the countries in order of first visit, the first and last stop's time,
    # and the earliest and latest of the stops' "seen on" days (UTC).
    journey_distance_km: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    journey_stop_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    journey_countries: Mapped[list[str]] = mapped_column(
        JSON, default=list, server_default=text("'[]'")
    )
    journey_first_stop_utc: Mapped[datetime | None] = mapped_column(default=None)
    journey_last_stop_utc: Mapped[datetime | None] = mapped_column(default=None)
    journey_first_seen_on: Mapped[date | None] = mapped_column(Date, default=None)
    journey_last_seen_on: Mapped[date | None] = mapped_column(Date, default=None)

    group: Mapped[TrackableGroup | None] = relationship(back_populates="trackables")

    @property
    def is_activated(self) -> bool:
        return self.owner_user_id is not None


# The public list, most recent activity first (read backwards).
Index("ix_trackables_public_activity", Trackable.last_activity_utc, Trackable.id)


class TrackableCode(Base):
    """One code of a trackable, by the keyed hash of its normalised form. The primary key
    makes every code unique across kinds and trackables."""

    __tablename__ = "trackable_codes"

    code_hash: Mapped[str] = mapped_column(String(CODE_HASH_LENGTH), primary_key=True)
    trackable_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("trackables.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[CodeKind] = mapped_column(stored_enum(CodeKind, length=16))
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    # The code key generation `code_hash` is at (TrackableCodeKey): rows below the current
    # one are wrapped forward by `flask trackables rotate-code-key`.
    key_generation: Mapped[int] = mapped_column(Integer, default=0, server_default="0", index=True)


class TrackableCodeKey(Base):
    """One key of the code key chain, by generation (0 the first), as a fingerprint: a
    start with a key the stored codes were not made with is refused, since every printed
    code would then be a miss."""

    __tablename__ = "trackable_code_keys"

    generation: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    fingerprint: Mapped[str] = mapped_column(String(CODE_HASH_LENGTH))
    added_utc: Mapped[datetime] = mapped_column(default=utcnow)


# Which trackables are attached to which notes. Attach/detach through services.notes so
# the note's stored discoverability follows (a gated note leaves discovery on first attach).
note_trackables = Table(
    "note_trackables",
    Base.metadata,
    Column("note_id", GUID, ForeignKey("notes.id", ondelete="CASCADE"), primary_key=True),
    Column("trackable_id", GUID, ForeignKey("trackables.id", ondelete="CASCADE"), primary_key=True),
    Column("attached_utc", UtcDateTime(), nullable=False, default=utcnow),
)
Index("ix_note_trackables_trackable_id", note_trackables.c.trackable_id)


class TrackableUnlock(Base):
    """A signed-in viewer unlocked this trackable (secret code or QR); kept on the account
    so later devices reopen it (decisions: Access sessions for secret codes)."""

    __tablename__ = "trackable_unlocks"

    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    trackable_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("trackables.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    unlocked_utc: Mapped[datetime] = mapped_column(default=utcnow)


class TrackableAccessSession(Base):
    """An active secret session (contract: Active secret session): a client that looked up
    a secret code or opened a QR link may act on that trackable without sending the code
    again. The client holds only a random id in a signed HttpOnly cookie; its hash
    (`client_key`) is kept here, with the status text the client last set. Rotating the
    trackable's secret ends its sessions; DELETE /api/trackables/active/{id} ends one."""

    __tablename__ = "trackable_access_sessions"
    __table_args__ = (UniqueConstraint("client_key", "trackable_id"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    client_key: Mapped[str] = mapped_column(String(CODE_HASH_LENGTH), index=True)
    trackable_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("trackables.id", ondelete="CASCADE"), index=True
    )
    status_message: Mapped[str] = mapped_column(String(STATUS_MESSAGE_MAX_LENGTH), default="")
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_utc: Mapped[datetime] = mapped_column(default=utcnow)


class TrackableWatch(Base):
    """A user watches a trackable (one watch per user and trackable)."""

    __tablename__ = "trackable_watches"

    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    trackable_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("trackables.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)


class TrackableGroupWatch(Base):
    """A user watches a group: it covers the group's items the user may see."""

    __tablename__ = "trackable_group_watches"

    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    group_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("trackable_groups.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)


# Each stop is saved at the precision its writer chose (coordinates, label, country and creator as
# saved); only the snapped point is stored.
class JourneyStop(Base):
    """Where a trackable was, as saved at the time: an immutable snapshot (contract:
    Journey stop). Moving a note later changes no stop."""

    __tablename__ = "journey_stops"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    trackable_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("trackables.id", ondelete="CASCADE"))
    # The snapped point: stops at the same place share it (contract: coordinateId).
    coordinate_id: Mapped[uuid.UUID] = mapped_column(GUID)
    latitude: Mapped[float] = mapped_column(Float)
    longitude: Mapped[float] = mapped_column(Float)
    # The grid the writer chose; latitude and longitude are already snapped to it.
    precision: Mapped[StopPrecision] = mapped_column(
        stored_enum(StopPrecision, length=16),
        default=StopPrecision.EXACT,
        server_default=StopPrecision.EXACT.value,
    )
    location_label: Mapped[str] = mapped_column(String(200), default="")
    # ISO 3166-1 alpha-2 of the snapped point by the offline geocoder; "" where no town is near.
    country_code: Mapped[str] = mapped_column(String(2), default="", server_default="")
    # The GeoNames id of the offline geocoder's city the label names (place_names), so a
    # page can show the place in its own language; None when another geocoder wrote it.
    place_geonameid: Mapped[int | None] = mapped_column(Integer, default=None)
    associated_utc: Mapped[datetime] = mapped_column(default=utcnow)
    observed_utc: Mapped[datetime | None] = mapped_column(default=None)
    is_location_only: Mapped[bool] = mapped_column(Boolean, default=True)
    is_anonymous: Mapped[bool] = mapped_column(Boolean, default=False)
    created_by_user_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None, index=True
    )
    creator_display_name: Mapped[str] = mapped_column(String(100), default="")
    note_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("notes.id", ondelete="SET NULL"), default=None
    )
    # The writer's retry tag: a second write with the same tag returns this stop.
    client_mutation_id: Mapped[str | None] = mapped_column(
        String(CLIENT_MUTATION_ID_MAX_LENGTH), default=None
    )
    # The tagged request's fingerprint (services.shared.mutations): a later request with
    # the tag but another payload is refused (409), not answered with this stop.
    client_payload_hash: Mapped[str | None] = mapped_column(String(64), default=None)
    # An anonymous writer's proof (docs/contract/images.md, Finders' photos): the access
    # session it wrote with, while that session lasts. No foreign key: a session's id is
    # never reused, and ending one should not have to visit every entry it wrote.
    writer_session_id: Mapped[uuid.UUID | None] = mapped_column(default=None)

    __table_args__ = (UniqueConstraint("trackable_id", "client_mutation_id"),)


Index("ix_journey_stops_trackable", JourneyStop.trackable_id, JourneyStop.associated_utc)


class TrackableComment(Base):
    """A comment on a trackable (contract: Trackables: comments and journey). A signed-in
    author is linked by account; an anonymous one (who held the item: an access session or
    its code) only by the display name they chose."""

    __tablename__ = "trackable_comments"
    __table_args__ = (UniqueConstraint("trackable_id", "client_mutation_id"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    trackable_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("trackables.id", ondelete="CASCADE"))
    author_user_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), default=None, index=True
    )
    # An anonymous author's chosen name (a signed-in author's shows from the account).
    author_display_name: Mapped[str] = mapped_column(String(COMMENT_NAME_MAX_LENGTH), default="")
    body: Mapped[str] = mapped_column(Text)
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    edited_utc: Mapped[datetime | None] = mapped_column(default=None)
    observed_utc: Mapped[datetime | None] = mapped_column(default=None)
    client_mutation_id: Mapped[str | None] = mapped_column(
        String(CLIENT_MUTATION_ID_MAX_LENGTH), default=None
    )
    # As on JourneyStop: the tagged request's fingerprint, kept when the body is edited.
    client_payload_hash: Mapped[str | None] = mapped_column(String(64), default=None)
    # As on JourneyStop: the access session an anonymous writer wrote with.
    writer_session_id: Mapped[uuid.UUID | None] = mapped_column(default=None)

    author: Mapped[User | None] = relationship(lazy="joined")

    @property
    def is_anonymous(self) -> bool:
        return self.author_user_id is None


Index(
    "ix_trackable_comments_trackable", TrackableComment.trackable_id, TrackableComment.created_utc
)
