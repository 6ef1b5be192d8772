"""Categories: per-user and per-team folder trees of notes, one tree per content language.

`OwnerScope` names whose tree (a user's or a team's) a category or note belongs to, so the
tree logic in services/categories.py is written once for personal and team categories.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, CheckConstraint, ForeignKey, Index, String, and_, text
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.sql.elements import ColumnElement

from app.models.base import GUID, Base, new_id, utcnow
from app.models.sync import unstamped

CATEGORY_NAME_MAX_LENGTH = 100
LANGUAGE_TAG_MAX_LENGTH = 35  # BCP 47 advises supporting at least 35 characters
DEFAULT_CATEGORY_NAME = "Notes"  # the per-language root made when a note names no category


@dataclass(frozen=True)
class OwnerScope:
    """Whose notes and categories: a user's personal space or a team's workspace."""

    user_id: uuid.UUID | None = None
    team_id: uuid.UUID | None = None

    @classmethod
    def personal(cls, user_id: uuid.UUID) -> OwnerScope:
        return cls(user_id=user_id)

    @classmethod
    def team(cls, team_id: uuid.UUID) -> OwnerScope:
        return cls(team_id=team_id)

    @property
    def is_team(self) -> bool:
        return self.team_id is not None

    def where(self, model: Any) -> ColumnElement[bool]:
        """SQL: rows of `model` (Note or Category) inside this scope."""
        if self.team_id is not None:
            return model.team_id == self.team_id
        return and_(model.owner_user_id == self.user_id, model.team_id.is_(None))

    def contains(self, row: Any) -> bool:
        """The same test as `where`, on a loaded Note or Category."""
        if self.team_id is not None:
            return bool(row.team_id == self.team_id)
        return bool(row.owner_user_id == self.user_id and row.team_id is None)


class Category(Base):
    __tablename__ = "categories"
    __table_args__ = (
        # Personal categories have an owner user; team categories a team; never both.
        CheckConstraint("(owner_user_id IS NULL) <> (team_id IS NULL)", name="one_owner_scope"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    owner_user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"), default=None)
    # No foreign key yet: the teams table arrives with the teams area, which adds it.
    team_id: Mapped[uuid.UUID | None] = mapped_column(GUID, default=None)
    parent_category_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("categories.id"), default=None, index=True
    )
    name: Mapped[str] = mapped_column(String(CATEGORY_NAME_MAX_LENGTH))
    content_language: Mapped[str] = mapped_column(String(LANGUAGE_TAG_MAX_LENGTH))
    # Deleted categories stay as tombstones (sync tells devices about them); no read shows
    # them. Tombstoned notes keep pointing at their tombstoned category.
    is_deleted: Mapped[bool] = mapped_column(Boolean, default=False)
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    updated_utc: Mapped[datetime] = mapped_column(default=utcnow)
    # The sync change clock's stamp (app.models.sync), NULL until the commit stamps it.
    sync_utc: Mapped[datetime | None] = mapped_column(default=None, onupdate=unstamped)


Index("ix_categories_owner_language", Category.owner_user_id, Category.content_language)
Index("ix_categories_team_language", Category.team_id, Category.content_language)
Index("ix_categories_owner_sync", Category.owner_user_id, Category.sync_utc)
Index("ix_categories_team_sync", Category.team_id, Category.sync_utc)
Index(
    "ix_categories_unstamped",
    Category.id,
    postgresql_where=text("sync_utc IS NULL"),
    sqlite_where=text("sync_utc IS NULL"),
)
