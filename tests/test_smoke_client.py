"""tools/smoke.py, the smoke client CI drives the previous release with
(tools/upgrade_check.py): every flow passes against this release, served over real HTTP,
and a route that answers 500 is named among its failures."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from smoke import smoke


def test_every_flow_passes_against_this_release(live_server):
    assert smoke(live_server, tag="one") == []
    assert smoke(live_server, tag="two") == []  # again on the same database


def test_a_route_that_fails_is_named(live_server, app, monkeypatch):
    from app.services import sync

    def broken(*_args, **_kwargs):
        raise RuntimeError("planted")

    monkeypatch.setattr(sync, "pull", broken)
    failures = smoke(live_server, tag="broken")
    assert len(failures) == 2, failures  # the pull, and the note it did not bring back
    assert failures[0].startswith("POST /api/sync/pull: 500 (expected 200)")
