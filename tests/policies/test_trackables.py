"""The trackable rules of policies.trackables as tables: who views and who manages a
personal, a public, a team's, a former member's and an unactivated trackable; who
controls and sees a group; who edits and deletes a comment. Viewers are built the way
requests build them (team roles and account unlocks from the database)."""

from __future__ import annotations

import pytest

from app.auth import build_viewer
from app.extensions import db
from app.models.enums import NoteVisibility
from app.models.trackable import TrackableComment, TrackableVisibility
from app.policies import trackables as trackable_policy
from tests.factories import (
    attach_trackable,
    make_group,
    make_note,
    make_team,
    make_trackable,
    make_user,
    unlock_trackable,
)

ROLES = (
    "activator",
    "team_admin",
    "team_member",
    "former_activator",
    "unlocker",
    "note_owner",
    "stranger",
    "creator",
    "superadmin",
    "anonymous",
)
Y, N = True, False

# trackable -> (can_view, can_manage) per role, in ROLES order
TRACKABLE_TABLE = {
    # activated by `activator`, visible once accessed; unlocked by `unlocker`, attached to
    # a private note of `note_owner`
    "personal_hidden": (
        (Y, N, N, N, Y, Y, N, N, N, N),
        (Y, N, N, N, N, N, N, N, N, N),
    ),
    "personal_public": (
        (Y, Y, Y, Y, Y, Y, Y, Y, Y, Y),
        (Y, N, N, N, N, N, N, N, N, N),
    ),
    # activated for the team by `activator`, an active member
    "team_hidden": (
        (Y, Y, N, N, N, N, N, N, N, N),
        (Y, Y, N, N, N, N, N, N, N, N),
    ),
    # activated for the team by `former_activator`, who has left it since
    "former_member_hidden": (
        (N, Y, N, N, N, N, N, N, N, N),
        (N, Y, N, N, N, N, N, N, N, N),
    ),
    # not activated yet: its creator (who holds the secret) alone, whatever its visibility
    "unactivated": (
        (N, N, N, N, N, N, N, Y, N, N),
        (N, N, N, N, N, N, N, Y, N, N),
    ),
}


@pytest.fixture
def world(app):
    users = {role: make_user() for role in ROLES if role not in {"superadmin", "anonymous"}}
    users["superadmin"] = make_user(is_superadmin=True)
    admin, activator = users["team_admin"], users["activator"]
    team = make_team(admin, members=(activator, users["team_member"]))
    hidden = TrackableVisibility.ONCE_ACCESSED
    trackables = {
        "personal_hidden": make_trackable(activator, visibility=hidden),
        "personal_public": make_trackable(activator, visibility=TrackableVisibility.ALWAYS_VISIBLE),
        "team_hidden": make_trackable(activator, team_id=team.id, visibility=hidden),
        "former_member_hidden": make_trackable(
            users["former_activator"], team_id=team.id, visibility=hidden
        ),
        "unactivated": make_trackable(
            None,
            created_by_user_id=users["creator"].id,
            visibility=TrackableVisibility.ALWAYS_VISIBLE,
        ),
    }
    unlock_trackable(users["unlocker"], trackables["personal_hidden"])
    note = make_note(users["note_owner"], visibility=NoteVisibility.PRIVATE)
    attach_trackable(note, trackables["personal_hidden"])
    viewers = {role: build_viewer(user) for role, user in users.items()}
    viewers["anonymous"] = build_viewer(None)
    return team, users, trackables, viewers


@pytest.mark.parametrize("name", list(TRACKABLE_TABLE))
def test_view_and_manage(world, name):
    """One row of the table: every role at once (a failure names the roles that differ)."""
    _, _, trackables, viewers = world
    views, manages = TRACKABLE_TABLE[name]
    trackable = trackables[name]
    found = {
        role: (
            trackable_policy.can_view(viewers[role], trackable),
            trackable_policy.can_manage(viewers[role], trackable),
        )
        for role in ROLES
    }
    assert found == {role: (views[i], manages[i]) for i, role in enumerate(ROLES)}


@pytest.mark.parametrize(
    ("group_kind", "role", "controls", "sees"),
    [
        ("personal", "activator", Y, Y),  # its creator
        ("personal", "team_admin", N, N),
        ("personal", "stranger", N, N),
        ("personal", "anonymous", N, N),
        ("team", "activator", N, N),  # a team member who did not make it
        ("team", "team_admin", Y, Y),
        ("team", "team_member", N, N),
        ("team", "stranger", N, N),
        ("public_item", "stranger", N, Y),  # an item anyone may see shows the group
        ("public_item", "anonymous", N, Y),
    ],
)
def test_groups(world, group_kind, role, controls, sees):
    team, users, trackables, viewers = world
    if group_kind == "team":
        group = make_group(users["former_activator"], team_id=team.id)
    else:
        group = make_group(users["activator"])
    item = "personal_public" if group_kind == "public_item" else "personal_hidden"
    if group_kind != "team":
        trackables[item].group_id = group.id
        db.session.commit()
    assert trackable_policy.controls_group(viewers[role], group) is controls
    assert trackable_policy.can_view_group(viewers[role], group) is sees


@pytest.mark.parametrize(
    ("role", "edits", "deletes"),
    [
        ("unlocker", Y, Y),  # the signed-in author
        ("activator", N, Y),  # the owner side deletes, never edits others' words
        ("team_admin", N, N),  # not the owner side of a personal trackable
        ("stranger", N, N),
        ("anonymous", N, N),
    ],
)
def test_comments(world, role, edits, deletes):
    _, users, trackables, viewers = world
    trackable = trackables["personal_hidden"]
    comment = TrackableComment(
        trackable_id=trackable.id, author_user_id=users["unlocker"].id, body="Found it"
    )
    db.session.add(comment)
    db.session.commit()
    viewer = viewers[role]
    assert trackable_policy.can_edit_comment(viewer, comment) is edits
    assert trackable_policy.can_delete_entry(viewer, trackable, comment.author_user_id) is deletes
