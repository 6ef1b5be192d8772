"""One account cannot stall the background work (tests/api/webhooks/stall.py), with real
worker processes: one and two on PostgreSQL, one on SQLite. Everyone else's mail, webhook,
inbox row and export arrive within 10 s; the owner's changes answer within a second; no
lease runs out and no worker fails on a lock; the tries record their real start and
latency; the circuit opens after its timeouts. About half a minute each: marked
`processes` (CI runs them; a plain `make test` skips them)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.api.webhooks import stall
from tests.hanging_peers import BlackHole
from tests.receivers import Receiver, reachable

pytestmark = pytest.mark.processes


@pytest.fixture
def hole(app) -> Iterator[BlackHole]:
    black = BlackHole()
    reachable(app, black.port, stall.TIMEOUT_SECONDS)
    try:
        yield black
    finally:
        black.close()


@pytest.mark.parametrize("worker_count", [1, 2])
def test_one_account_cannot_stall_anyone_elses_work(
    app, api, database_url, tmp_path: Path, hole, receiver: Receiver, worker_count
):
    if worker_count > 1 and make_url(database_url).get_backend_name() == "sqlite":
        pytest.skip("two worker processes on one SQLite file: PostgreSQL's case")
    workers = stall.Workers(database_url, tmp_path, [hole.port, receiver.port], worker_count)
    try:
        figures = stall.run(app, api, hole, receiver, workers)
    finally:
        workers.stop()
    assert max(figures.mail) < 10, figures
    assert max(figures.register) < 1, figures
    assert figures.prompt_webhook < 10, figures
    assert figures.inbox < 10, figures
    assert figures.export < 10, figures
    assert figures.switch_off < 1, figures
    assert figures.delete < 1, figures

    after = stall.aftermath(workers)
    assert after.troubles == [], workers.log_text()
    assert after.drain_reruns == 0  # no lease ran out during a run
    assert after.paused_tries, "no circuit opened"
    for tries in after.paused_tries:
        # Paused after the documented timeouts in a row, each its own try: its own start,
        # the time it waited, no earlier than the previous one ended.
        assert len(tries) == stall.CIRCUIT_TIMEOUTS
        for attempt in tries:
            assert attempt.error.startswith("Timed out")
            assert 5000 <= attempt.latency_ms < 6500
        for earlier, later in itertools.pairwise(tries):
            assert later.attempted_utc >= earlier.attempted_utc + timedelta(
                milliseconds=earlier.latency_ms
            )
