"""The wire's timestamp: ISO 8601 in UTC with milliseconds and `Z`
(`2026-12-06T08:20:04.123Z`), as JSON answers, webhooks, exports and log lines write it.
One function, so they cannot drift apart; the notes' list reads render the same text in
SQL (services.notes.discovery, `UtcText`), held equal to it by tests/api/notes."""

from __future__ import annotations

from datetime import UTC, datetime


def wire_time(moment: datetime) -> str:
    """`moment` as the wire writes it; a naive moment is taken to be UTC."""
    aware = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return aware.isoformat(timespec="milliseconds").replace("+00:00", "Z")
