"""Personal data exports (docs/contract/privacy.md, Data export): one row per
export a user asked for, from the request until its file is swept.

The ZIP itself lives in the export store (app.storage.exports), under `storage_key`,
which is set only once the whole file is stored: a row that says `done` always names a
complete file, and a file without such a row is swept.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, new_id, utcnow
from app.models.enums import stored_enum

STORAGE_KEY_MAX_LENGTH = 200


class ExportState(StrEnum):
    """`queued` (waiting for a worker), `running`, `done` (the file can be downloaded
    until `expires_utc`), `failed` (the worker gave up), `expired` (its time ran out and
    the file is gone)."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    EXPIRED = "expired"


class AccountExport(Base):
    __tablename__ = "account_exports"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    state: Mapped[ExportState] = mapped_column(
        stored_enum(ExportState, 16), default=ExportState.QUEUED
    )
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    started_utc: Mapped[datetime | None] = mapped_column(default=None)
    finished_utc: Mapped[datetime | None] = mapped_column(default=None)  # done or failed
    # Until when the file may be downloaded (set when done).
    expires_utc: Mapped[datetime | None] = mapped_column(default=None)
    size_bytes: Mapped[int | None] = mapped_column(BigInteger, default=None)
    storage_key: Mapped[str | None] = mapped_column(String(STORAGE_KEY_MAX_LENGTH), default=None)


# A user's exports, newest first (the one-at-a-time check, the account clean-up).
Index("ix_account_exports_user", AccountExport.user_id, AccountExport.created_utc)
# The sweep reads by state and age.
Index("ix_account_exports_state", AccountExport.state, AccountExport.created_utc)
