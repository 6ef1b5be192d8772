"""Offline sync for the mobile app (contract: Sync; decisions: Sync push): a device pushes
its dirty records, then pulls what changed since its last pull. The change clock
(clock.py) stamps every synced row at its commit: the factory installs it."""

from app.services.sync.clock import track_sync_changes
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
    "track_sync_changes",
]
