"""Convergence of offline sync, as a Hypothesis state machine (contract: Sync).

Two or three devices of one user and a REST client edit the user's notes in any order:
devices create, edit and delete offline, push (sometimes losing the answer, so they push
the same changes again), and pull; the REST client edits and deletes on the server. After
a final push and pull of every device, every device's store equals the server's view (a
full pull), and the server holds the last write it accepted for every note: no accepted
write is lost, none is applied twice.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from tests.api.sync.helpers import note_record, pulled, pushed
from tests.factories import make_user

# SYNC_CONVERGENCE_EXAMPLES examples (default 10) of at most 25 steps each.
EXAMPLES = int(os.environ.get("SYNC_CONVERGENCE_EXAMPLES", "10"))
TITLES = st.sampled_from(["oak", "elm", "ash", "yew", "fir"])
DELETED = object()


# A device keeps, per note, its record and, while it has an unpushed change, that change
# (`dirty`) and the last server copy it saw (`shadow`). On `changed_on_server` it rebases
# its change on the server copy and pushes it again; a server tombstone drops it.
class Device:
    def __init__(self) -> None:
        self.store: dict[str, dict] = {}
        self.dirty: dict[str, dict] = {}
        self.shadow: dict[str, dict] = {}
        self.last: str | None = None

    def change(self, record: dict) -> None:
        record = {**record, "clientMutationId": str(uuid.uuid4())}
        self.dirty[record["noteId"]] = record
        if record.get("isDeleted"):
            self.store.pop(record["noteId"], None)
        else:
            self.store[record["noteId"]] = record


def test_devices_and_rest_edits_converge(api, app):
    class SyncMachine(RuleBasedStateMachine):
        notes = Bundle("notes")

        def __init__(self) -> None:
            super().__init__()
            self.user = make_user(f"u{uuid.uuid4().hex[:12]}")
            self.accepted: dict[str, Any] = {}  # note id -> last accepted title, or DELETED
            self.logged: set[tuple[str, str]] = set()  # (note id, mutation id) applied

        @initialize(count=st.integers(min_value=2, max_value=3))
        def devices(self, count: int) -> None:
            self.devices = [Device() for _ in range(count)]

        # --- devices, offline ------------------------------------------------------------

        @rule(target=notes, device=st.integers(0, 2), title=TITLES)
        def create_offline(self, device: int, title: str) -> str:
            record = note_record(title=title)
            self._device(device).change(record)
            return record["noteId"]

        @rule(device=st.integers(0, 2), note_id=notes, title=TITLES)
        def edit_offline(self, device: int, note_id: str, title: str) -> None:
            own = self._device(device)
            if note_id in own.store:
                own.change({**own.store[note_id], "title": title})

        @rule(device=st.integers(0, 2), note_id=notes)
        def delete_offline(self, device: int, note_id: str) -> None:
            own = self._device(device)
            if note_id in own.store:
                own.change({**own.store[note_id], "isDeleted": True})

        # --- devices, online -------------------------------------------------------------

        @rule(device=st.integers(0, 2), answer_lost=st.booleans())
        def push(self, device: int, answer_lost: bool) -> None:
            self._push(self._device(device), answer_lost=answer_lost)

        @rule(device=st.integers(0, 2))
        def pull(self, device: int) -> None:
            self._pull(self._device(device))

        # --- the REST client -------------------------------------------------------------

        @precondition(lambda self: self.accepted)
        @rule(note_id=notes, title=TITLES, delete=st.booleans())
        def rest_edit(self, note_id: str, title: str, delete: bool) -> None:
            client = api.as_user(self.user)
            if delete:
                response = client.delete(f"/api/notes/mine/{note_id}")
                value: Any = DELETED
            else:
                url = f"/api/notes/mine/{note_id}/move"
                response = client.post(url, json={"title": title})
                value = title
            assert response.status_code in (200, 204, 404), response.get_data(as_text=True)
            if response.status_code != 404:
                self.accepted[note_id] = value

        # --- helpers ---------------------------------------------------------------------

        def _device(self, index: int) -> Device:
            return self.devices[index % len(self.devices)]

        def _push(self, device: Device, *, answer_lost: bool = False) -> None:
            records = list(device.dirty.values())
            result = pushed(api, self.user, notes=records)
            sent = {record["noteId"]: record for record in records}
            for note_id in result["appliedNoteIds"]:
                record = sent[note_id]
                key = (note_id, record["clientMutationId"])
                if key not in self.logged:  # a retried change is not a second write
                    self.logged.add(key)
                    self.accepted[note_id] = DELETED if record.get("isDeleted") else record["title"]
            if answer_lost:
                return
            for note_id in result["appliedNoteIds"]:
                record = device.dirty.pop(note_id)
                shadow = device.shadow.pop(note_id, None)
                if record.get("isDeleted"):
                    device.store.pop(note_id, None)
                elif shadow is not None:
                    # The next pull brings what this push changed; until then the last
                    # server copy seen (a retry that changed nothing leaves that current).
                    device.store[note_id] = shadow
            for conflict in result["conflicts"]:
                note_id, server = conflict["id"], conflict.get("serverRecord")
                assert conflict["reason"] in ("changed_on_server", "deleted_on_server"), conflict
                if conflict["reason"] == "deleted_on_server" or server is None:
                    self._drop(device, note_id)
                    continue
                device.shadow[note_id] = server  # rebase the change on the server copy
                device.dirty[note_id]["updatedUtc"] = server["updatedUtc"]

        def _pull(self, device: Device) -> None:
            body = pulled(api, self.user, device.last)
            if device.last is None:  # a first pull is the server's whole view
                device.store = {n: r for n, r in device.store.items() if n in device.dirty}
            for record in body["userNotes"]:
                note_id = record["noteId"]
                if record["isDeleted"]:
                    self._drop(device, note_id)
                elif note_id in device.dirty:
                    device.shadow[note_id] = record
                else:
                    device.store[note_id] = record
            device.last = body["serverSyncUtc"]

        @staticmethod
        def _drop(device: Device, note_id: str) -> None:
            device.store.pop(note_id, None)
            device.dirty.pop(note_id, None)
            device.shadow.pop(note_id, None)

        def teardown(self) -> None:
            if not hasattr(self, "devices"):
                return
            for device in self.devices:
                for _ in range(3):  # a rebased change goes through on the next push
                    if device.dirty:
                        self._push(device)
                assert not device.dirty
            for device in self.devices:
                self._pull(device)
            server = {n["noteId"]: n for n in pulled(api, self.user)["userNotes"]}
            for index, device in enumerate(self.devices):
                assert device.store == server, f"device {index} differs from the server"
            for note_id, value in self.accepted.items():
                if value is DELETED:
                    assert note_id not in server
                else:
                    assert server[note_id]["title"] == value, note_id
            assert set(server) <= set(self.accepted)

    run_state_machine_as_test(
        SyncMachine,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=25,
            deadline=None,
            database=None,
            # CI replays the same examples every run, so a red run is never luck;
            # SYNC_CONVERGENCE_RANDOM=1 (with SYNC_CONVERGENCE_EXAMPLES=150, say) explores
            # new ones. Exploring found a change applied twice (a retry after another
            # device's write), which sync_note_mutations now prevents.
            derandomize=os.environ.get("SYNC_CONVERGENCE_RANDOM") != "1",
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
