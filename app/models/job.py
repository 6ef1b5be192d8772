"""The durable job queue's rows (app.platform.jobs): work that a change asks for, written
in the change's own transaction and run later, at least once, by a worker process."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, new_id, utcnow
from app.models.enums import stored_enum

JOB_KIND_MAX_LENGTH = 100
WORKER_NAME_MAX_LENGTH = 200
FAIR_KEY_MAX_LENGTH = 100


class JobState(StrEnum):
    """A job waits (`queued`, also while a worker holds its lease), succeeded (`done`) or
    was given up after its attempts or its age ran out (`dead`, kept for a look)."""

    QUEUED = "queued"
    DONE = "done"
    DEAD = "dead"


class Job(Base):
    """One unit of work of a registered kind. A worker claims it by taking its lease
    (`locked_until_utc`, `locked_by`); a worker that dies leaves the lease to run out, and
    the job is claimed again."""

    __tablename__ = "jobs"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(String(JOB_KIND_MAX_LENGTH))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    state: Mapped[JobState] = mapped_column(stored_enum(JobState, 16), default=JobState.QUEUED)
    # Not before this time: the enqueue time, or the next try after a failure.
    run_after_utc: Mapped[datetime] = mapped_column(default=utcnow)
    attempts: Mapped[int] = mapped_column(Integer, default=0)  # runs started so far
    locked_until_utc: Mapped[datetime | None] = mapped_column(default=None)
    locked_by: Mapped[str | None] = mapped_column(String(WORKER_NAME_MAX_LENGTH), default=None)
    # Whose work it is, for a kind that runs one job per key at a time (JobKind.fair).
    fair_key: Mapped[str | None] = mapped_column(String(FAIR_KEY_MAX_LENGTH), default=None)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    finished_utc: Mapped[datetime | None] = mapped_column(default=None)  # done or dead


# Claiming reads the oldest due queued jobs; the clean-up and the backlog read by state too.
Index("ix_jobs_state_run_after", Job.state, Job.run_after_utc)
