"""Sync push as a set: a push's notes are decided first and written together,
one statement per kind of change, with the answers and writes the record-by-record path
gives. That path is the app's own (a push naming a note twice, or a batch the database
refused, goes through it), so it serves here as the oracle of a randomised comparison."""

from __future__ import annotations

import importlib
import json
import random
import uuid
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

import psycopg2.extras
import pytest
from sqlalchemy import event, func, select

from app.api.sync.routes import pushed_records
from app.api.sync.schemas import SyncNoteInSchema
from app.auth import build_viewer
from app.extensions import db
from app.models.category import Category
from app.models.enums import NoteVisibility
from app.models.event import Event
from app.models.job import Job
from app.models.note import Note
from app.models.sync import SyncNoteMutation
from app.models.user import User
from app.services import sync
from tests.api.sync.helpers import note_record, pulled, pushed, wire_time
from tests.factories import (
    attach_trackable,
    count_rows,
    make_category,
    make_note,
    make_team,
    make_user,
)

# The module (the package's `push` is its function of that name).
push_module = importlib.import_module("app.services.sync.push")
PUBLIC, GATED = NoteVisibility.PUBLIC, NoteVisibility.ONCE_TRACKABLE_ACCESSED
OLD_BASE = "2020-01-01T00:00:00.000Z"
VISIBILITIES = [visibility.value for visibility in NoteVisibility]


@pytest.fixture
def alice(app):
    return make_user("alice")


def _note(note_id: Any) -> Note:
    db.session.expire_all()
    return db.session.get(Note, uuid.UUID(str(note_id)))


# --- one mixed push, by hand -------------------------------------------------------------


def test_a_mixed_push_answers_each_record_as_before(api, alice):
    """New notes, changes, deletes, each conflict reason and invalid records in one push:
    the others are applied, each refused one comes back with its reason, in push order."""
    bob = make_user("bob")
    mine = make_note(alice, title="Mine")
    gone = make_note(alice, title="Gone")
    stale = make_note(alice, title="Server")
    tombstone = make_note(alice, is_deleted=True)
    bobs_private = make_note(bob, title="Bob's secret")
    bobs_public = make_note(bob, title="Bob's", visibility=PUBLIC)
    retried = make_note(alice, title="Before")
    change = note_record(retried.id, title="After", updatedUtc=wire_time(retried.updated_utc))
    pushed(api, alice, notes=[change])
    base_after = wire_time(_note(retried.id).updated_utc)
    reused = {**change, "title": "Other", "updatedUtc": base_after}
    new = note_record(title="New", latitude=52.5, longitude=13.4, visibility="Public")
    blank = note_record(title=" ")
    nowhere = note_record(categoryId=str(uuid.uuid4()))
    offline = note_record(isDeleted=True)
    records = [
        new,
        blank,
        note_record(mine.id, title="Mine, edited", updatedUtc=wire_time(mine.updated_utc)),
        nowhere,
        note_record(gone.id, isDeleted=True, updatedUtc=wire_time(gone.updated_utc)),
        note_record(stale.id, title="Device", updatedUtc=OLD_BASE),
        note_record(tombstone.id, updatedUtc=wire_time(tombstone.updated_utc)),
        note_record(bobs_private.id, updatedUtc=wire_time(bobs_private.updated_utc)),
        note_record(bobs_public.id, updatedUtc=wire_time(bobs_public.updated_utc)),
        offline,
        reused,
    ]
    result = pushed(api, alice, notes=records)
    assert result["appliedNoteIds"] == [
        new["noteId"],
        str(mine.id),
        str(gone.id),
        offline["noteId"],
    ]
    conflicts = [
        (c["id"], c["reason"], c.get("serverRecord") is not None) for c in result["conflicts"]
    ]
    assert conflicts == [
        (blank["noteId"], "validation_failed", False),
        (nowhere["noteId"], "validation_failed", False),
        (str(stale.id), "changed_on_server", True),
        (str(tombstone.id), "deleted_on_server", False),
        (str(bobs_private.id), "forbidden", False),
        (str(bobs_public.id), "forbidden", True),
        (str(retried.id), "client_mutation_id_reused", True),
    ]
    assert list(result["conflicts"][0]["errors"]) == ["title"]
    assert list(result["conflicts"][1]["errors"]) == ["categoryId"]
    assert result["conflicts"][2]["serverRecord"]["title"] == "Server"
    assert (_note(new["noteId"]).title, _note(new["noteId"]).is_publicly_discoverable) == (
        "New",
        True,
    )
    assert _note(mine.id).title == "Mine, edited"
    assert _note(gone.id).is_deleted
    assert (_note(stale.id).title, _note(retried.id).title) == ("Server", "After")
    assert _note(blank["noteId"]) is None
    assert _note(nowhere["noteId"]) is None
    assert _note(offline["noteId"]) is None
    tags = set(
        db.session.execute(select(SyncNoteMutation.note_id, SyncNoteMutation.client_mutation_id))
    )
    assert (uuid.UUID(new["noteId"]), new["clientMutationId"]) in tags
    assert (gone.id, records[4]["clientMutationId"]) in tags


