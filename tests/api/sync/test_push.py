"""Sync push (contract: Sync; decisions: Sync push): create, update, delete, each conflict
reason, idempotent retries, team records, batch limits."""

from __future__ import annotations

import uuid

import pytest

from app.extensions import db
from app.models.category import Category
from app.models.enums import NoteVisibility
from app.models.note import Note
from tests.api.sync.helpers import (
    PUSH,
    category_record,
    note_record,
    push,
    pushed,
    wire_time,
)
from tests.conftest import assert_problem
from tests.factories import count_rows, make_category, make_note, make_team, make_user


@pytest.fixture
def alice(app):
    return make_user("alice")


def _note(note_id) -> Note:
    db.session.expire_all()
    return db.session.get(Note, uuid.UUID(str(note_id)))


# --- create, update, delete --------------------------------------------------------------


def test_a_new_note_is_created_with_the_clients_id(api, alice):
    record = note_record(title="Old oak", latitude=52.5, longitude=13.4, visibility="Public")
    result = pushed(api, alice, notes=[record])
    assert result == {
        "appliedNoteIds": [record["noteId"]],
        "appliedCategoryIds": [],
        "conflicts": [],
    }
    note = _note(record["noteId"])
    assert (note.owner_user_id, note.title, note.latitude) == (alice.id, "Old oak", 52.5)
    assert note.client_mutation_id == record["clientMutationId"]
    assert note.is_publicly_discoverable  # the same service as the REST create


def test_a_new_note_may_name_a_category_pushed_with_it(api, alice):
    category = category_record(name="Trees", contentLanguage="de")
    child = category_record(
        name="Oaks", contentLanguage="de", parentCategoryId=category["categoryId"]
    )
    note = note_record(categoryId=child["categoryId"], contentLanguage="de")
    # The child is listed before its parent: parents are applied first.
    result = pushed(api, alice, notes=[note], categories=[child, category])
    assert set(result["appliedCategoryIds"]) == {category["categoryId"], child["categoryId"]}
    assert result["appliedNoteIds"] == [note["noteId"]]
    assert str(_note(note["noteId"]).category_id) == child["categoryId"]
    stored = db.session.get(Category, uuid.UUID(child["categoryId"]))
    assert (stored.content_language, str(stored.parent_category_id)) == (
        "de",
        category["categoryId"],
    )


def test_an_edit_from_the_current_base_is_applied(api, alice):
    note = make_note(alice, title="Before")
    record = note_record(note.id, title="After", updatedUtc=wire_time(note.updated_utc))
    result = pushed(api, alice, notes=[record])
    assert result["appliedNoteIds"] == [str(note.id)]
    assert _note(note.id).title == "After"


def test_a_delete_leaves_a_tombstone(api, alice):
    note = make_note(alice)
    record = note_record(note.id, isDeleted=True, updatedUtc=wire_time(note.updated_utc))
    assert pushed(api, alice, notes=[record])["appliedNoteIds"] == [str(note.id)]
    stored = _note(note.id)
    assert stored.is_deleted
    assert stored.client_mutation_id == record["clientMutationId"]


def test_a_category_rename_and_delete_are_applied(api, alice):
    renamed, deleted = make_category(alice, name="Old"), make_category(alice, name="Gone")
    result = pushed(
        api,
        alice,
        categories=[
            category_record(renamed.id, name="New", updatedUtc=wire_time(renamed.updated_utc)),
            category_record(deleted.id, isDeleted=True, updatedUtc=wire_time(deleted.updated_utc)),
        ],
    )
    assert set(result["appliedCategoryIds"]) == {str(renamed.id), str(deleted.id)}
    db.session.expire_all()
    assert db.session.get(Category, renamed.id).name == "New"
    assert db.session.get(Category, deleted.id).is_deleted


def test_a_note_created_and_deleted_offline_creates_nothing(api, alice):
    record = note_record(isDeleted=True)
    assert pushed(api, alice, notes=[record])["appliedNoteIds"] == [record["noteId"]]
    assert count_rows(Note) == 0


def test_external_link_changes_are_ignored_unless_asked_for(api, alice):
    note = make_note(alice, external_link_url="https://example.org/kept")
    record = note_record(
        note.id,
        updatedUtc=wire_time(note.updated_utc),
        externalLinkUrl="https://example.org/other",
        applyExternalLinkChanges=False,
    )
    assert pushed(api, alice, notes=[record])["appliedNoteIds"] == [str(note.id)]
    assert _note(note.id).external_link_url == "https://example.org/kept"


