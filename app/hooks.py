"""Where areas plug into shared flows: the parts of the Viewer and the account clean-ups.

The factory (app.create_app) builds the one AreaHooks of an app from an explicit list, so
reading create_app shows everything that runs; this module imports no area.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flask import current_app

if TYPE_CHECKING:
    from app.models.user import User


@dataclass
class DeletionCounts:
    """What the account clean-ups report (the counts of the account deletion result)."""

    notes_deleted: int = 0
    categories_deleted: int = 0
    linked_providers_deleted: int = 0


ViewerPart = Callable[["User | None"], Mapping[str, Any]]
AccountCleanup = Callable[["User", DeletionCounts], None]


@dataclass(frozen=True)
class AreaHooks:
    """`viewer_parts` each add keyword values to the Viewer of a request (sets of ids are
    merged); `account_cleanups` run in this order when an account is deleted."""

    viewer_parts: Sequence[ViewerPart]
    account_cleanups: Sequence[AccountCleanup]


def area_hooks() -> AreaHooks:
    """The hooks of the current app."""
    hooks: AreaHooks = current_app.extensions["area_hooks"]
    return hooks
