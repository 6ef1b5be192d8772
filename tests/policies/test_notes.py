"""The note visibility table (contract: Note, visibility rules 1-3): one case table drives
`can_view` and `visible_filter`, so the predicate and the SQL can never disagree."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select

from app.auth import build_viewer
from app.extensions import db
from app.models.enums import CommentPolicy, NoteVisibility
from app.models.note import Note
from app.models.team import TeamRole
from app.models.user import User
from app.policies import notes as note_policy
from tests.factories import attach_trackable, make_note, make_user, one_commit, unlock_trackable
from tests.snapshots import kept

PRIVATE = NoteVisibility.PRIVATE
PUBLIC = NoteVisibility.PUBLIC
GATED = NoteVisibility.ONCE_TRACKABLE_ACCESSED
TEAM_ID = uuid.uuid4()
OTHER_TEAM_ID = uuid.uuid4()

VIEWERS = ("anonymous", "owner", "stranger", "unlocked", "team_member", "team_admin")

# note -> which viewers may open it (in VIEWERS order)
VISIBILITY_TABLE = {
    "private": (False, True, False, False, False, False),
    "public": (True, True, True, True, True, True),
    "gated_without_trackables": (True, True, True, True, True, True),
    "gated_with_trackables": (False, True, False, True, False, False),
    "private_with_unlocked_trackable": (False, True, False, False, False, False),
    "team_private": (False, True, False, False, True, True),
    "team_public": (True, True, True, True, True, True),
    "team_gated_with_trackables": (False, True, False, True, True, True),
    "other_team_private": (False, True, False, False, False, False),
    "team_deleted": (False, False, False, False, False, False),
    "deleted_public": (False, False, False, False, False, False),
}
CASES = [
    pytest.param(note, viewer, allowed[index], id=f"{note}-{viewer}")
    for note, allowed in VISIBILITY_TABLE.items()
    for index, viewer in enumerate(VIEWERS)
]
DISCOVERABLE = {"public", "gated_without_trackables", "team_public"}


@pytest.fixture
def world(app):
    """The notes and their viewers, as new for each case: built once in this worker, its
    rows put back after (tests/snapshots.py)."""
    note_ids, user_ids = kept("note visibility table", build_world)
    notes = {name: db.session.get(Note, note_id) for name, note_id in note_ids.items()}
    owner, stranger, unlocker, member, admin = (db.session.get(User, key) for key in user_ids)
    viewers = {
        "anonymous": build_viewer(None),
        "owner": build_viewer(owner),
        "stranger": build_viewer(stranger),
        # the account-stored unlock reaches the Viewer through the registered viewer part
        "unlocked": build_viewer(unlocker),
        "team_member": build_viewer(member, team_roles={TEAM_ID: TeamRole.MEMBER}),
        "team_admin": build_viewer(admin, team_roles={TEAM_ID: TeamRole.ADMIN}),
    }
    return notes, viewers


def build_world() -> tuple[dict[str, uuid.UUID], tuple[uuid.UUID, ...]]:
    with one_commit():  # the world in one transaction
        users = owner, _stranger, unlocker, _member, _admin = tuple(make_user() for _ in range(5))
        notes = {
            "private": make_note(owner, visibility=PRIVATE),
            "public": make_note(owner, visibility=PUBLIC),
            "gated_without_trackables": make_note(owner, visibility=GATED),
            "gated_with_trackables": make_note(owner, visibility=GATED),
            "private_with_unlocked_trackable": make_note(owner, visibility=PRIVATE),
            "team_private": make_note(owner, visibility=PRIVATE, team_id=TEAM_ID),
            "team_public": make_note(owner, visibility=PUBLIC, team_id=TEAM_ID),
            "team_gated_with_trackables": make_note(owner, visibility=GATED, team_id=TEAM_ID),
            "other_team_private": make_note(owner, visibility=PRIVATE, team_id=OTHER_TEAM_ID),
            "team_deleted": make_note(owner, visibility=PRIVATE, team_id=TEAM_ID, is_deleted=True),
            "deleted_public": make_note(owner, visibility=PUBLIC, is_deleted=True),
        }
        unlocked = attach_trackable(notes["gated_with_trackables"])
        attach_trackable(notes["gated_with_trackables"])  # a second one, not unlocked
        attach_trackable(notes["private_with_unlocked_trackable"], unlocked)
        attach_trackable(notes["team_gated_with_trackables"], unlocked)
        unlock_trackable(unlocker, unlocked)
        ids = {name: note.id for name, note in notes.items()}, tuple(user.id for user in users)
    return ids


def test_viewer_part_fills_account_unlocks(world):
    _, viewers = world
    assert len(viewers["unlocked"].unlocked_trackable_ids) == 1
    assert viewers["stranger"].unlocked_trackable_ids == frozenset()


@pytest.mark.parametrize(("note", "viewer", "allowed"), CASES)
def test_can_view(world, note, viewer, allowed):
    notes, viewers = world
    assert note_policy.can_view(viewers[viewer], notes[note]) is allowed


@pytest.mark.parametrize(("note", "viewer", "allowed"), CASES)
def test_visible_filter(world, note, viewer, allowed):
    notes, viewers = world
    visible = set(
        db.session.scalars(select(Note.id).where(note_policy.visible_filter(viewers[viewer])))
    )
    assert (notes[note].id in visible) is allowed


@pytest.mark.parametrize("note", list(VISIBILITY_TABLE))
def test_public_discovery_filter(world, note):
    notes, _ = world
    listed = set(db.session.scalars(select(Note.id).where(note_policy.public_discovery_filter())))
    assert (notes[note].id in listed) is (note in DISCOVERABLE)


def test_first_attachment_takes_a_gated_note_out_of_discovery(app):
    note = make_note(visibility=GATED)
    assert note.is_publicly_discoverable
    attach_trackable(note)
    assert not note.is_publicly_discoverable


@pytest.mark.parametrize(
    ("role", "team_note", "allowed"),
    [
        ("owner", False, True),
        ("stranger", False, False),
        ("owner", True, True),
        ("team_admin", True, True),
        ("team_member", True, False),
        ("stranger", True, False),
    ],
)
def test_require_manage(app, role, team_note, allowed):
    owner, other = make_user(), make_user()
    note = make_note(owner, visibility=PUBLIC, team_id=TEAM_ID if team_note else None)
    roles = {"team_admin": TeamRole.ADMIN, "team_member": TeamRole.MEMBER}
    given = {"team_roles": {TEAM_ID: roles[role]}} if role in roles else {}
    viewer = build_viewer(owner if role == "owner" else other, **given)
    assert note_policy.can_manage(viewer, note) is allowed


@pytest.mark.parametrize(
    ("policy", "role", "allowed"),
    [
        (CommentPolicy.LOGGED_IN_USERS, "anonymous", False),
        (CommentPolicy.LOGGED_IN_USERS, "stranger", True),
        (CommentPolicy.TEAM_MEMBERS, "stranger", False),
        (CommentPolicy.TEAM_MEMBERS, "team_member", True),
        (CommentPolicy.TEAM_MEMBERS, "owner", True),
    ],
)
def test_can_comment(app, policy, role, allowed):
    owner = make_user()
    note = make_note(owner, visibility=PUBLIC, team_id=TEAM_ID, comment_policy=policy)
    viewers = {
        "anonymous": build_viewer(None),
        "stranger": build_viewer(make_user()),
        "owner": build_viewer(owner),
        "team_member": build_viewer(make_user(), team_roles={TEAM_ID: TeamRole.MEMBER}),
    }
    assert note_policy.can_comment(viewers[role], note) is allowed
