"""Journey statistics under concurrent writes: stops added and deleted
at the same moment by requests in their own threads, each with its own client, session and
database connection (the pattern of tests/api/test_races.py). Each thread stops at a
barrier right after it has read the stops its statistics are computed from: were the
statistics computed outside the trackable's row lock, every thread would pass the barrier
with a read that misses the others' stops and the last commit would store a stale count.
With the lock the first thread's barrier times out while the others wait for the lock,
and each reads what the ones before it committed."""

from __future__ import annotations

import threading
from typing import Any

from app.auth import issue_access_token
from app.extensions import db
from app.models.trackable import Trackable
from app.models.user import User
from app.services.trackables.journey import statistics
from tests.api.trackables.conftest import Cast
from tests.racing import BARRIER_SECONDS, LockBarrier, stop_after

POINTS = [(47.3769, 8.5417), (52.52, 13.405), (48.8566, 2.3522), (0.0, 179.9), (0.0, -179.9)]


def run_together(app: Any, calls: list[tuple[User, Any]]) -> list[int]:
    """Each (user, call) in its own thread with its own client (so its own session and
    connection), all released at once by a barrier; each one's status."""
    headers = [{"Authorization": f"Bearer {issue_access_token(user)}"} for user, _ in calls]
    db.session.commit()  # the test's own session holds nothing while the threads run
    statuses: list[int] = [0] * len(calls)
    start = threading.Barrier(len(calls), timeout=30)

    def run(index: int) -> None:
        client = app.test_client()
        start.wait()
        statuses[index] = calls[index][1](client, headers[index]).status_code

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    db.session.expire_all()
    return statuses


def post_stop(trackable_id: Any, latitude: float, longitude: float) -> Any:
    url = f"/api/trackables/{trackable_id}/journey-stops"
    body = {"latitude": latitude, "longitude": longitude}
    return lambda client, headers: client.post(url, json=body, headers=headers)


def delete_stop(trackable_id: Any, stop_id: str) -> Any:
    url = f"/api/trackables/{trackable_id}/journey-stops/{stop_id}"
    return lambda client, headers: client.delete(url, headers=headers)


def test_concurrent_stops_leave_statistics_equal_to_a_recomputation(app, api, monkeypatch, cast):
    trackable_id = cast.trackable.id
    url = f"/api/trackables/{trackable_id}/journey-stops"
    kept = api.as_user(cast.owner).post(url, json={"latitude": -40.0, "longitude": -20.0})
    doomed = api.as_user(cast.owner).post(url, json={"latitude": -10.0, "longitude": -10.0})
    assert (kept.status_code, doomed.status_code) == (201, 201)
    calls = [(cast.author, post_stop(trackable_id, *point)) for point in POINTS]
    calls.append((cast.owner, delete_stop(trackable_id, doomed.get_json()["journeyStopId"])))
    barrier = LockBarrier(len(calls), timeout=BARRIER_SECONDS)
    stop_after(monkeypatch, "app.services.trackables.journey.statistics.journey_points", barrier)

    statuses = run_together(app, calls)

    assert sorted(statuses) == [201] * len(POINTS) + [204]
    trackable = db.session.get(Trackable, trackable_id)
    kept_now = statistics.stored(trackable)
    assert kept_now == statistics.compute(statistics.journey_points(trackable_id))
    assert kept_now.stop_count == len(POINTS) + 1
    assert set(kept_now.countries) == {"CH", "DE", "FR"}


def test_a_stop_deleted_while_another_is_added_leaves_both_changes_counted(
    app, api, monkeypatch, cast
):
    # Two writers, one barrier: the deletion's statistics read, were it not under the lock,
    # would miss the stop being added, and it commits last (the adder holds the row).
    trackable_id = cast.trackable.id
    url = f"/api/trackables/{trackable_id}/journey-stops"
    api.as_user(cast.owner).post(url, json={"latitude": -40.0, "longitude": -20.0})
    doomed = api.as_user(cast.owner).post(url, json={"latitude": -10.0, "longitude": -10.0})
    calls = [
        (cast.author, post_stop(trackable_id, *POINTS[0])),
        (cast.owner, delete_stop(trackable_id, doomed.get_json()["journeyStopId"])),
    ]
    barrier = LockBarrier(len(calls), timeout=BARRIER_SECONDS)
    stop_after(monkeypatch, "app.services.trackables.journey.statistics.journey_points", barrier)

    assert sorted(run_together(app, calls)) == [201, 204]
    trackable = db.session.get(Trackable, trackable_id)
    assert statistics.stored(trackable) == statistics.compute(
        statistics.journey_points(trackable_id)
    )
    assert statistics.stored(trackable).stop_count == 2


def test_concurrent_first_stops_of_two_trackables_do_not_wait_for_each_other(
    app, monkeypatch, cast: Cast
):
    # The lock is the trackable's row: another trackable's stops pass the barrier together
    # (on PostgreSQL; SQLite has one write lock for the whole database).
    from tests.factories import make_trackable

    other = make_trackable(cast.owner, name="Green bug")
    db.session.commit()
    calls = [
        (cast.owner, post_stop(cast.trackable.id, *POINTS[0])),
        (cast.owner, post_stop(other.id, *POINTS[1])),
    ]
    passed: list[bool] = []
    # Generous where both are expected at the barrier (a loaded machine starts threads
    # late); SQLite's writer waits it out alone, so there the usual short wait.
    postgresql = db.engine.dialect.name == "postgresql"
    barrier = LockBarrier(2, timeout=10.0 if postgresql else BARRIER_SECONDS)
    original = statistics.journey_points

    def counting(trackable_id: Any) -> Any:
        found = original(trackable_id)
        try:
            barrier.wait()
            passed.append(True)
        except threading.BrokenBarrierError:
            passed.append(False)
        return found

    monkeypatch.setattr(statistics, "journey_points", counting)
    assert run_together(app, calls) == [201, 201]
    if postgresql:
        assert passed == [True, True]
    for trackable_id in (cast.trackable.id, other.id):
        trackable = db.session.get(Trackable, trackable_id)
        assert statistics.stored(trackable).stop_count == 1
