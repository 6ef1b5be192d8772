"""The app the crash test serves with gunicorn (`tests.api.notifications.crash_app:app`):
the test database named in CRASH_TEST_DATABASE_URL, and a test-only hook that kills the
serving process (SIGKILL, no clean-up of any kind) the instant a commit that recorded an
event has returned, before the route goes on and before any answer is sent.
"""

from __future__ import annotations

import os
import signal
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session

from app import create_app
from app.models.event import Event

app = create_app(
    {
        "TESTING": True,
        "SQLALCHEMY_DATABASE_URI": os.environ["CRASH_TEST_DATABASE_URL"],
        "MAIL_BACKEND": "memory",
        "RATELIMIT_STORAGE_URI": "memory://",
    }
)


@event.listens_for(Session, "after_flush")
def _note_events(session: Session, _context: Any) -> None:
    if any(isinstance(added, Event) for added in session.new):
        session.info["recorded_event"] = True


@event.listens_for(Session, "after_commit")
def _die_after_an_event(session: Session) -> None:
    if session.info.pop("recorded_event", False):
        os.kill(os.getpid(), signal.SIGKILL)


@event.listens_for(Session, "after_rollback")
def _forget(session: Session) -> None:
    session.info.pop("recorded_event", None)
