"""tools/smoke.py, the smoke client CI drives the previous release with
(tools/upgrade_check.py): every flow passes against this release, served over real HTTP,
and a route that answers 500 is named among its failures, by the flows and by the reader
that keeps asking while the migrations run."""

from __future__ import annotations

import threading
from typing import Any

from app.services import notes, sync
from tools.smoke import keep_reading, smoke


def test_every_flow_passes_against_this_release(live_server):
    assert smoke(live_server, tag="one") == []
    assert smoke(live_server, tag="One-1") == []  # again on the same database, any tag


def test_a_route_that_fails_is_named_with_its_status_and_answer(live_server, monkeypatch):
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("planted")

    monkeypatch.setattr(sync, "pull", broken)
    failures = smoke(live_server, tag="broken")
    assert len(failures) == 1, failures  # the pull alone: what it would have shown is not read
    assert failures[0].startswith("POST /api/sync/pull: 500 (expected 200) {")
    assert "ticketNumber" in failures[0]


def test_the_reader_names_a_read_that_fails_once_with_its_repeats(live_server, monkeypatch):
    calls: list[int] = []
    twice = threading.Event()

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            twice.set()
        raise RuntimeError("planted")

    monkeypatch.setattr(notes, "public_notes", broken)
    stop = threading.Event()
    failures: list[str] = []
    reader = threading.Thread(target=keep_reading, args=(live_server, stop, failures))
    reader.start()
    assert twice.wait(timeout=30)
    stop.set()  # the reader finishes the read under way, then stops
    reader.join(timeout=30)
    bounds = (
        "/api/notes/public/bounds?minLatitude=52&minLongitude=13&maxLatitude=53&maxLongitude=14"
    )
    assert len(failures) == 2, failures  # the status reads answered 200: not failures
    assert failures[0].startswith(f"GET {bounds}: 500 (expected 200) ")
    assert failures[1] == f"GET {bounds}: 500: 1 more times"
