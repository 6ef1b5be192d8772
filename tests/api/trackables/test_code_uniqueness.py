"""Code uniqueness at creation (contract: Trackable, code formats; decisions: Trackable
codes): a generated code that collides with any stored code is drawn again, also when the
colliding code was stored a moment ago by a concurrent request; a bring-your-own secret
that collides is refused (400 on `secretCode`)."""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import select

from app.auth import issue_access_token
from app.extensions import db
from app.models.trackable import Trackable, TrackableCode
from app.services.trackables.codes import formats as codes
from app.services.trackables.codes import issuing
from tests.factories import count_rows as count
from tests.factories import make_trackable, make_user
from tests.racing import BARRIER_SECONDS, LockBarrier

CREATE = "/api/trackables"
FIXED_PUBLIC = "LN-AAAAAA"
FIXED_SECRET = "LNBBBBBBBB"
THREADS = 4


def settings(app):
    return codes.CodeSettings.from_config(app.config)


def first_then_real(first: str, real: Callable[[Any], str]) -> Callable[[Any], str]:
    """A code generator that returns `first` on its first call, then real codes."""
    calls = itertools.count()

    def draw(code_settings: Any) -> str:
        return first if next(calls) == 0 else real(code_settings)

    return draw


def create(api, user, **body):
    body.setdefault("name", "Travel bug")
    return api.as_user(user).post(CREATE, json=body)


# --- a collision with a stored code ------------------------------------------------------


def test_a_generated_public_code_that_is_taken_is_drawn_again(api, monkeypatch):
    make_trackable(make_user(), public_code=FIXED_PUBLIC)
    monkeypatch.setattr(
        issuing, "new_public_code", first_then_real(FIXED_PUBLIC, codes.new_public_code)
    )
    response = create(api, make_user())
    assert response.status_code == 201
    public_code = response.get_json()["items"][0]["publicCode"]
    assert public_code != FIXED_PUBLIC
    assert count(Trackable, Trackable.public_code == public_code) == 1


def test_a_generated_secret_that_is_taken_is_drawn_again(app, api, monkeypatch):
    other = make_trackable(make_user(), secret_code=FIXED_SECRET)
    monkeypatch.setattr(
        issuing, "new_secret_code", first_then_real(FIXED_SECRET, codes.new_secret_code)
    )
    response = create(api, make_user())
    assert response.status_code == 201
    secret = response.get_json()["items"][0]["secretCode"]
    assert secret != FIXED_SECRET
    owners = db.session.scalars(
        select(TrackableCode.trackable_id).where(
            TrackableCode.code_hash.in_(codes.typed_hashes(settings(app), FIXED_SECRET))
        )
    ).all()
    assert owners == [other.id]  # the old one keeps its secret


def test_a_generated_qr_token_that_is_taken_is_drawn_again(api, monkeypatch):
    taken = "q" * 100
    make_trackable(make_user(), qr_token=taken)
    monkeypatch.setattr(issuing, "new_qr_token", first_then_real(taken, codes.new_qr_token))
    response = create(api, make_user())
    assert response.status_code == 201
    assert not response.get_json()["items"][0]["scanUrl"].endswith(taken)


def test_codes_that_never_come_free_are_a_500_and_store_nothing(api, monkeypatch):
    make_trackable(make_user(), secret_code=FIXED_SECRET)
    monkeypatch.setattr(issuing, "new_secret_code", lambda code_settings: FIXED_SECRET)
    response = create(api, make_user())
    assert response.status_code == 500
    assert "ticketNumber" in response.get_json(force=True)
    assert count(Trackable) == 1
    assert count(TrackableCode) == 3


def create_group(api, user, count_of_items):
    body = {"name": "Summer hike", "trackableCount": count_of_items}
    return api.as_user(user).post("/api/trackables/groups", json=body)


def assert_group_codes_distinct_and_stored(app, body, count_of_items):
    items = body["items"]
    assert len(items) == count_of_items
    for field in ("publicCode", "secretCode", "scanUrl"):
        assert len({item[field] for item in items}) == count_of_items, field
    for item in items:
        found = db.session.scalars(
            select(TrackableCode.trackable_id).where(
                TrackableCode.code_hash.in_(codes.typed_hashes(settings(app), item["secretCode"]))
            )
        ).all()
        assert [str(trackable_id) for trackable_id in found] == [item["trackableId"]]


def test_a_group_item_drawing_a_stored_secret_draws_again(app, api, monkeypatch):
    other = make_trackable(make_user(), secret_code=FIXED_SECRET)
    monkeypatch.setattr(
        issuing, "new_secret_code", first_then_real(FIXED_SECRET, codes.new_secret_code)
    )
    response = create_group(api, make_user(), 5)
    assert response.status_code == 201, response.get_data(as_text=True)
    assert FIXED_SECRET not in {item["secretCode"] for item in response.get_json()["items"]}
    assert_group_codes_distinct_and_stored(app, response.get_json(), 5)
    assert count(TrackableCode, TrackableCode.trackable_id == other.id) == 3
    assert count(Trackable) == 6
    assert count(TrackableCode) == 18