def test_a_retried_mixed_push_applies_nothing_twice(api, alice):
    mine = make_note(alice, title="Mine")
    records = [
        note_record(title="New"),
        note_record(mine.id, title="Edited", updatedUtc=wire_time(mine.updated_utc)),
    ]
    first = pushed(api, alice, notes=records)
    updated = _note(mine.id).updated_utc
    again = pushed(api, alice, notes=records)
    assert again == first
    assert count_rows(Note) == 2
    assert _note(mine.id).updated_utc == updated


def test_notes_pushed_together_are_stamped_and_pulled(api, alice):
    before = pulled(api, alice)["serverSyncUtc"]
    mine = make_note(alice, title="Mine")
    since = pulled(api, alice)["serverSyncUtc"]
    assert since >= before
    records = [note_record(title=f"Trail {n}") for n in range(5)]
    records.append(note_record(mine.id, title="Edited", updatedUtc=wire_time(mine.updated_utc)))
    pushed(api, alice, notes=records)
    assert count_rows(Note, Note.sync_utc.is_(None)) == 0
    changed = {note["noteId"] for note in pulled(api, alice, since)["userNotes"]}
    assert changed == {record["noteId"] for record in records}


def test_team_and_published_events_are_recorded_for_the_batch(api, alice):
    bob = make_user("bob")
    team = make_team(alice, members=(bob,))
    teams_note = make_note(bob, team_id=team.id, title="Hut")
    hidden = make_note(alice, latitude=52.5, longitude=13.4)
    records = [
        note_record(teamId=str(team.id), title="Team news"),
        note_record(title="Public", latitude=52.5, longitude=13.4, visibility="Public"),
        note_record(title="Public, nowhere", visibility="Public"),
        note_record(
            teams_note.id, teamId=str(team.id), updatedUtc=wire_time(teams_note.updated_utc)
        ),
        note_record(
            hidden.id,
            visibility="Public",
            latitude=52.5,
            longitude=13.4,
            updatedUtc=wire_time(hidden.updated_utc),
        ),
    ]
    pushed(api, alice, notes=records)
    found = Counter(
        (kind, str(note_id))
        for kind, note_id in db.session.execute(select(Event.event_type, Event.note_id))
    )
    assert found == Counter(
        {
            ("team.note.created", records[0]["noteId"]): 1,
            ("note.published", records[1]["noteId"]): 1,
            ("team.note.edited", str(teams_note.id)): 1,
            ("note.published", str(hidden.id)): 1,
        }
    )
    assert count_rows(Job, Job.kind == "events.fan_out") == 4
    # Made public again later: not news twice; edited again at once: coalesced.
    again = [
        note_record(
            teams_note.id,
            teamId=str(team.id),
            title="Hut, again",
            updatedUtc=wire_time(_note(teams_note.id).updated_utc),
        ),
    ]
    pushed(api, alice, notes=again)
    assert count_rows(Event) == 4


def test_a_gated_note_edited_in_a_push_keeps_the_discovery_rule(api, alice):
    """Gated notes are discoverable until a trackable is attached (contract: Public note
    discovery): the batch reads each note's trackables as the one-note move does."""
    attached = make_note(alice, visibility=GATED, latitude=1.0, longitude=2.0)
    attach_trackable(attached)
    bare = make_note(alice, visibility=GATED, latitude=1.0, longitude=2.0)
    records = [
        note_record(
            note.id,
            visibility=GATED.value,
            latitude=1.0,
            longitude=2.0,
            updatedUtc=wire_time(note.updated_utc),
        )
        for note in (attached, bare)
    ]
    assert len(pushed(api, alice, notes=records)["appliedNoteIds"]) == 2
    assert not _note(attached.id).is_publicly_discoverable
    assert _note(bare.id).is_publicly_discoverable


