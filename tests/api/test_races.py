"""Races found by parallel requests, each fixed with the database's help
(`app.platform.database.lock_for_write`: an advisory lock on PostgreSQL, BEGIN IMMEDIATE on SQLite).

Two requests run in two threads, each with its own test client, app context, session and
database connection. Each thread stops at a barrier placed just after the read that decides
its write: without the lock both threads get there together, the barrier lets both go on,
and both write what their stale read decided, so the test fails every time. With the lock
the second thread is still waiting for it, the first one's barrier breaks (as soon as the
second is seen waiting: tests/racing.py), and the first commits before the second reads.
Exactly one wins; the other gets the answer a repeated request gets.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import select

from app.auth import issue_access_token
from app.extensions import db
from app.models.category import DEFAULT_CATEGORY_NAME, Category
from app.models.note import Note, NoteVisibility
from app.models.team import MembershipStatus, TeamMembership
from app.models.user import User
from tests.factories import count_rows as count
from tests.factories import make_category, make_membership, make_note, make_team, make_user
from tests.racing import (
    BARRIER_SECONDS,
    POOL_BOUND_SECONDS,
    LockBarrier,
    run_together,
    statuses,
    stop_after,
    wait_while_running,
)

# --- categories ----------------------------------------------------------------------------


def test_two_crossing_category_moves_cannot_make_a_cycle(app, monkeypatch, barrier):
    owner = make_user()
    x, y = make_category(owner, name="X"), make_category(owner, name="Y")
    stop_after(monkeypatch, "app.services.categories.tree._checked_parent", barrier)

    def move(child: Category, parent: Category) -> Callable[[Any, dict[str, str]], Any]:
        url, body = f"/api/categories/mine/{child.id}/move", {"parentCategoryId": str(parent.id)}
        return lambda client, headers: client.post(url, json=body, headers=headers)

    x_id, y_id = x.id, y.id
    results = run_together(app, [(owner, move(x, y)), (owner, move(y, x))])
    assert statuses(results) == [200, 400]
    refused = next(body for status, body in results if status == 400)
    assert "parentCategoryId" in refused["errors"]  # as a repeated move inside itself gets
    parents = dict(db.session.execute(select(Category.id, Category.parent_category_id)).all())
    assert (parents[x_id], parents[y_id]) in ((y_id, None), (None, x_id))


def test_parallel_first_notes_share_one_notes_root_category(app, monkeypatch, barrier):
    owner = make_user()
    stop_after(monkeypatch, "app.services.notes.notes.utcnow", barrier)

    def create(title: str) -> Callable[[Any, dict[str, str]], Any]:
        body = {"title": title, "contentLanguage": "en"}
        return lambda client, headers: client.post("/api/notes/mine", json=body, headers=headers)

    results = run_together(app, [(owner, create("First")), (owner, create("Second"))])
    assert statuses(results) == [201, 201]
    roots = db.session.scalars(
        select(Category).where(
            Category.owner_user_id == owner.id, Category.name == DEFAULT_CATEGORY_NAME
        )
    ).all()
    assert len(roots) == 1
    assert {body["categoryId"] for _, body in results} == {str(roots[0].id)}


# --- GPX ---------------------------------------------------------------------------------

GPX = b"""<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
  <wpt lat="47.1" lon="11.2"><name>Hut</name><desc>Open in summer</desc></wpt>
  <wpt lat="47.3" lon="11.4"><name>Lake</name><desc>Cold</desc></wpt>
