"""Stored files: delete, caching validators, unknown names, crash safety."""

from __future__ import annotations

import pytest

from app.models.enums import NoteVisibility
from app.models.image import ContentImage
from tests.conftest import assert_problem
from tests.factories import count_rows, make_note, make_user
from tests.uploads import upload


@pytest.fixture
def alice(app):
    return make_user("alice")


@pytest.fixture
def record(api, alice):
    return upload(api.as_user(alice), "/api/images/profiles").get_json()["image"]


def test_upload_stores_four_files_named_after_the_image(record, image_files):
    guid = record["contentImageId"]
    assert image_files() == sorted(
        [
            f"Large/{guid}-1024.jpg",
            f"Medium/{guid}-612.jpg",
            f"Small/{guid}-306.jpg",
            f"Thumbnail/{guid}-64.jpg",
        ]
    )


def test_delete_removes_the_record_and_every_variant(api, alice, record, image_files):
    response = api.as_user(alice).delete(f"/api/images/{record['contentImageId']}")
    assert response.status_code == 204
    assert image_files() == []
    assert count_rows(ContentImage) == 0
    assert_problem(api.get(record["largeUrl"]), 404)
    assert api.get(f"/api/images/profiles/{alice.id}").get_json() == []


def test_get_on_the_delete_path_is_405_problem(api, alice, record):
    assert_problem(api.as_user(alice).get(f"/api/images/{record['contentImageId']}"), 405)


@pytest.mark.parametrize("url", ["largeUrl", "download"])
def test_files_carry_a_strong_etag_and_answer_304(api, record, url):
    path = record[url] if url != "download" else f"/api/images/{record['contentImageId']}/large"
    first = api.get(path)
    etag = first.headers["ETag"]
    assert etag.startswith('"')
    assert not etag.startswith("W/")
    again = api.get(path, headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.data == b""
    assert api.get(path, headers={"If-None-Match": '"other"'}).status_code == 200


def test_public_images_are_publicly_cacheable(api, record):
    assert api.get(record["smallUrl"]).headers["Cache-Control"] == "public, max-age=3600"


def test_images_of_a_private_parent_are_cached_privately(api, alice):
    note = make_note(alice, visibility=NoteVisibility.PRIVATE)
    created = upload(api.as_user(alice), f"/api/images/notes/{note.id}").get_json()["image"]
    assert created["noteId"] == str(note.id)
    assert created["targetType"] == 1
    response = api.as_user(alice).get(created["smallUrl"])
    assert response.headers["Cache-Control"] == "private, max-age=3600"


@pytest.mark.parametrize(
    "path",
    [
        "/Images/Large/{guid}-612.jpg",
        "/Images/Huge/{guid}-1024.jpg",
        "/Images/Large/not-a-guid-1024.jpg",
        "/api/images/{guid}/huge",
    ],
)
def test_malformed_file_names_are_404(api, record, path):
    assert_problem(api.get(path.format(guid=record["contentImageId"])), 404)


def test_a_failed_file_write_leaves_no_row_and_no_files(api, alice, image_files, monkeypatch):
    from app.storage.images import LocalImageStore

    real_put = LocalImageStore.put
    calls = []

    def failing_put(self, key, data):
        calls.append(key)
        if len(calls) == 3:
            raise OSError("disk full")
        real_put(self, key, data)

    monkeypatch.setattr(LocalImageStore, "put", failing_put)
    response = upload(api.as_user(alice), "/api/images/profiles")
    assert response.status_code == 500
    assert image_files() == []
    assert count_rows(ContentImage) == 0


def test_a_failed_commit_leaves_no_files(api, alice, image_files, monkeypatch):
    from app.extensions import db

    def failing_commit():
        raise RuntimeError("database went away")

    monkeypatch.setattr(db.session, "commit", failing_commit)
    response = upload(api.as_user(alice), "/api/images/profiles")
    monkeypatch.undo()
    assert response.status_code == 500
    assert image_files() == []
    assert count_rows(ContentImage) == 0
