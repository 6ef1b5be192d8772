"""The image rules of policies.images as tables: images follow their parent (profile,
personal and team notes, public and members-only teams, a trackable, a group), so who
sees and who changes them is each parent's own rule; a finder's photo is added by its
entry's writer only (an anonymous one by its access session) and removed by the writer
or the trackable's owner side; deletes answer 401, 404 or 403 as documented."""

from __future__ import annotations

import uuid

import pytest

from app.auth import build_viewer
from app.errors import Forbidden, NotFound, Unauthorized
from app.extensions import db
from app.models.enums import NoteVisibility
from app.models.image import ContentImage, ImageTarget
from app.models.team import PageVisibility
from app.models.trackable import TrackableComment, TrackableVisibility
from app.policies import images as image_policy
from tests.factories import make_group, make_note, make_team, make_trackable, make_user

ROLES = ("owner", "team_admin", "team_member", "stranger", "superadmin", "anonymous")
Y, N = True, False

# parent -> (sees its images, uploads and deletes them) per role, in ROLES order. The
# owner is a plain member of both teams.
PARENT_TABLE = {
    "profile": ((Y, Y, Y, Y, Y, Y), (Y, N, N, N, N, N)),
    "personal_note": ((Y, N, N, N, N, N), (Y, N, N, N, N, N)),
    "team_note": ((Y, Y, Y, N, N, N), (Y, Y, N, N, N, N)),
    "public_team": ((Y, Y, Y, Y, Y, Y), (N, Y, N, N, N, N)),
    "members_only_team": ((Y, Y, Y, N, N, N), (N, Y, N, N, N, N)),
    "hidden_trackable": ((Y, N, N, N, N, N), (Y, N, N, N, N, N)),
    "group": ((Y, N, N, N, N, N), (Y, N, N, N, N, N)),
}
TARGETS = {
    "profile": ImageTarget.PROFILE,
    "personal_note": ImageTarget.NOTE,
    "team_note": ImageTarget.NOTE,
    "public_team": ImageTarget.TEAM,
    "members_only_team": ImageTarget.TEAM,
    "hidden_trackable": ImageTarget.TRACKABLE,
    "group": ImageTarget.TRACKABLE_GROUP,
}


def image_of(target, parent_id):
    image = ContentImage(
        target_type=int(target), parent_id=parent_id, original_width=1, original_height=1
    )
    db.session.add(image)
    db.session.commit()
    return image


@pytest.fixture
def world(app):
    owner, admin, member, stranger = (make_user() for _ in range(4))
    superadmin = make_user(is_superadmin=True)
    public = make_team(admin, members=(owner, member), page_visibility=PageVisibility.PUBLIC)
    hidden = make_team(admin, members=(owner, member), page_visibility=PageVisibility.MEMBERS_ONLY)
    trackable = make_trackable(owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    group = make_group(owner)
    trackable.group_id = group.id
    db.session.commit()
    parents = {
        "profile": owner,
        "personal_note": make_note(owner, visibility=NoteVisibility.PRIVATE),
        "team_note": make_note(owner, visibility=NoteVisibility.PRIVATE, team_id=public.id),
        "public_team": public,
        "members_only_team": hidden,
        "hidden_trackable": trackable,
        "group": group,
    }
    users = {
        "owner": owner,
        "team_admin": admin,
        "team_member": member,
        "stranger": stranger,
        "superadmin": superadmin,
        "anonymous": None,
    }
    return parents, {role: build_viewer(user) for role, user in users.items()}


@pytest.mark.parametrize("parent_name", list(PARENT_TABLE))
def test_images_follow_their_parent(world, parent_name):
    """One row of the table, every role at once (a failure names the roles that differ)."""
    parents, viewers = world
    target, parent = TARGETS[parent_name], parents[parent_name]
    image = image_of(target, parent.id)
    sees, changes = PARENT_TABLE[parent_name]

    found = {
        role: (
            image_policy.visible_parent(viewer, target, parent.id) is not None,
            image_policy.can_upload(viewer, target, parent),
            image_policy.can_delete(viewer, image, parent),
        )
        for role, viewer in viewers.items()
    }

    assert found == {role: (sees[i], changes[i], changes[i]) for i, role in enumerate(ROLES)}


@pytest.mark.parametrize(
    ("parent_name", "role", "error", "code"),
    [
        ("profile", "anonymous", Unauthorized, "authentication_required"),
        ("personal_note", "anonymous", Unauthorized, "authentication_required"),
        ("personal_note", "stranger", NotFound, "image_not_found"),
        ("profile", "stranger", Forbidden, "image_change_forbidden"),
        ("public_team", "team_member", Forbidden, "image_change_forbidden"),
    ],
)
def test_require_delete_refuses(world, parent_name, role, error, code):
    parents, viewers = world
    image = image_of(TARGETS[parent_name], parents[parent_name].id)
    with pytest.raises(error) as refused:
        image_policy.require_delete(viewers[role], image.id)
    assert refused.value.code == code


def test_a_missing_image_is_404_signed_in_and_401_anonymous(world):
    _, viewers = world
    with pytest.raises(NotFound):
        image_policy.require_delete(viewers["stranger"], uuid.uuid4())
    with pytest.raises(Unauthorized):
        image_policy.require_delete(viewers["anonymous"], uuid.uuid4())


def test_a_finders_photo_is_added_by_its_writer_and_removed_by_the_owner_side(world):
    parents, viewers = world
    trackable = parents["hidden_trackable"]
    session, other_session = uuid.uuid4(), uuid.uuid4()
    comment = TrackableComment(
        trackable_id=trackable.id, body="Found it", writer_session_id=session
    )
    db.session.add(comment)
    db.session.commit()
    image = image_of(ImageTarget.TRACKABLE_COMMENT, comment.id)
    unlocked = frozenset({trackable.id})
    writer = build_viewer(
        None, unlocked_trackable_ids=unlocked, access_sessions={trackable.id: session}
    )
    other_finder = build_viewer(
        None, unlocked_trackable_ids=unlocked, access_sessions={trackable.id: other_session}
    )
    target = ImageTarget.TRACKABLE_COMMENT

    found = {
        name: (
            image_policy.visible_parent(viewer, target, comment.id) is not None,
            image_policy.can_upload(viewer, target, comment),
            image_policy.can_delete(viewer, image, comment),
        )
        for name, viewer in {
            "writer": writer,
            "other_finder": other_finder,
            "owner": viewers["owner"],
            "stranger": viewers["stranger"],
        }.items()
    }

    assert found == {
        "writer": (Y, Y, Y),
        "other_finder": (Y, N, N),
        "owner": (Y, N, Y),
        "stranger": (N, N, N),
    }
    assert image_policy.require_delete(writer, image.id) is image
