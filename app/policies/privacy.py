"""Who may see a personal data export: its account alone. Anyone else, super-admins
included, is answered 404: an export is the account's personal data, and its existence is
not revealed."""

from __future__ import annotations

import uuid

from app.auth import Viewer
from app.error_codes import Code
from app.errors import NotFound
from app.extensions import db
from app.models.privacy import AccountExport


def can_view(viewer: Viewer, export: AccountExport) -> bool:
    return viewer.user_id is not None and viewer.user_id == export.user_id


def get_own(viewer: Viewer, export_id: uuid.UUID) -> AccountExport:
    """The caller's export, or 404 for one that is not theirs or does not exist."""
    found = db.session.get(AccountExport, export_id)
    if found is None or not can_view(viewer, found):
        raise NotFound("No such data export.", code=Code.ACCOUNT_EXPORT_NOT_FOUND)
    return found
