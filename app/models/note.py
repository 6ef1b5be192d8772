"""Notes and their comments (contract: Note).

`is_publicly_discoverable` is a stored copy of "anonymous discovery may list this note"
(not deleted, and `Public`, or gated while no trackable is attached). Services keep it up
to date (services.notes.refresh_discoverability) whenever visibility, deletion or the
trackable associations change, so public bounds/nearby reads are one indexed filter.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import (
    Boolean,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Select,
    String,
    Text,
    event,
    select,
    text,
)
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Mapped, Mapper, mapped_column, relationship

from app.models.base import (
    GUID,
    LINK_DESCRIPTION_MAX_LENGTH,
    LINK_URL_MAX_LENGTH,
    Base,
    new_id,
    utcnow,
)
from app.models.category import LANGUAGE_TAG_MAX_LENGTH
from app.models.enums import CommentPolicy, NoteVisibility, stored_enum
from app.models.sync import unstamped
from app.models.user import USER_NAME_MAX_LENGTH, User

if TYPE_CHECKING:
    from app.models.trackable import Trackable

# Field limits (the contract leaves them open; docs/contract/README.md lists them).
TITLE_MAX_LENGTH = 200
BODY_MAX_LENGTH = 20_000
CLIENT_MUTATION_ID_MAX_LENGTH = 100
COMMENT_BODY_MAX_LENGTH = 4000


class Note(Base):
    __tablename__ = "notes"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    owner_user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"))
    # A stored copy of the owner's user name, so a list of 500 notes needs no lookup per
    # row in `users`. The foreign key on (owner_user_id, owner_user_name) keeps it in step:
    # it cannot name anyone but the owner, and a rename cascades to the owner's notes.
    # Filled on insert (`_copy_owner_user_name`); docs/contract/README.md says why.
    owner_user_name: Mapped[str] = mapped_column(String(USER_NAME_MAX_LENGTH))
    # Set for team notes. No foreign key yet: the teams table arrives with the teams area.
    team_id: Mapped[uuid.UUID | None] = mapped_column(GUID, default=None)
    category_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("categories.id"), index=True)
    title: Mapped[str] = mapped_column(String(TITLE_MAX_LENGTH))
    body: Mapped[str] = mapped_column(Text, default="")
    content_language: Mapped[str] = mapped_column(String(LANGUAGE_TAG_MAX_LENGTH))
    latitude: Mapped[float | None] = mapped_column(Float, default=None)
    longitude: Mapped[float | None] = mapped_column(Float, default=None)
    visibility: Mapped[NoteVisibility] = mapped_column(
        stored_enum(NoteVisibility), default=NoteVisibility.PRIVATE
    )
    comment_policy: Mapped[CommentPolicy] = mapped_column(
        stored_enum(CommentPolicy), default=CommentPolicy.LOGGED_IN_USERS
    )
    external_link_url: Mapped[str | None] = mapped_column(String(LINK_URL_MAX_LENGTH), default=None)
    external_link_description: Mapped[str] = mapped_column(
        String(LINK_DESCRIPTION_MAX_LENGTH), default=""
    )
    client_mutation_id: Mapped[str | None] = mapped_column(
        String(CLIENT_MUTATION_ID_MAX_LENGTH), default=None
    )
    # A deleted note stays as a tombstone for sync; every read leaves it out.
    is_deleted: Mapped[bool] = mapped_column(Boolean, default=False)
    is_publicly_discoverable: Mapped[bool] = mapped_column(Boolean, default=False)
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    # Persistence time of the note's own fields (create, move, delete, discoverability).
    updated_utc: Mapped[datetime] = mapped_column(default=utcnow)
    # Most recent activity: edits, comments and (later) attachments and images.
    last_activity_utc: Mapped[datetime] = mapped_column(default=utcnow)
    # The sync change clock's stamp of the commit that last changed the row; NULL until
    # that commit stamps it (app.models.sync explains the clock).
    sync_utc: Mapped[datetime | None] = mapped_column(default=None, onupdate=unstamped)

    __table_args__ = (
        ForeignKeyConstraint(
            ["owner_user_id", "owner_user_name"],
            ["users.id", "users.user_name"],
            name="fk_notes_owner_user_name_users",
            onupdate="CASCADE",
        ),
    )

    owner: Mapped[User] = relationship(
        User, lazy="joined", innerjoin=True, foreign_keys=[owner_user_id]
    )
    trackables: Mapped[list[Trackable]] = relationship(
        "Trackable", secondary="note_trackables", lazy="select"
    )

    @property
    def trackable_ids(self) -> frozenset[uuid.UUID]:
        return frozenset(trackable.id for trackable in self.trackables)

    def computed_discoverability(self) -> bool:
        """Contract: Public note discovery (Public, or gated with no trackables yet)."""
        return discoverable(self.is_deleted, self.visibility, lambda: bool(self.trackables))


def discoverable(
    is_deleted: bool, visibility: NoteVisibility, has_trackables: Callable[[], bool]
) -> bool:
    """The discovery rule on a note's values (a batch writes rows, not objects);
    `has_trackables` is asked only for a gated note."""
    if is_deleted:
        return False
    if visibility == NoteVisibility.PUBLIC:
        return True
    return visibility == NoteVisibility.ONCE_TRACKABLE_ACCESSED and not has_trackables()


@event.listens_for(Note, "before_insert")
def _copy_owner_user_name(_mapper: Mapper[Note], connection: Connection, note: Note) -> None:
    """A new note takes its owner's current user name (the foreign key keeps it after)."""
    if note.owner_user_name is None:
        note.owner_user_name = connection.scalar(owner_user_name_of(note.owner_user_id))