</gpx>"""


def test_parallel_imports_of_one_file_create_each_note_once(app, monkeypatch, barrier):
    owner = make_user()
    stop_after(monkeypatch, "app.services.notes.gpx._existing", barrier)

    def upload(client: Any, headers: dict[str, str]) -> Any:
        form = {"file": (io.BytesIO(GPX), "same.gpx"), "visibility": "Private"}
        return client.post(
            "/api/notes/mine/gpx", data=form, headers=headers, content_type="multipart/form-data"
        )

    results = run_together(app, [(owner, upload), (owner, upload)])
    assert statuses(results) == [200, 200]
    reports = sorted((body for _, body in results), key=lambda body: body["created"])
    assert (reports[0]["created"], reports[0]["duplicates"]) == (0, 2)  # as a re-import
    assert (reports[1]["created"], reports[1]["duplicates"]) == (2, 0)
    assert count(Note, Note.owner_user_id == owner.id) == 2
    assert count(Category, Category.owner_user_id == owner.id) == 1


# --- memberships -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("operation", "status"),
    [("accept", MembershipStatus.INVITED), ("approve", MembershipStatus.REQUESTING)],
)
def test_one_membership_answer_sent_twice_at_once_succeeds_once(
    app, monkeypatch, barrier, operation, status
):
    admin, user = make_user(), make_user()
    team = make_team(admin)
    membership = make_membership(team, user, status=status)
    caller = user if operation == "accept" else admin
    stop_after(monkeypatch, "app.services.teams.memberships.next_status", barrier)
    url = f"/api/teams/{team.id}/memberships/{membership.id}/{operation}"

    def answer(client: Any, headers: dict[str, str]) -> Any:
        return client.post(url, headers=headers)

    results = run_together(app, [(caller, answer), (caller, answer)])
    assert statuses(results) == [200, 409]  # 409: what a repeated answer gets
    rows = db.session.scalars(select(TeamMembership).where(TeamMembership.team_id == team.id)).all()
    assert sorted(row.status for row in rows) == [MembershipStatus.MEMBER] * 2


# --- account deletion --------------------------------------------------------------------


def test_parallel_account_deletions_succeed_once(app, monkeypatch, barrier):
    user = make_user()
    user_id = user.id
    stop_after(monkeypatch, "app.services.identity.accounts.forget_failures", barrier)

    def delete(client: Any, headers: dict[str, str]) -> Any:
        return client.delete("/api/account", headers=headers)

    results = run_together(app, [(user, delete), (user, delete)])
    assert statuses(results) == [200, 401]  # 401: what a repeated deletion gets
    gone = next(body for status, body in results if status == 401)
    assert gone["detail"] == "The bearer token's account no longer exists."
    assert db.session.get(User, user_id) is None


def test_a_repeated_account_deletion_is_401_like_the_loser_of_the_race(api):
    user = make_user()
    client = api.with_token(issue_access_token(user))
    assert client.delete("/api/account").status_code == 200
    response = client.delete("/api/account")
    assert response.status_code == 401
    assert response.get_json()["detail"] == "The bearer token's account no longer exists."


# --- budgets: the count and the check are one step -----------------------------------------


def test_twenty_parallel_misses_against_a_budget_of_ten_let_exactly_ten_through(app, monkeypatch):
    app.config["SECRET_GUESS_LIMIT"] = 10
    finder = make_user()
    # Every thread stops after its budget check; without one step for the check and the
    # count all twenty would have read "nothing counted yet" and gone on.
    stop_after(
        monkeypatch,
        "app.services.trackables.codes.lookup.check_budget",
        LockBarrier(20, timeout=POOL_BOUND_SECONDS),
    )

    def miss(number: int) -> Callable[[Any, dict[str, str]], Any]:
        body = {"code": f"LN-Z{number:05d}"}
        environ = {"REMOTE_ADDR": "192.0.2.10"}
        return lambda client, _headers: client.post(
            "/api/trackables/lookup", json=body, environ_base=environ
        )

    results = run_together(app, [(finder, miss(number)) for number in range(20)])
    assert statuses(results) == [200] * 10 + [429] * 10
    assert all(body["found"] is False for status, body in results if status == 200)


def test_parallel_misses_of_one_account_from_many_networks_let_exactly_its_budget_through(
    app, monkeypatch
):
    # A confirmed account's own budget follows it to any address: twenty networks (no
    # network lock shared) must still let only its ten misses through.
    app.config["SECRET_GUESS_ACCOUNT_LIMIT"] = 10
    finder = make_user(is_email_confirmed=True)
    stop_after(
        monkeypatch,
        "app.services.trackables.codes.lookup.check_budget",
        LockBarrier(20, timeout=POOL_BOUND_SECONDS),
    )

    def miss(number: int) -> Callable[[Any, dict[str, str]], Any]:
        body = {"code": f"LN-Z{number:05d}"}
        environ = {"REMOTE_ADDR": f"203.0.{number}.7"}
        return lambda client, headers: client.post(
            "/api/trackables/lookup", json=body, environ_base=environ, headers=headers
        )

    results = run_together(app, [(finder, miss(number)) for number in range(20)])
    assert statuses(results) == [200] * 10 + [429] * 10


def test_parallel_misses_of_many_accounts_on_one_network_let_its_allowance_through(
    app, monkeypatch
):
    app.config.update(SECRET_GUESS_ACCOUNT_LIMIT=10, SECRET_GUESS_ACCOUNT_NETWORK_LIMIT=6)
    finders = [make_user(is_email_confirmed=True) for _ in range(12)]
    stop_after(
        monkeypatch,
        "app.services.trackables.codes.lookup.check_budget",
        LockBarrier(12, timeout=BARRIER_SECONDS),
    )

    def miss(number: int) -> Callable[[Any, dict[str, str]], Any]:
        body = {"code": f"LN-Z{number:05d}"}
        environ = {"REMOTE_ADDR": f"192.0.2.{number + 1}"}
        return lambda client, headers: client.post(
            "/api/trackables/lookup", json=body, environ_base=environ, headers=headers
        )

    results = run_together(app, [(finder, miss(n)) for n, finder in enumerate(finders)])
    assert statuses(results) == [200] * 6 + [429] * 6


def test_parallel_creations_against_a_limit_of_two_let_exactly_two_through(app, monkeypatch):
    app.config["TRACKABLES_PER_USER_PER_HOUR"] = 2
    owner = make_user()
    stop_after(
        monkeypatch,
        "app.services.shared.budgets.spend_or_refuse",
        LockBarrier(4, timeout=BARRIER_SECONDS),
    )

    def create(client: Any, headers: dict[str, str]) -> Any:
        return client.post("/api/trackables", json={"name": "Bug"}, headers=headers)

    results = run_together(app, [(owner, create)] * 4)
    assert statuses(results) == [201, 201, 429, 429]


def test_account_deletion_while_its_user_writes_wins_or_waits_never_500(
    app, monkeypatch, database_url
):
    """DELETE /api/account while the same user creates notes, comments and uploads images
    (500s from foreign-key violations in 3 of 4 trials). Every
    write either finishes before the deletion (which then removes what it wrote) or waits
    and answers as for a deleted account (401; 404 for what went with it); the deletion
    answers 200, and nothing of the account remains.

    The writes start once the deletion has run its clean-ups, and the deletion waits
    there, before the user row goes, until they are done: without a lock they write into
    an account being deleted (foreign-key violations, deadlocks). With it they wait for
    the deletion, whose wait times out."""
    import dataclasses

    from app.hooks import area_hooks
    from app.models.image import ContentImage
    from app.models.note import NoteComment
    from tests.api.images.samples import sample

    image = sample("JPEG", 64, 48)

    def create_note(client: Any, headers: dict[str, str]) -> Any:
        return client.post("/api/notes/mine", json={"title": "Racing"}, headers=headers)

    def comment(note_id: Any) -> Callable[[Any, dict[str, str]], Any]:
        url = f"/api/public/notes/{note_id}/comments"
        return lambda client, headers: client.post(url, json={"body": "Hi"}, headers=headers)

    def upload(url: str) -> Callable[[Any, dict[str, str]], Any]:
        return lambda client, headers: client.post(
            url,
            data={"file": (io.BytesIO(image), "x.jpg")},
            headers=headers,
            content_type="multipart/form-data",
        )

    def delete(client: Any, headers: dict[str, str]) -> Any:
        return client.delete("/api/account", headers=headers)

    writers = 4
    finished: list[int] = []
    all_written, cleaned_up = threading.Event(), threading.Event()

    def writing(call: Callable[[Any, dict[str, str]], Any]) -> Any:
        def run(client: Any, headers: dict[str, str]) -> Any:
            cleaned_up.wait(timeout=BARRIER_SECONDS)
            try:
                return call(client, headers)
            finally:
                finished.append(1)
                if len(finished) % writers == 0:
                    all_written.set()

        return run

    def wait_for_the_writes(user: User, counts: Any) -> None:
        cleaned_up.set()
        wait_while_running(
            all_written.is_set,
            lambda: writers - len(finished) % writers,
            BARRIER_SECONDS,
            database_url,
        )

    with app.app_context():
        hooks = area_hooks()
    monkeypatch.setitem(
        app.extensions,
        "area_hooks",
        dataclasses.replace(hooks, account_cleanups=(*hooks.account_cleanups, wait_for_the_writes)),
    )
    for _ in range(2):
        all_written.clear()
        cleaned_up.clear()
        user = make_user()
        note = make_note(user, visibility=NoteVisibility.PUBLIC)
        user_id, note_id = user.id, note.id
        calls = [
            (user, delete),
            (user, writing(create_note)),
            (user, writing(comment(note_id))),
            (user, writing(upload(f"/api/images/notes/{note_id}"))),
            (user, writing(upload("/api/images/profiles"))),
        ]
        results = run_together(app, calls)
        assert results[0][0] == 200, results
        for status, body in results[1:]:
            assert status in (201, 401, 404), (status, body)
        assert db.session.get(User, user_id) is None
        assert count(Note, Note.owner_user_id == user_id) == 0
        assert count(NoteComment, NoteComment.author_user_id == user_id) == 0
        assert count(Category, Category.owner_user_id == user_id) == 0
        assert count(ContentImage, ContentImage.uploaded_by_user_id == user_id) == 0


# --- counted limits: images per parent and per day, trackables per hour ------------------
# Each use case checks early without a lock (calls 1), then again under the lock just
# before its insert (call 2): the barrier follows that second, deciding read.


def _jpeg() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (120, 90), (10, 120, 200)).save(buffer, "JPEG")
    return buffer.getvalue()


def _upload_to(url: str) -> Callable[[Any, dict[str, str]], Any]:
    data = _jpeg()

    def upload(client: Any, headers: dict[str, str]) -> Any:
        form = {"file": (io.BytesIO(data), "x.jpg")}
        return client.post(url, data=form, headers=headers, content_type="multipart/form-data")

    return upload


def test_two_uploads_cannot_both_take_the_last_image_slot_of_a_parent(app, monkeypatch, barrier):
    from app.models.image import ContentImage

    app.config["IMAGES_PER_PARENT_MAX"] = 1
    owner = make_user()
    note = make_note(owner)
    stop_after(monkeypatch, "app.services.images.images._check_parent_room", barrier, on_call=2)
    upload = _upload_to(f"/api/images/notes/{note.id}")
    results = run_together(app, [(owner, upload), (owner, upload)])
    assert statuses(results) == [201, 400]
    refused = next(body for status, body in results if status == 400)
    assert refused["code"] == "image_limit_reached"
    assert count(ContentImage, ContentImage.parent_id == note.id) == 1


def test_two_uploads_cannot_both_take_the_last_image_of_the_day(app, monkeypatch, barrier):
    from app.models.image import ContentImage

    app.config["IMAGES_PER_USER_PER_DAY"] = 1
    owner = make_user()
    notes = [make_note(owner), make_note(owner)]  # two parents: only the daily budget is shared
    stop_after(monkeypatch, "app.services.shared.budgets.check", barrier, on_call=2)
    calls = [(owner, _upload_to(f"/api/images/notes/{note.id}")) for note in notes]
    results = run_together(app, calls)
    assert statuses(results) == [201, 429]
    refused = next(body for status, body in results if status == 429)
    assert refused["code"] == "image_daily_limit_reached"
    assert count(ContentImage, ContentImage.uploaded_by_user_id == owner.id) == 1


def test_two_creations_cannot_both_take_the_last_trackables_of_the_hour(app, monkeypatch, barrier):
    from app.models.trackable import Trackable

    app.config["TRACKABLES_PER_USER_PER_HOUR"] = 10
    owner = make_user()
    stop_after(monkeypatch, "app.services.shared.budgets.check", barrier, on_call=2)

    def create_group(name: str) -> Callable[[Any, dict[str, str]], Any]:
        body = {"name": name, "trackableCount": 6}
        return lambda client, headers: client.post(
            "/api/trackables/groups", json=body, headers=headers
        )

    results = run_together(app, [(owner, create_group("Left")), (owner, create_group("Right"))])
    assert statuses(results) == [201, 429]
    refused = next(body for status, body in results if status == 429)
    assert refused["code"] == "trackable_hourly_limit_reached"
    assert count(Trackable, Trackable.created_by_user_id == owner.id) == 6


# --- team deletion -------------------------------------------------------------------------


def test_team_deletion_while_its_members_write_wins_or_waits_never_500(
    app, api, monkeypatch, database_url
):
    """DELETE /api/teams/{id} while others write into the team: a team note, a team
    category, a trackable for the team, an invite link, a team page image, a change of a
    team webhook; a join by invite link, a member leaving, an invitee accepting. Each
    either finishes before the deletion (which then hands back or removes what it wrote)
    or waits and answers as for a team that is gone (404); the deletion answers 204, and
    nothing names the team.

    The writes start once the deletion has handed the team's notes back to their authors,
    and the deletion waits there until they are done: without a lock they write into a
    team being deleted (rows naming a team that no longer exists, foreign-key errors)."""
    from app.models.image import ContentImage
    from app.models.team import Team, TeamInviteLink
    from app.models.trackable import Trackable
    from app.services.teams import teams as team_service

    writers = 9
    finished: list[int] = []
    all_written, handed_back = threading.Event(), threading.Event()

    def writing(call: Callable[[Any, dict[str, str]], Any]) -> Callable[[Any, dict[str, str]], Any]:
        def run(client: Any, headers: dict[str, str]) -> Any:
            handed_back.wait(timeout=BARRIER_SECONDS)
            try:
                return call(client, headers)
            finally:
                finished.append(1)
                if len(finished) % writers == 0:
                    all_written.set()

        return run

    def post(url: str, body: dict[str, Any] | None = None) -> Callable[[Any, dict[str, str]], Any]:
        if body is None:
            return lambda client, headers: client.post(url, headers=headers)
        return lambda client, headers: client.post(url, json=body, headers=headers)

    def patch(url: str, body: dict[str, Any]) -> Callable[[Any, dict[str, str]], Any]:
        return lambda client, headers: client.patch(url, json=body, headers=headers)

    def delete(url: str) -> Callable[[Any, dict[str, str]], Any]:
        return lambda client, headers: client.delete(url, headers=headers)

    handing_back = team_service.return_notes_to_authors

    def hand_back_then_wait(*args: Any, **kwargs: Any) -> None:
        handing_back(*args, **kwargs)
        handed_back.set()
        wait_while_running(
            all_written.is_set,
            lambda: writers - len(finished) % writers,
            BARRIER_SECONDS,
            database_url,
        )

    monkeypatch.setattr(team_service, "return_notes_to_authors", hand_back_then_wait)
    for _ in range(2):
        all_written.clear()
        handed_back.clear()
        admin, member, leaver, invitee, joiner = (make_user() for _ in range(5))
        team = make_team(admin, members=(member, leaver))
        invitation = make_membership(team, invitee, status=MembershipStatus.INVITED)
        leaving = db.session.scalar(
            select(TeamMembership.id).where(TeamMembership.user_id == leaver.id)
        )
        base, team_id = f"/api/teams/{team.id}", team.id
        link = api.as_user(admin).post(f"{base}/invite-links", json={"isSingleUse": False})
        assert link.status_code == 201, link.get_json()
        join = f"/api/teams/invite-links/{team.slug}/{link.get_json()['code']}/join"
        hook = api.as_user(admin).post(
            "/api/webhooks", json={"url": "https://hooks.example.org/x", "teamId": str(team_id)}
        )
        assert hook.status_code == 201, hook.get_json()
        hook_url = f"/api/webhooks/{hook.get_json()['webhookId']}"
        calls = [
            (admin, delete(base)),
            (member, writing(post(f"{base}/notes", {"title": "Racing"}))),
            (member, writing(post(f"{base}/categories", {"name": "Racing"}))),
            (member, writing(post("/api/trackables", {"name": "Racing", "teamId": str(team_id)}))),
            (admin, writing(post(f"{base}/invite-links", {"isSingleUse": True}))),
            (admin, writing(_upload_to(f"/api/images/teams/{team_id}"))),
            (admin, writing(patch(hook_url, {"isEnabled": False}))),
            (joiner, writing(post(join))),
            (leaver, writing(delete(f"{base}/memberships/{leaving}"))),
            (invitee, writing(post(f"{base}/memberships/{invitation.id}/accept"))),
        ]
        results = run_together(app, calls)
        assert results[0][0] == 204, results
        for status, body in results[1:]:
            assert status in (200, 201, 204, 404), (status, body)
        assert db.session.get(Team, team_id) is None
        assert count(Note, Note.team_id == team_id) == 0
        assert count(Category, Category.team_id == team_id) == 0
        assert count(Trackable, Trackable.team_id == team_id) == 0
        assert count(TeamInviteLink, TeamInviteLink.team_id == team_id) == 0
        assert count(TeamMembership, TeamMembership.team_id == team_id) == 0
        assert count(ContentImage, ContentImage.parent_id == team_id) == 0


# --- category deletion -------------------------------------------------------------------


def test_nothing_written_into_a_category_being_deleted_is_left_in_its_tombstone(
    app, monkeypatch, database_url
):
    """A note is created in (or moved to) a category, or a category created under it,
    while the category is deleted. The write reads the category live, then the deletion
    moves the category's notes and children up to its parent and tombstones it, then the
    write lands. Either the deletion waits for the write and moves what it wrote too, or
    the write waits for the deletion and answers 400 (no such category): nothing live may
    stay in a deleted category."""
    import importlib

    tree = importlib.import_module("app.services.categories.tree")
    owner = make_user()
    root = make_category(owner, name="Trips")
    read, deleted = threading.Event(), threading.Event()
    referenced = tree._referenced

    def read_then_wait(*args: Any, **kwargs: Any) -> Category:
        try:
            return referenced(*args, **kwargs)
        finally:
            read.set()
            wait_while_running(deleted.is_set, lambda: 1, BARRIER_SECONDS, database_url)

    monkeypatch.setattr(tree, "_referenced", read_then_wait)

    def race(writing: str) -> None:
        read.clear()
        deleted.clear()
        child = make_category(owner, name=f"Day {writing}", parent=root)
        moved_id = make_note(owner, category=root).id
        child_id, root_id = child.id, root.id

        def write(client: Any, headers: dict[str, str]) -> Any:
            body = {"title": "Racing", "categoryId": str(child_id)}
            if writing == "create":
                return client.post("/api/notes/mine", json=body, headers=headers)
            if writing == "child":
                child = {"name": "Racing", "parentCategoryId": str(child_id)}
                return client.post("/api/categories/mine", json=child, headers=headers)
            return client.post(f"/api/notes/mine/{moved_id}/move", json=body, headers=headers)

        def delete(client: Any, headers: dict[str, str]) -> Any:
            read.wait(timeout=BARRIER_SECONDS)
            try:
                return client.delete(f"/api/categories/mine/{child_id}", headers=headers)
            finally:
                deleted.set()

        results = run_together(app, [(owner, write), (owner, delete)])
        assert results[1][0] == 204, results
        assert results[0][0] in (200, 201, 400), results
        stranded = count(Note, Note.category_id == child_id, Note.is_deleted.is_(False))
        stranded += count(
            Category, Category.parent_category_id == child_id, Category.is_deleted.is_(False)
        )
        assert stranded == 0, (writing, results)
        assert db.session.get(Category, root_id).is_deleted is False

    for writing in ("create", "move", "child"):
        race(writing)


def test_two_admins_deleting_one_team_at_once_succeed_once(app, monkeypatch, barrier):
    from app.models.team import Team

    first, second = make_user(), make_user()
    team = make_team(first)
    make_membership(team, second, is_admin=True)
    note = make_note(second, category=make_category(team_id=team.id, name="Shared"))
    note.team_id = team.id
    db.session.commit()
    team_id, note_id = team.id, note.id
    stop_after(monkeypatch, "app.services.teams.teams.return_notes_to_authors", barrier)

    def delete(client: Any, headers: dict[str, str]) -> Any:
        return client.delete(f"/api/teams/{team_id}", headers=headers)

    results = run_together(app, [(first, delete), (second, delete)])
    assert statuses(results) == [204, 404]  # 404: what a repeated deletion gets
    assert db.session.get(Team, team_id) is None
    returned = db.session.get(Note, note_id)
    assert (returned.team_id, returned.is_deleted) == (None, False)
    assert count(Category, Category.team_id == team_id) == 0