def test_a_push_naming_a_note_twice_goes_record_by_record(api, alice):
    """The second record depends on the first one's write: as before, the create is
    applied and its twin refused (the id exists by then)."""
    record = note_record(title="Once")
    twin = {**record, "title": "Twice", "clientMutationId": "another"}
    result = pushed(api, alice, notes=[record, twin])
    assert result["appliedNoteIds"] == [record["noteId"]]
    assert [(c["id"], c["reason"]) for c in result["conflicts"]] == [
        (record["noteId"], "changed_on_server")
    ]
    assert _note(record["noteId"]).title == "Once"


def _statements_of_a_push(api, user, records) -> list[str]:
    """The statements SQLAlchemy sent, and those sent below it (insert_by_driver's, on
    PostgreSQL: one per execute_values page)."""
    seen: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany):
        seen.append(statement)

    execute_values = psycopg2.extras.execute_values

    def by_driver(cursor, sql, argslist, template=None, page_size=100, fetch=False):
        seen.extend([sql] * -(-len(argslist) // page_size))
        return execute_values(cursor, sql, argslist, template, page_size, fetch)

    event.listen(db.engine, "before_cursor_execute", count)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(psycopg2.extras, "execute_values", by_driver)
            pushed(api, user, notes=records)
    finally:
        event.remove(db.engine, "before_cursor_execute", count)
    return seen


def test_a_push_runs_the_same_statements_whatever_the_number_of_notes(api, alice):
    category = make_category(alice, name="Trail")

    def push_of(count: int) -> list[str]:
        notes = [make_note(alice, category=category) for _ in range(count)]
        records = [
            note_record(categoryId=str(category.id), latitude=52.5, longitude=13.4)
            for _ in range(count)
        ]
        records += [
            note_record(note.id, title="Edited", updatedUtc=wire_time(note.updated_utc))
            for note in notes
        ]
        return _statements_of_a_push(api, alice, records)

    push_of(1)  # the first request of a session reads what the others find loaded
    small, large = push_of(2), push_of(40)
    assert len(large) == len(small)
    assert len(small) <= 25
    assert sum(s.startswith("INSERT INTO notes") for s in large) == 1
    assert not [s for s in large if s.lstrip().upper().startswith("SAVEPOINT")][1:]


# --- the same answers and writes as record by record (randomised, fixed seed) -------------

SCENARIOS = 24


@dataclass
class World:
    """One scenario's data: alice pushes; bob owns notes and teams she may or may not
    change."""

    alice: uuid.UUID
    teams: dict[str, uuid.UUID]
    categories: dict[str, uuid.UUID]
    notes: dict[str, Note]
    earlier: list[dict[str, Any]] = field(default_factory=list)  # records pushed before


def _world(api: Any, rng: random.Random) -> World:
    alice, bob = make_user(), make_user()
    teams = {
        "admin": make_team(alice, members=(bob,)).id,  # alice administers it
        "member": make_team(bob, members=(alice,)).id,  # alice is a member
        "stranger": make_team(bob).id,  # alice is not in it
    }
    categories = {
        "en": make_category(alice, content_language="en").id,
        "de": make_category(alice, content_language="de").id,
        "admin": make_category(team_id=teams["admin"]).id,
        "member": make_category(team_id=teams["member"]).id,
        "bob": make_category(bob).id,
    }
    en = db.session.get(Category, categories["en"])

    def team_note(owner: User, team: str, **fields: Any) -> Note:
        category = db.session.get(Category, categories[team])
        return make_note(owner, category=category, team_id=teams[team], **fields)

    notes = {
        "private": make_note(alice, category=en),
        "public": make_note(alice, category=en, visibility=PUBLIC, latitude=1.0, longitude=2.0),
        "gated": make_note(alice, category=en, visibility=GATED, latitude=1.0, longitude=2.0),
        "hidden": make_note(alice, category=en, latitude=1.0, longitude=2.0),
        "deleted": make_note(alice, category=en, is_deleted=True),
        "bobs": make_note(bob, category=db.session.get(Category, categories["bob"])),
        "bobs public": make_note(
            bob, category=db.session.get(Category, categories["bob"]), visibility=PUBLIC
        ),
        "admin team": team_note(bob, "admin"),
        "member team": team_note(bob, "member", visibility=PUBLIC),
        "my member team": team_note(alice, "member"),
    }
    if rng.random() < 0.5:
        attach_trackable(notes["gated"])
    world = World(alice.id, teams, categories, notes)
    if rng.random() < 0.7:  # an earlier push: tags to retry and reuse, recent edit events
        earlier = []
        for name in rng.sample(["private", "admin team", "my member team", "hidden"], 2):
            note = notes[name]
            team = str(note.team_id) if note.team_id else None
            earlier.append(
                note_record(
                    note.id,
                    teamId=team,
                    title=f"Earlier {name}",
                    updatedUtc=wire_time(note.updated_utc),
                    categoryId=str(note.category_id),
                )
            )
        pushed(api, alice, notes=earlier)
        world.earlier = earlier
    db.session.expire_all()
    return world


def _new_record(world: World, rng: random.Random) -> dict[str, Any]:
    kind = rng.choice(["valid"] * 8 + ["schema", "link", "offline", "half position"])
    fields: dict[str, Any] = {"title": f"New {rng.randrange(1000)}"}
    where = rng.choice(["none", "en", "en", "de", "admin", "member", "stranger", "bob", "missing"])
    if where in ("admin", "member", "stranger"):
        fields["teamId"] = str(world.teams[where])
    if where in world.categories and rng.random() < 0.8:
        fields["categoryId"] = str(world.categories[where])
    elif where == "missing":
        fields["categoryId"] = str(uuid.uuid4())
    language = rng.choice(["de", "DE"] if where == "de" else ["en", "en", "de", None])
    fields["contentLanguage"] = language
    fields["visibility"] = rng.choice(VISIBILITIES)
    if rng.random() < 0.6:
        fields["latitude"], fields["longitude"] = rng.uniform(-80, 80), rng.uniform(-170, 170)
    if kind == "schema":
        fields[rng.choice(["title", "latitude"])] = rng.choice([" ", 91])
    elif kind == "link":
        fields.update(externalLinkUrl="ftp://example.org/x", applyExternalLinkChanges=True)
    elif kind == "offline":
        fields["isDeleted"] = True
    elif kind == "half position":
        fields["latitude"], fields["longitude"] = 10.0, None
    record = note_record(**fields)
    if language is None:
        del record["contentLanguage"]
    return record


def _change_record(world: World, name: str, rng: random.Random) -> dict[str, Any]:
    note = world.notes[name]
    base = rng.choice([wire_time(note.updated_utc)] * 4 + [OLD_BASE, None])
    team = str(note.team_id) if note.team_id else None
    if rng.random() < 0.1:  # moved to another scope: refused
        team = str(world.teams["admin"]) if team is None else None
    fields: dict[str, Any] = {"updatedUtc": base, "teamId": team}
    if rng.random() < 0.2:
        fields["isDeleted"] = True
    else:
        fields["title"] = f"Changed {rng.randrange(1000)}"
        fields["visibility"] = rng.choice(VISIBILITIES)
        choice = rng.random()
        if choice < 0.08:
            fields["categoryId"] = str(world.categories["de"])  # other language: refused
        elif choice < 0.16:
            fields["contentLanguage"] = "de"  # without a category in it: refused
        elif choice < 0.4:
            fields["latitude"], fields["longitude"] = 48.1, 11.6
        else:
            fields["categoryId"] = str(note.category_id)
            fields["contentLanguage"] = note.content_language
        if rng.random() < 0.08:
            fields.update(externalLinkUrl="javascript:alert(1)", applyExternalLinkChanges=True)
    return note_record(note.id, **fields)


def _records(world: World, rng: random.Random) -> list[dict[str, Any]]:
    records = [_new_record(world, rng) for _ in range(rng.randrange(2, 8))]
    names = list(world.notes)
    rng.shuffle(names)
    earlier = {record["noteId"]: record for record in world.earlier}
    for name in names[: rng.randrange(3, len(names))]:
        note_id = str(world.notes[name].id)
        if note_id in earlier and rng.random() < 0.6:
            retry = earlier[note_id]
            if rng.random() < 0.5:  # the same tag with another record
                retry = {
                    **retry,
                    "title": "Reused",
                    "updatedUtc": wire_time(world.notes[name].updated_utc),
                }
            records.append(retry)
        else:
            records.append(_change_record(world, name, rng))
    rng.shuffle(records)
    return records


def _state(world: World, result: sync.PushResult, records: list[dict], before: dict) -> dict:
    """The push's answer and everything it wrote, without ids and times made on the way
    (new categories' ids, events' ids, the write times: only whether each moved)."""
    db.session.flush()
    categories = {
        row.id: (row.name, row.content_language, row.owner_user_id, row.team_id, row.is_deleted)
        for row in db.session.scalars(select(Category).execution_options(populate_existing=True))
    }
    ids = {note.id for note in world.notes.values()} | {uuid.UUID(r["noteId"]) for r in records}
    notes = {}
    query = select(Note).where(Note.id.in_(ids)).execution_options(populate_existing=True)
    for note in db.session.scalars(query):
        values = {
            column: getattr(note, column)
            for column in Note.__table__.columns.keys()  # noqa: SIM118 - names, not columns
            if column not in ("created_utc", "updated_utc", "last_activity_utc", "sync_utc")
        }
        values["category_id"] = categories[note.category_id]
        then = before.get(note.id)
        values["times moved"] = (
            None
            if then is None
            else (note.updated_utc != then[0], note.last_activity_utc != then[1])
        )
        notes[note.id] = values
    events = sorted(
        (
            row.event_type,
            str(row.note_id),
            str(row.team_id),
            str(row.actor_user_id),
            json.dumps(row.fields, sort_keys=True),
        )
        for row in db.session.scalars(select(Event).where(Event.note_id.in_(ids)))
    )
    answer = asdict(result)
    answer["mutations"] = sorted(answer["mutations"])
    return {
        "answer": answer,
        "notes": notes,
        "categories": sorted(categories.values(), key=repr),
        "events": events,
        "jobs": db.session.scalar(select(func.count()).select_from(Job)),
        "tags": sorted(
            db.session.execute(
                select(
                    SyncNoteMutation.note_id,
                    SyncNoteMutation.client_mutation_id,
                    SyncNoteMutation.payload_hash,
                ).where(SyncNoteMutation.note_id.in_(ids))
            ).all()
        ),
    }


def _push_and_undo(world: World, records: list[dict]) -> dict:
    before = {
        note.id: (note.updated_utc, note.last_activity_utc)
        for note in db.session.scalars(select(Note).execution_options(populate_existing=True))
    }
    viewer = build_viewer(db.session.get(User, world.alice))
    result = sync.push(
        viewer,
        notes_in=pushed_records(SyncNoteInSchema, "note_id", records),
        categories_in=[],
        default_language="en",
        link_budget_seconds=1.0,
    )
    state = _state(world, result, records, before)
    db.session.rollback()
    return state


def test_a_push_as_a_set_answers_and_writes_as_record_by_record(app, api, monkeypatch):
    rng = random.Random(30)
    paths: Counter[str] = Counter()
    as_a_set, one_by_one = push_module._notes_as_a_set, push_module._notes_one_by_one

    def counted(name: str, function: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            paths[name] += 1
            return function(*args, **kwargs)

        return call

    monkeypatch.setattr(push_module, "_notes_as_a_set", counted("set", as_a_set))
    monkeypatch.setattr(push_module, "_notes_one_by_one", counted("one by one", one_by_one))
    reasons: Counter[str] = Counter()
    applied = 0
    for number in range(SCENARIOS):
        world = _world(api, rng)
        records = _records(world, rng)
        before = Counter(paths)
        batch = _push_and_undo(world, records)
        assert paths - before == {"set": 1}
        with monkeypatch.context() as refused:  # as if the database refused the batch
            refused.setattr(push_module, "_notes_as_a_set", counted("refused", lambda *a: None))
            before = Counter(paths)
            oracle = _push_and_undo(world, records)
            assert paths - before == {"refused": 1, "one by one": 1}
        assert batch == oracle, f"scenario {number}"
        reasons.update(c["reason"] for c in batch["answer"]["conflicts"])
        applied += len(batch["answer"]["applied_note_ids"])
    assert applied > SCENARIOS * 2
    assert set(reasons) == set(sync.CONFLICT_REASONS), reasons  # every reason was met
