"""GPX export reads in keyset batches without losing or repeating notes."""

from __future__ import annotations

from datetime import UTC, datetime

from app.auth import build_viewer
from app.models.category import OwnerScope
from app.services.notes.gpx import export_waypoints
from tests.factories import make_note, make_user


def test_export_batches_cover_every_note_once_in_order(app):
    owner = make_user()
    same_time = datetime(2026, 1, 1, tzinfo=UTC)
    for number in range(7):  # equal timestamps: the id breaks ties between batches
        make_note(
            owner, title=f"n{number}", latitude=1.0, longitude=float(number), created_utc=same_time
        )
    viewer = build_viewer(owner)
    names = [w.name for w in export_waypoints(viewer, OwnerScope.personal(owner.id), batch_size=2)]
    assert sorted(names) == [f"n{number}" for number in range(7)]
    assert len(names) == len(set(names))
