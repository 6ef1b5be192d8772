"""Sync pushes at the same moment (threads released together, each on its own connection;
tests/api/test_races.py explains the harness): the database decides, nothing is lost."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from app.extensions import db
from app.models.category import Category
from app.models.note import Note
from tests.api.sync.helpers import DEVICE, PUSH, category_record, note_record, wire_time
from tests.factories import (
    count_rows,
    make_category,
    make_membership,
    make_note,
    make_team,
    make_user,
)
from tests.racing import run_together, stop_after


def _push(record: dict):
    def call(client, headers):
        body = {"deviceId": DEVICE, "notes": [record], "categories": []}
        return client.post(PUSH, json=body, headers=headers)

    return call


def test_two_devices_creating_the_same_note_at_once_apply_it_once(app):
    alice = make_user("alice")
    first, second = note_record(title="One"), None
    second = {**first, "title": "Two", "clientMutationId": "other-device"}
    results = run_together(app, [(alice, _push(first)), (alice, _push(second))])
    assert [status for status, _ in results] == [200, 200]
    applied = [body["appliedNoteIds"] for _, body in results]
    conflicts = [body["conflicts"] for _, body in results]
    assert sorted(map(len, applied)) == [0, 1]
    (conflict,) = [c for found in conflicts for c in found]
    assert conflict["reason"] == "changed_on_server"
    assert count_rows(Note) == 1


def test_pushes_committing_together_get_distinct_stamps(app, api):
    alice = make_user("alice")
    records = [note_record(title=f"Note {n}") for n in range(4)]
    results = run_together(app, [(alice, _push(record)) for record in records])
    assert all(body["appliedNoteIds"] for _, body in results)
    stamps = list(db.session.scalars(select(Note.sync_utc)))
    assert None not in stamps
    assert len(set(stamps)) == 4  # one commit, one stamp: commit order is stamp order


# --- the base check is part of the write ----------------------
#
# Each thread stops just after its base check; without a lock both pass it, both are let
# go and both write: the later write overwrites the other. With the check under a lock the
# second thread waits for the first's commit, then sees the new `updatedUtc`.


def _two_admins(ada, bob):
    team = make_team(ada)
    make_membership(team, bob, is_admin=True)
    return team


def _moved(url: str, body: dict):
    return lambda client, headers: client.post(url, json=body, headers=headers)


def _results_of_pushes(results: list) -> tuple[list, list]:
    assert [status for status, _ in results] == [200, 200], results
    applied = [body["appliedNoteIds"] + body["appliedCategoryIds"] for _, body in results]
    conflicts = [c for _, body in results for c in body["conflicts"]]
    return applied, conflicts


def test_two_admins_pushing_one_team_note_from_one_base_apply_one(app, monkeypatch, barrier):
    ada, bob = make_user("ada"), make_user("bob")
    team = _two_admins(ada, bob)
    note = make_note(ada, team_id=team.id, title="Base")
    base, team_id = wire_time(note.updated_utc), str(team.id)
    stop_after(monkeypatch, "app.services.sync.push._check_base", barrier)
    records = [
        note_record(note.id, teamId=team_id, title=title, updatedUtc=base)
        for title in ("Ada's", "Bob's")
    ]
    results = run_together(app, [(ada, _push(records[0])), (bob, _push(records[1]))])
    applied, conflicts = _results_of_pushes(results)
    assert sorted(map(len, applied)) == [0, 1]
    (conflict,) = conflicts
    assert conflict["reason"] == "changed_on_server"
    winner = "Ada's" if applied[0] else "Bob's"
    assert conflict["serverRecord"]["title"] == winner
    assert db.session.get(Note, note.id).title == winner


def test_a_website_edit_racing_a_push_from_the_same_base_is_never_lost(app, monkeypatch, barrier):
    alice = make_user("alice")
    note = make_note(alice, title="Base")
    base = wire_time(note.updated_utc)
    stop_after(monkeypatch, "app.services.sync.push._check_base", barrier)
    stop_after(monkeypatch, "app.services.notes.notes.get_managed", barrier)
    phone = note_record(note.id, title="Phone", updatedUtc=base)
    web = _moved(f"/api/notes/mine/{note.id}/move", {"title": "Web"})
    results = run_together(app, [(alice, _push(phone)), (alice, web)])
    (push_status, push_body), (web_status, _) = results
    assert (push_status, web_status) == (200, 200)
    # Either the push came first (applied, then the edit on top of it) or the edit came
    # first and the push, edited from an older copy, is a conflict: the edit stays.
    assert db.session.get(Note, note.id).title == "Web"
    if not push_body["appliedNoteIds"]:
        assert [c["reason"] for c in push_body["conflicts"]] == ["changed_on_server"]


def test_two_admins_pushing_one_team_category_from_one_base_apply_one(app, monkeypatch, barrier):
    ada, bob = make_user("ada"), make_user("bob")
    team = _two_admins(ada, bob)
    category = make_category(team_id=team.id, name="Base")
    base, team_id = wire_time(category.updated_utc), str(team.id)
    stop_after(monkeypatch, "app.services.sync.push._check_base", barrier)
    records = [
        category_record(category.id, teamId=team_id, name=name, updatedUtc=base)
        for name in ("Ada's", "Bob's")
    ]
    calls = [
        (user, _push_categories(record)) for user, record in zip((ada, bob), records, strict=True)
    ]
    applied, conflicts = _results_of_pushes(run_together(app, calls))
    assert sorted(map(len, applied)) == [0, 1]
    (conflict,) = conflicts
    assert conflict["reason"] == "changed_on_server"
    winner = "Ada's" if applied[0] else "Bob's"
    assert conflict["serverRecord"]["name"] == winner
    assert db.session.get(Category, category.id).name == winner


def test_a_website_category_edit_racing_a_push_from_the_same_base_is_never_lost(
    app, monkeypatch, barrier
):
    alice = make_user("alice")
    category = make_category(alice, name="Base")
    base = wire_time(category.updated_utc)
    stop_after(monkeypatch, "app.services.sync.push._check_base", barrier)
    stop_after(monkeypatch, "app.services.categories.tree.get_category", barrier)
    phone = category_record(category.id, name="Phone", updatedUtc=base)
    web = _moved(f"/api/categories/mine/{category.id}/move", {"name": "Web"})
    results = run_together(app, [(alice, _push_categories(phone)), (alice, web)])
    (push_status, push_body), (web_status, _) = results
    assert (push_status, web_status) == (200, 200)
    assert db.session.get(Category, category.id).name == "Web"
    if not push_body["appliedCategoryIds"]:
        assert [c["reason"] for c in push_body["conflicts"]] == ["changed_on_server"]


def _push_categories(record: dict):
    def call(client, headers):
        body = {"deviceId": DEVICE, "notes": [], "categories": [record]}
        return client.post(PUSH, json=body, headers=headers)

    return call


# --- a batch the database refuses after all -----------------------------------
#
# A push decides its notes from one read, then writes them together. Two users pushing the
# same new note id (a client bug, or a hostile one) both read "no such note"; on
# PostgreSQL the second INSERT waits for the first and then fails on the key: that batch is
# rolled back and decided again record by record, so only the twin is refused and the rest
# of that push lands. (SQLite runs one writer at a time: the second push reads the first's
# note and is decided as a set.)


def test_a_batch_refused_by_a_concurrent_insert_is_decided_again_record_by_record(
    app, monkeypatch, barrier
):
    import importlib

    alice, bob = make_user("alice"), make_user("bob")
    push_module = importlib.import_module("app.services.sync.push")
    one_by_one = push_module._notes_one_by_one
    fallbacks: list[int] = []

    def counted(*args, **kwargs):
        fallbacks.append(1)
        return one_by_one(*args, **kwargs)

    monkeypatch.setattr(push_module, "_notes_one_by_one", counted)
    stop_after(monkeypatch, "app.services.sync.push._locked_notes", barrier)
    twin = note_record(title="Twin")
    users = {alice.id: "alice", bob.id: "bob"}
    own = {name: note_record(title=f"{name}'s") for name in users.values()}

    def push_as(name):
        def call(client, headers):
            notes = [own[name], {**twin, "clientMutationId": name}]
            body = {"deviceId": DEVICE, "notes": notes, "categories": []}
            return client.post(PUSH, json=body, headers=headers)

        return call

    results = run_together(app, [(alice, push_as("alice")), (bob, push_as("bob"))])
    assert [status for status, _ in results] == [200, 200], results
    winner = users[db.session.get(Note, uuid.UUID(twin["noteId"])).owner_user_id]
    for name, (_, body) in zip(("alice", "bob"), results, strict=True):
        if name == winner:
            assert (body["appliedNoteIds"], body["conflicts"]) == (
                [own[name]["noteId"], twin["noteId"]],
                [],
            )
        else:
            assert body["appliedNoteIds"] == [own[name]["noteId"]]
            assert [(c["id"], c["reason"]) for c in body["conflicts"]] == [
                (twin["noteId"], "forbidden")
            ]
            assert body["conflicts"][0].get("serverRecord") is None  # a private note
    assert count_rows(Note) == 3
    assert len(fallbacks) == (1 if db.engine.dialect.name == "postgresql" else 0)