def test_external_link_changes_asked_for_are_revalidated(api, alice):
    note = make_note(alice)
    record = note_record(
        note.id,
        updatedUtc=wire_time(note.updated_utc),
        externalLinkUrl="ftp://example.org/file",
        applyExternalLinkChanges=True,
    )
    result = pushed(api, alice, notes=[record])
    assert [c["reason"] for c in result["conflicts"]] == ["validation_failed"]
    assert _note(note.id).external_link_url is None


# --- conflicts ---------------------------------------------------------------------------


def test_an_edit_from_an_old_base_is_a_conflict_with_the_server_copy(api, alice):
    note = make_note(alice, title="Server")
    record = note_record(note.id, title="Device", updatedUtc="2020-01-01T00:00:00.000Z")
    result = pushed(api, alice, notes=[record])
    assert result["appliedNoteIds"] == []
    (conflict,) = result["conflicts"]
    assert (conflict["entityType"], conflict["id"], conflict["reason"]) == (
        "note",
        str(note.id),
        "changed_on_server",
    )
    assert conflict["serverRecord"]["title"] == "Server"
    assert conflict["serverRecord"]["updatedUtc"] == wire_time(note.updated_utc)
    assert _note(note.id).title == "Server"


def test_an_edit_of_a_note_deleted_on_the_server_is_a_conflict(api, alice):
    note = make_note(alice, is_deleted=True)
    record = note_record(note.id, updatedUtc=wire_time(note.updated_utc))
    (conflict,) = pushed(api, alice, notes=[record])["conflicts"]
    assert conflict["reason"] == "deleted_on_server"
    assert not _note(note.id).title.startswith("Old oak")


def test_another_users_visible_note_is_forbidden_with_its_copy(api, alice):
    note = make_note(make_user("bob"), visibility=NoteVisibility.PUBLIC, title="Bob's")
    record = note_record(note.id, updatedUtc=wire_time(note.updated_utc))
    (conflict,) = pushed(api, alice, notes=[record])["conflicts"]
    assert conflict["reason"] == "forbidden"
    assert conflict["serverRecord"]["title"] == "Bob's"
    assert _note(note.id).title == "Bob's"


def test_another_users_private_note_is_forbidden_without_a_copy(api, alice):
    note = make_note(make_user("bob"), title="Secret")
    record = note_record(note.id, isDeleted=True, updatedUtc=wire_time(note.updated_utc))
    (conflict,) = pushed(api, alice, notes=[record])["conflicts"]
    assert conflict["reason"] == "forbidden"
    assert conflict.get("serverRecord") is None
    assert not _note(note.id).is_deleted


def test_another_users_category_is_forbidden(api, alice):
    category = make_category(make_user("bob"), name="Theirs")
    (conflict,) = pushed(api, alice, categories=[category_record(category.id, name="Mine")])[
        "conflicts"
    ]
    assert (conflict["entityType"], conflict["reason"]) == ("category", "forbidden")
    assert conflict.get("serverRecord") is None


def test_a_category_changed_on_the_server_is_a_conflict(api, alice):
    category = make_category(alice, name="Server")
    record = category_record(category.id, name="Device", updatedUtc="2020-01-01T00:00:00.000Z")
    (conflict,) = pushed(api, alice, categories=[record])["conflicts"]
    assert conflict["reason"] == "changed_on_server"
    assert conflict["serverRecord"]["name"] == "Server"


def test_one_invalid_record_fails_alone(api, alice):
    good, bad = note_record(title="Fine"), note_record(title=" ", latitude=91)
    result = pushed(api, alice, notes=[bad, good])
    assert result["appliedNoteIds"] == [good["noteId"]]
    (conflict,) = result["conflicts"]
    assert conflict["reason"] == "validation_failed"
    assert set(conflict["errors"]) == {"title", "latitude"}
    assert count_rows(Note) == 1


def test_a_rule_broken_in_the_service_is_a_validation_conflict(api, alice):
    record = note_record(categoryId=str(uuid.uuid4()))  # no such category
    (conflict,) = pushed(api, alice, notes=[record])["conflicts"]
    assert conflict["reason"] == "validation_failed"
    assert "categoryId" in conflict["errors"]
    assert count_rows(Note) == 0


def test_a_note_cannot_change_team_through_sync(api, alice):
    note = make_note(alice)
    team = make_team(alice)
    record = note_record(note.id, teamId=str(team.id), updatedUtc=wire_time(note.updated_utc))
    (conflict,) = pushed(api, alice, notes=[record])["conflicts"]
    assert (conflict["reason"], list(conflict["errors"])) == ("validation_failed", ["teamId"])


