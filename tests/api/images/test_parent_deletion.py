"""Deleting a parent removes its images and their files; account deletion counts them."""

from __future__ import annotations

import pytest

from app.models.enums import NoteVisibility
from app.models.image import ContentImage
from tests.factories import count_rows, make_group, make_note, make_team, make_trackable, make_user
from tests.uploads import upload


@pytest.fixture
def alice(app):
    return make_user("alice")


def test_deleting_a_note_removes_its_images_and_files(api, alice, image_files):
    note = make_note(alice, visibility=NoteVisibility.PUBLIC)
    upload(api.as_user(alice), f"/api/images/notes/{note.id}")
    kept = make_note(alice)
    upload(api.as_user(alice), f"/api/images/notes/{kept.id}")
    response = api.as_user(alice).delete(f"/api/notes/mine/{note.id}")
    assert response.status_code == 204
    assert count_rows(ContentImage) == 1
    assert len(image_files()) == 4
    assert api.as_user(alice).get(f"/api/images/notes/{kept.id}").get_json() != []


def test_deleting_a_team_removes_its_page_images(api, alice, image_files):
    team = make_team(alice)
    upload(api.as_user(alice), f"/api/images/teams/{team.id}")
    response = api.as_user(alice).delete(f"/api/teams/{team.id}")
    assert response.status_code == 204
    assert count_rows(ContentImage) == 0
    assert image_files() == []


def test_account_deletion_removes_every_image_of_the_account_and_counts_them(
    api, alice, image_files
):
    note = make_note(alice)
    trackable = make_trackable(alice)
    group = make_group(alice)
    team = make_team(alice)  # alice is its only member: the team is dismantled
    client = api.as_user(alice)
    for url in (
        "/api/images/profiles",
        f"/api/images/notes/{note.id}",
        f"/api/images/trackables/{trackable.id}",
        f"/api/images/trackable-groups/{group.id}",
        f"/api/images/teams/{team.id}",
    ):
        assert upload(client, url).status_code == 201
    bob = make_user("bob")
    upload(api.as_user(bob), "/api/images/profiles")  # someone else's stays

    response = client.delete("/api/account")
    assert response.status_code == 200
    assert response.get_json()["imagesDeleted"] == 5
    assert count_rows(ContentImage) == 1
    assert len(image_files()) == 4