def owner_user_name_of(owner_user_id: uuid.UUID) -> Select[str]:
    """The user name a new note of this owner stores (many notes written as rows, which
    skip the ORM's `before_insert`, read it once with this)."""
    return select(User.user_name).where(User.id == owner_user_id)


# SQLite uses a partial index only when the query's WHERE has the index's condition as
# written, and SQLAlchemy writes the boolean column there as `is_publicly_discoverable = 1`.
SQLITE_DISCOVERABLE = text("is_publicly_discoverable = 1")

# Anonymous discovery: "discoverable, in this window, newest activity first, LIMIT cap".
# services.notes.discovery picks the access path by the window's size: for small and
# medium windows it first reads the ids of the newest matches, which these covering partial
# indexes answer with an index-only scan on PostgreSQL (by position for small windows, by
# activity for larger ones, where the first `cap` matches come quickly; the INCLUDE columns
# let either filter the other's conditions without visiting the table); for the widest it
# reads the activity index and its rows in one scan.
Index(
    "ix_notes_public_activity",
    Note.last_activity_utc.desc(),
    Note.id.desc(),
    postgresql_where=text("is_publicly_discoverable"),
    postgresql_include=["latitude", "longitude", "content_language"],
    sqlite_where=SQLITE_DISCOVERABLE,
)
Index(
    "ix_notes_public_position",
    Note.latitude,
    Note.longitude,
    postgresql_where=text("is_publicly_discoverable"),
    postgresql_include=["last_activity_utc", "id", "content_language"],
    sqlite_where=SQLITE_DISCOVERABLE,
)
# The same with a language filter: that language's notes in activity order, so a rare
# language is found without reading past every other language's notes.
Index(
    "ix_notes_public_language_activity",
    Note.content_language,
    Note.last_activity_utc.desc(),
    Note.id.desc(),
    postgresql_where=text("is_publicly_discoverable"),
    postgresql_include=["latitude", "longitude"],
    sqlite_where=SQLITE_DISCOVERABLE,
)
# Personal lists and profile reads: one owner's notes by activity.
Index("ix_notes_owner_activity", Note.owner_user_id, Note.last_activity_utc.desc())
Index("ix_notes_team_activity", Note.team_id, Note.last_activity_utc.desc())
# Sync pulls: what changed in one owner's or one team's notes since a stamp, and the rows
# the committing transaction has yet to stamp.
Index("ix_notes_owner_sync", Note.owner_user_id, Note.sync_utc)
Index("ix_notes_team_sync", Note.team_id, Note.sync_utc)
Index(
    "ix_notes_unstamped",
    Note.id,
    postgresql_where=text("sync_utc IS NULL"),
    sqlite_where=text("sync_utc IS NULL"),
)


class NoteComment(Base):
    """A comment on a note page; readers see what they can see of the note."""

    __tablename__ = "note_comments"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    note_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("notes.id", ondelete="CASCADE"))
    author_user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), index=True)
    body: Mapped[str] = mapped_column(Text)
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    updated_utc: Mapped[datetime] = mapped_column(default=utcnow)

    author: Mapped[User] = relationship(User, lazy="joined", innerjoin=True)


Index("ix_note_comments_note_created", NoteComment.note_id, NoteComment.created_utc.desc())
