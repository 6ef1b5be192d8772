"""Trackables area: one blueprint (routes.py), its routes split by theme: reads and
creation (reads.py, creation.py), activation, groups and watches (activation.py), lookup
and active sessions (lookup.py), comments (comments.py), the journey (journey.py),
attaching trackables to notes (attach.py) and printable labels (labels.py)."""

from app.api.trackables import (
    activation,
    attach,
    comments,
    creation,
    exports,
    journey,
    labels,
    lookup,
    reads,
)
from app.api.trackables.routes import blp

__all__ = [
    "activation",
    "attach",
    "blp",
    "comments",
    "creation",
    "exports",
    "journey",
    "labels",
    "lookup",
    "reads",
]
