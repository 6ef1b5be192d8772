"""Sync pushes at the same moment (threads released together, each on its own connection;
tests/api/test_races.py explains the harness): the database decides, nothing is lost."""

from __future__ import annotations

from sqlalchemy import select

from app.extensions import db
from app.models.note import Note
from tests.api.sync.helpers import DEVICE, PUSH, note_record
from tests.api.test_races import run_together
from tests.factories import count_rows, make_user


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
