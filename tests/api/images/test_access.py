"""Each parent kind with each viewer kind: list, download, /Images/..., upload, delete.

Images follow their parent: whoever can open the parent sees its images (a hidden parent
lists nothing and its files are 404); uploading and deleting need parent management
(403 for a viewer who sees the parent, 404 for one who does not)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from app.models.enums import NoteVisibility
from app.models.team import PageVisibility
from app.models.trackable import TrackableVisibility
from tests.conftest import assert_problem
from tests.factories import (
    make_group,
    make_note,
    make_team,
    make_trackable,
    make_user,
    unlock_trackable,
)
from tests.uploads import upload


@dataclass
class Parent:
    list_url: str
    upload_url: str
    manager: object
    viewers: dict  # who -> user or None


def _profile(owner, others):
    return Parent(f"/api/images/profiles/{owner.id}", "/api/images/profiles", owner, others)


def build(kind: str) -> Parent:
    manager, stranger, member = make_user(), make_user(), make_user()
    viewers = {"anonymous": None, "stranger": stranger, "member": member, "manager": manager}
    if kind == "profile":
        return _profile(manager, viewers)
    if kind in ("public note", "private note"):
        visibility = NoteVisibility.PUBLIC if kind == "public note" else NoteVisibility.PRIVATE
        note = make_note(manager, visibility=visibility)
        url = f"/api/images/notes/{note.id}"
        return Parent(url, url, manager, viewers)
    if kind in ("public team", "members-only team"):
        page = PageVisibility.PUBLIC if kind == "public team" else PageVisibility.MEMBERS_ONLY
        team = make_team(manager, members=(member,), page_visibility=page)
        url = f"/api/images/teams/{team.id}"
        return Parent(url, url, manager, viewers)
    if kind in ("visible trackable", "gated trackable"):
        visibility = (
            TrackableVisibility.ALWAYS_VISIBLE
            if kind == "visible trackable"
            else TrackableVisibility.ONCE_ACCESSED
        )
        trackable = make_trackable(manager, visibility=visibility)
        unlock_trackable(member, trackable)  # "member": an unlocker
        url = f"/api/images/trackables/{trackable.id}"
        return Parent(url, url, manager, viewers)
    group = make_group(manager)
    item = make_trackable(manager, group_id=group.id, visibility=TrackableVisibility.ONCE_ACCESSED)
    unlock_trackable(member, item)  # "member": sees an item of the group
    url = f"/api/images/trackable-groups/{group.id}"
    return Parent(url, url, manager, viewers)


# kind -> the viewers who may open the parent (the manager always may, and manages it).
SEES = {
    "profile": {"anonymous", "stranger", "member"},
    "public note": {"anonymous", "stranger", "member"},
    "private note": set(),
    "public team": {"anonymous", "stranger", "member"},
    "members-only team": {"member"},
    "visible trackable": {"anonymous", "stranger", "member"},
    "gated trackable": {"member"},
    "trackable group": {"member"},
}
CASES = [(kind, who) for kind in SEES for who in ("anonymous", "stranger", "member", "manager")]


@pytest.fixture(params=CASES, ids=[f"{kind}-{who}" for kind, who in CASES])
def case(request, app, api):
    kind, who = request.param
    parent = build(kind)
    created = upload(api.as_user(parent.manager), parent.upload_url)
    assert created.status_code == 201, created.get_json()
    sees = who == "manager" or who in SEES[kind]
    return parent, parent.viewers[who], who, sees, created.get_json()["image"]


def test_list_shows_images_only_to_who_sees_the_parent(api, case):
    parent, viewer, _, sees, record = case
    response = api.as_user(viewer).get(parent.list_url)
    assert response.status_code == 200
    assert [each["contentImageId"] for each in response.get_json()] == (
        [record["contentImageId"]] if sees else []
    )


def test_download_follows_the_parent(api, case):
    _, viewer, _, sees, record = case
    response = api.as_user(viewer).get(f"/api/images/{record['contentImageId']}/small")
    if sees:
        assert response.status_code == 200
        assert response.mimetype == "image/jpeg"
    else:
        assert_problem(response, 404)


def test_website_file_url_follows_the_parent(api, case):
    _, viewer, _, sees, record = case
    response = api.as_user(viewer).get(record["thumbnailUrl"])
    if sees:
        assert response.status_code == 200
        assert response.mimetype == "image/jpeg"
    else:
        assert_problem(response, 404)


def test_upload_needs_parent_management(api, case):
    parent, viewer, who, sees, _ = case
    if who == "anonymous":
        assert_problem(upload(api, parent.upload_url), 401)
        return
    response = upload(api.as_user(viewer), parent.upload_url)
    if parent.upload_url == "/api/images/profiles":
        assert response.status_code == 201  # always the caller's own profile
        assert response.get_json()["image"]["userId"] == str(viewer.id)
    elif who == "manager":
        assert response.status_code == 201
    else:
        assert_problem(response, 403 if sees else 404)


def test_delete_needs_parent_management(api, case, image_files):
    _, viewer, who, sees, record = case
    response = api.as_user(viewer).delete(f"/api/images/{record['contentImageId']}")
    if who == "anonymous":
        assert_problem(response, 401)
    elif who == "manager":
        assert response.status_code == 204
        assert image_files() == []
    else:
        assert_problem(response, 403 if sees else 404)
        assert len(image_files()) == 4