# --- retries -----------------------------------------------------------------------------


def test_a_retried_create_applies_nothing_twice(api, alice):
    record = note_record(title="Once")
    pushed(api, alice, notes=[record])
    again = pushed(api, alice, notes=[record])
    assert (again["appliedNoteIds"], again["conflicts"]) == ([record["noteId"]], [])
    assert count_rows(Note) == 1


def test_a_retried_edit_is_recognised_by_its_mutation_id(api, alice):
    note = make_note(alice, title="Before")
    record = note_record(note.id, title="After", updatedUtc=wire_time(note.updated_utc))
    pushed(api, alice, notes=[record])
    updated = _note(note.id).updated_utc
    # The device never saw the answer: it sends the same change from the same base.
    again = pushed(api, alice, notes=[record])
    assert (again["appliedNoteIds"], again["conflicts"]) == ([str(note.id)], [])
    assert _note(note.id).updated_utc == updated


def test_a_change_retried_after_another_write_is_not_applied_again(api, alice):
    """The device's answer is lost, a second device changes the note, the first pushes
    its change again: from its old base (`changed_on_server` would make it rebase) and
    then rebased on the second device's copy. Both times the change is known as applied,
    and the second device's write stays."""
    note = make_note(alice, title="Before")
    first = note_record(note.id, title="Device A", updatedUtc=wire_time(note.updated_utc))
    pushed(api, alice, notes=[first])
    after_a = wire_time(_note(note.id).updated_utc)
    second = note_record(note.id, title="Device B", updatedUtc=after_a)
    assert pushed(api, alice, notes=[second])["appliedNoteIds"] == [str(note.id)]
    after_b = _note(note.id).updated_utc
    rebased = {**first, "updatedUtc": wire_time(after_b)}
    for retry in (first, rebased):
        again = pushed(api, alice, notes=[retry])
        assert (again["appliedNoteIds"], again["conflicts"]) == ([str(note.id)], [])
    assert (_note(note.id).title, _note(note.id).updated_utc) == ("Device B", after_b)


def test_a_change_retried_after_the_note_was_deleted_is_known_as_applied(api, alice):
    """Applied, then deleted by another device: the retry is not `deleted_on_server`
    (that change did reach the server) and the tombstone stays."""
    note = make_note(alice, title="Before")
    change = note_record(note.id, title="Device A", updatedUtc=wire_time(note.updated_utc))
    pushed(api, alice, notes=[change])
    after_a = wire_time(_note(note.id).updated_utc)
    pushed(api, alice, notes=[note_record(note.id, isDeleted=True, updatedUtc=after_a)])
    again = pushed(api, alice, notes=[change])
    assert (again["appliedNoteIds"], again["conflicts"]) == ([str(note.id)], [])
    assert _note(note.id).is_deleted


def test_a_mutation_id_applied_to_one_note_is_new_for_another(api, alice):
    one, two = make_note(alice, title="One"), make_note(alice, title="Two")
    tag = str(uuid.uuid4())
    records = [
        note_record(
            n.id, title="Same tag", clientMutationId=tag, updatedUtc=wire_time(n.updated_utc)
        )
        for n in (one, two)
    ]
    assert pushed(api, alice, notes=records[:1])["appliedNoteIds"] == [str(one.id)]
    assert pushed(api, alice, notes=records[1:])["appliedNoteIds"] == [str(two.id)]
    assert (_note(one.id).title, _note(two.id).title) == ("Same tag", "Same tag")


def test_a_retried_delete_is_applied_once(api, alice):
    note = make_note(alice)
    record = note_record(note.id, isDeleted=True, updatedUtc=wire_time(note.updated_utc))
    pushed(api, alice, notes=[record])
    again = pushed(api, alice, notes=[record])
    assert (again["appliedNoteIds"], again["conflicts"]) == ([str(note.id)], [])


def test_a_retried_category_create_is_recognised(api, alice):
    record = category_record(name="Walks")
    pushed(api, alice, categories=[record])
    again = pushed(api, alice, categories=[record])
    assert (again["appliedCategoryIds"], again["conflicts"]) == ([record["categoryId"]], [])
    assert count_rows(Category) == 1


# --- teams -------------------------------------------------------------------------------