def test_group_items_drawing_the_same_public_code_draw_again(app, api, monkeypatch):
    calls = itertools.count()
    monkeypatch.setattr(
        issuing,
        "new_public_code",
        lambda code_settings: (
            FIXED_PUBLIC if next(calls) < 2 else codes.new_public_code(code_settings)
        ),
    )
    response = create_group(api, make_user(), 4)
    assert response.status_code == 201, response.get_data(as_text=True)
    assert_group_codes_distinct_and_stored(app, response.get_json(), 4)
    assert count(Trackable) == 4
    assert count(TrackableCode) == 12


# --- concurrent creations ----------------------------------------------------------------


def run_together(app, users, bodies, before_first_draw: Callable[[], None]) -> list[Any]:
    """Each user POSTs its body from its own thread (its own app context, session and
    database connection); `before_first_draw` runs in each thread as it draws its first
    public code. Returns (status, body) per thread."""
    tokens = [issue_access_token(user) for user in users]
    db.session.commit()  # the test's own session holds nothing while the threads run
    results: list[Any] = [None] * len(users)

    def run(index: int) -> None:
        response = app.test_client().post(
            CREATE, json=bodies[index], headers={"Authorization": f"Bearer {tokens[index]}"}
        )
        results[index] = (response.status_code, response.get_json(force=True))

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(users))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results


def barrier_then(draw: Callable[[Any], str], parties: int) -> Callable[[Any], str]:
    """`draw`, after every thread's first call has arrived (released together). A thread
    that never arrives waits for a lock another one holds (SQLite's write lock, taken by
    the creation limit; on PostgreSQL the guess budget's lock of one address): after a
    few seconds the others go on without it."""
    barrier = LockBarrier(parties, timeout=BARRIER_SECONDS)
    local = threading.local()

    def draw_together(code_settings: Any) -> str:
        if not getattr(local, "waited", False):
            local.waited = True
            with contextlib.suppress(threading.BrokenBarrierError):
                barrier.wait()
        return draw(code_settings)

    return draw_together


def same_first_code_in_every_thread(first: str, real: Callable[[Any], str]) -> Callable:
    local = threading.local()

    def draw(code_settings: Any) -> str:
        if not getattr(local, "drawn", False):
            local.drawn = True
            return first
        return real(code_settings)

    return draw


def test_concurrent_creations_drawing_the_same_public_code_all_succeed(app, monkeypatch):
    users = [make_user() for _ in range(THREADS)]
    draw = same_first_code_in_every_thread(FIXED_PUBLIC, codes.new_public_code)
    monkeypatch.setattr(issuing, "new_public_code", barrier_then(draw, THREADS))
    results = run_together(app, users, [{"name": "Bug"}] * THREADS, lambda: None)
    assert [status for status, _ in results] == [201] * THREADS
    public_codes = [body["items"][0]["publicCode"] for _, body in results]
    assert len(set(public_codes)) == THREADS
    assert public_codes.count(FIXED_PUBLIC) == 1
    db.session.expire_all()
    assert count(Trackable) == THREADS
    assert count(TrackableCode) == 3 * THREADS


def test_concurrent_creations_drawing_the_same_secret_all_succeed(app, monkeypatch):
    users = [make_user() for _ in range(THREADS)]
    monkeypatch.setattr(issuing, "new_public_code", barrier_then(codes.new_public_code, THREADS))
    monkeypatch.setattr(
        issuing,
        "new_secret_code",
        same_first_code_in_every_thread(FIXED_SECRET, codes.new_secret_code),
    )
    results = run_together(app, users, [{"name": "Bug"}] * THREADS, lambda: None)
    assert [status for status, _ in results] == [201] * THREADS
    secrets = [body["items"][0]["secretCode"] for _, body in results]
    assert len(set(secrets)) == THREADS
    assert secrets.count(FIXED_SECRET) == 1
    db.session.expire_all()
    assert count(TrackableCode) == 3 * THREADS


def test_the_same_own_secret_in_two_concurrent_requests_is_refused_once(app, monkeypatch):
    users = [make_user(), make_user()]
    monkeypatch.setattr(issuing, "new_public_code", barrier_then(codes.new_public_code, 2))
    body = {"name": "Bug", "secretCode": "Shared-Code"}
    results = run_together(app, users, [body, body], lambda: None)
    assert sorted(status for status, _ in results) == [201, 400]
    refused = next(body for status, body in results if status == 400)
    assert "secretCode" in refused["errors"]
    created = next(body for status, body in results if status == 201)
    db.session.expire_all()
    assert count(Trackable) == 1  # the refused request left nothing behind
    assert count(TrackableCode) == 3
    row = db.session.scalar(
        select(TrackableCode).where(
            TrackableCode.code_hash.in_(codes.typed_hashes(settings(app), "shared-code"))
        )
    )
    assert str(row.trackable_id) == created["trackableId"]


@pytest.mark.parametrize("app_overrides", [{"PUBLIC_BASE_URL": "https://notes.example.org/"}])
def test_codes_are_unique_across_many_creations(app, api):
    user = make_user()
    items = [create(api, user).get_json()["items"][0] for _ in range(20)]
    every_code = [item["publicCode"] for item in items] + [item["secretCode"] for item in items]
    every_code += [item["scanUrl"] for item in items]
    assert len(set(every_code)) == 60
    assert all(item["scanUrl"].startswith("https://notes.example.org/trackable/") for item in items)
