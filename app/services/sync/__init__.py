"""Offline sync for the mobile app (contract: Sync; decisions: Sync push): a device pushes
its dirty records, then pulls what changed since its last pull."""

from app.services.sync.pull import PullResult, pull
from app.services.sync.push import (
    CONFLICT_REASONS,
    Conflict,
    PushedRecord,
    PushResult,
    push,
)

__all__ = [
    "CONFLICT_REASONS",
    "Conflict",
    "PullResult",
    "PushResult",
    "PushedRecord",
    "pull",
    "push",
]