def test_a_member_creates_and_edits_team_notes_and_categories(api, alice):
    team = make_team(make_user("ada"), members=(alice,))
    category = category_record(teamId=str(team.id), name="Huts")
    note = note_record(teamId=str(team.id), categoryId=category["categoryId"])
    result = pushed(api, alice, notes=[note], categories=[category])
    assert (result["appliedNoteIds"], result["appliedCategoryIds"]) == (
        [note["noteId"]],
        [category["categoryId"]],
    )
    assert _note(note["noteId"]).team_id == team.id


def test_a_non_member_cannot_write_into_a_team(api, alice):
    team = make_team(make_user("ada"))
    result = pushed(api, alice, notes=[note_record(teamId=str(team.id))])
    assert [c["reason"] for c in result["conflicts"]] == ["forbidden"]
    assert count_rows(Note) == 0


def test_a_member_may_not_change_another_members_team_note(api, alice):
    author = make_user("bob")
    team = make_team(make_user("ada"), members=(alice, author))
    note = make_note(author, team_id=team.id, title="Bob's")
    record = note_record(note.id, teamId=str(team.id), updatedUtc=wire_time(note.updated_utc))
    (conflict,) = pushed(api, alice, notes=[record])["conflicts"]
    assert conflict["reason"] == "forbidden"
    assert conflict["serverRecord"]["title"] == "Bob's"  # a member sees every team note


def test_a_team_admin_may_change_a_members_team_note(api, alice):
    author = make_user("bob")
    team = make_team(alice, members=(author,))
    note = make_note(author, team_id=team.id)
    record = note_record(
        note.id, teamId=str(team.id), title="Fixed", updatedUtc=wire_time(note.updated_utc)
    )
    assert pushed(api, alice, notes=[record])["appliedNoteIds"] == [str(note.id)]
    assert _note(note.id).title == "Fixed"


# --- the request as a whole --------------------------------------------------------------


def test_push_needs_a_bearer_token(api):
    assert_problem(api.post(PUSH, json={"deviceId": str(uuid.uuid4())}), 401)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "deviceId"),
        ({"deviceId": "nope"}, "deviceId"),
        ({"deviceId": str(uuid.uuid4()), "notes": {"a": 1}}, "notes"),
        ({"deviceId": str(uuid.uuid4()), "notes": [{"title": "no id"}]}, "notes.0.noteId"),
        ({"deviceId": str(uuid.uuid4()), "categories": ["x"]}, "categories.0"),
    ],
)
def test_a_malformed_push_is_400(api, alice, body, field):
    body = assert_problem(api.as_user(alice).post(PUSH, json=body), 400)
    assert field in body["errors"]


def test_a_push_over_the_batch_limit_is_400(api, app, alice):
    app.config["SYNC_PUSH_MAX_NOTES"] = 2
    response = push(api, alice, notes=[note_record() for _ in range(3)])
    assert "notes" in assert_problem(response, 400)["errors"]
    assert count_rows(Note) == 0


def test_the_batch_limits_are_published_in_the_status(api, app):
    limits = api.get("/api/system/status").get_json()["limits"]
    assert limits["syncPushMaxNotes"] == app.config["SYNC_PUSH_MAX_NOTES"] == 500
    assert limits["syncPushMaxCategories"] == app.config["SYNC_PUSH_MAX_CATEGORIES"] == 500


# --- a clientMutationId sent again with another record --------


def test_a_tag_applied_before_with_another_record_is_a_conflict_of_its_own(api, alice):
    note = make_note(alice, title="Server")
    change = note_record(note.id, title="First", updatedUtc=wire_time(note.updated_utc))
    assert pushed(api, alice, notes=[change])["appliedNoteIds"] == [str(note.id)]
    applied_at = wire_time(_note(note.id).updated_utc)
    reused = {**change, "title": "Second", "updatedUtc": applied_at}
    other = note_record(title="Unrelated")
    result = pushed(api, alice, notes=[reused, other])
    assert result["appliedNoteIds"] == [other["noteId"]]  # the rest of the push goes on
    (conflict,) = result["conflicts"]
    assert (conflict["id"], conflict["reason"]) == (str(note.id), "client_mutation_id_reused")
    assert conflict["serverRecord"]["title"] == "First"
    assert _note(note.id).title == "First"


def test_a_retry_of_the_same_record_from_an_older_base_is_still_applied(api, alice):
    note = make_note(alice, title="Server")
    change = note_record(note.id, title="First", updatedUtc=wire_time(note.updated_utc))
    pushed(api, alice, notes=[change])
    again = pushed(api, alice, notes=[{**change, "contentLanguage": "EN"}])
    assert (again["appliedNoteIds"], again["conflicts"]) == ([str(note.id)], [])
