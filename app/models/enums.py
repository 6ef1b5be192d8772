"""Enumerations shared by models and schemas, stored by their wire value.

Each is a StrEnum whose values are the contract's spellings; `stored_enum()` maps one to a
VARCHAR column that holds exactly that value (no native database enum type, so adding a
value later needs no type migration).
"""

from __future__ import annotations

from enum import StrEnum

from sqlalchemy import Enum as SqlEnum


class NoteVisibility(StrEnum):
    """Who may open a note (contract: Note, visibility rules 1-3)."""

    PRIVATE = "Private"
    PUBLIC = "Public"
    # Public-like until the first trackable is attached; then only the owner, team
    # members and viewers who unlocked one of its trackables.
    ONCE_TRACKABLE_ACCESSED = "VisibleOnceAssociatedTrackableAccessed"


class CommentPolicy(StrEnum):
    """Who may comment on a note page they can open (contract: Note)."""

    LOGGED_IN_USERS = "LoggedInUsers"
    TEAM_MEMBERS = "TeamMembers"


def stored_enum(enum_class: type[StrEnum], length: int = 64) -> SqlEnum:
    """A column type storing the enum's value (`"Public"`), not its Python name."""
    return SqlEnum(
        enum_class,
        native_enum=False,
        create_constraint=False,
        length=length,
        values_callable=lambda members: [member.value for member in members],
        validate_strings=True,
    )
