"""Finders' photos (docs/contract/images.md, Finders' photos): images of a
trackable comment (targetType 5) or journey stop (6), uploaded through the images routes
and pipeline by the entry's writer only (a signed-in author by account, an anonymous one
by the access session it wrote with), removed by the writer or the trackable's owner
side, seen with the trackable, capped per entry and, for anonymous finders, per session
and per network; an entry's deletion takes them along."""

from __future__ import annotations

import io
import uuid
from typing import Any

import pytest
from PIL import Image

from app.extensions import db
from app.models.image import ContentImage
from app.models.trackable import TrackableComment, TrackableVisibility
from tests.api.images.samples import jpeg_with_metadata, sample
from tests.conftest import ApiClient, assert_problem
from tests.factories import (
    codes_of,
    count_rows,
    make_note,
    make_team,
    make_trackable,
    make_user,
)
from tests.uploads import upload


@pytest.fixture
def owner(app):
    return make_user("olga")


@pytest.fixture
def trackable(owner):
    return make_trackable(owner, name="Blue bug", visibility=TrackableVisibility.ALWAYS_VISIBLE)


def browser(app) -> ApiClient:
    """A browser of its own: its own cookies, so its own access sessions."""
    return ApiClient(app.test_client())


def holding(app, trackable) -> ApiClient:
    """A browser that looked the trackable's secret up: it holds an access session."""
    finder = browser(app)
    response = finder.post("/api/trackables/lookup", json={"code": codes_of(trackable)[0]})
    assert response.get_json()["usesSecretAccess"] is True
    return finder


def comment(client: ApiClient, trackable, **extra: Any) -> str:
    response = client.post(
        f"/api/trackables/{trackable.id}/comments", json={"body": "Found it", **extra}
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()["trackableCommentId"]


def stop(client: ApiClient, trackable) -> str:
    response = client.post(
        f"/api/trackables/{trackable.id}/journey-stops", json={"latitude": 47.1, "longitude": 8.2}
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()["journeyStopId"]


def comment_photos(comment_id: str) -> str:
    return f"/api/images/trackable-comments/{comment_id}"


def stop_photos(stop_id: str) -> str:
    return f"/api/images/journey-stops/{stop_id}"


# --- who may add -----------------------------------------------------------------------


def test_an_anonymous_finder_adds_a_photo_to_its_comment(app, trackable):
    finder = holding(app, trackable)
    comment_id = comment(finder, trackable)
    response = upload(finder, comment_photos(comment_id), sample("JPEG", 1600, 1200))
    assert response.status_code == 201, response.get_data(as_text=True)
    record = response.get_json()["image"]
    assert record["targetType"] == 5
    assert record["trackableCommentId"] == comment_id
    assert "trackableId" not in record
    listed = browser(app).get(comment_photos(comment_id)).get_json()
    assert [image["contentImageId"] for image in listed] == [record["contentImageId"]]
    stored = db.session.get(ContentImage, uuid.UUID(record["contentImageId"]))
    assert stored.uploaded_by_user_id is None


def test_an_anonymous_finder_adds_a_photo_to_its_stop(app, trackable):
    finder = holding(app, trackable)
    stop_id = stop(finder, trackable)
    response = upload(finder, stop_photos(stop_id))
    assert response.status_code == 201, response.get_data(as_text=True)
    record = response.get_json()["image"]
    assert (record["targetType"], record["journeyStopId"]) == (6, stop_id)


def test_a_signed_in_author_adds_photos_to_its_comment_and_stop(app, trackable):
    ann = make_user("ann")
    author = browser(app).as_user(ann)
    for url in (comment_photos(comment(author, trackable)), stop_photos(stop(author, trackable))):
        response = upload(author, url)
        assert response.status_code == 201, response.get_data(as_text=True)
        image = db.session.get(
            ContentImage, uuid.UUID(response.get_json()["image"]["contentImageId"])
        )
        assert image.uploaded_by_user_id == ann.id


def test_a_signed_in_author_on_another_device_still_adds(app, trackable):
    ann = make_user("ann")
    comment_id = comment(browser(app).as_user(ann), trackable)
    assert upload(browser(app).as_user(ann), comment_photos(comment_id)).status_code == 201


@pytest.mark.parametrize("who", ["other_finder", "no_session", "stranger", "owner", "admin"])
def test_nobody_but_the_writer_adds_a_photo(app, owner, who):
    tara = make_user("tara")
    trackable = make_trackable(owner, team_id=make_team(tara, members=(owner,)).id)
    finder = holding(app, trackable)
    targets = [comment_photos(comment(finder, trackable)), stop_photos(stop(finder, trackable))]
    callers = {
        "other_finder": lambda: holding(app, trackable),
        "no_session": lambda: browser(app),
        "stranger": lambda: browser(app).as_user(make_user("sam")),
        "owner": lambda: browser(app).as_user(owner),
        "admin": lambda: browser(app).as_user(tara),
    }
    caller = callers[who]()
    for url in targets:
        assert_problem(upload(caller, url), 403, code="image_change_forbidden")
    assert count_rows(ContentImage) == 0


def test_a_finder_who_sent_the_code_without_a_session_cannot_add(app, trackable):
    finder = browser(app)
    comment_id = comment(finder, trackable, accessCode=codes_of(trackable)[0])
    assert_problem(upload(finder, comment_photos(comment_id)), 403, code="image_change_forbidden")


def test_ending_the_session_ends_the_finders_proof(app, trackable):
    finder = holding(app, trackable)
    comment_id = comment(finder, trackable)
    assert finder.delete(f"/api/trackables/active/{trackable.id}").status_code == 204
    holding_again = finder.post(
        "/api/trackables/lookup", json={"code": codes_of(trackable)[0]}
    ).get_json()
    assert holding_again["usesSecretAccess"] is True  # a new session, not the one it wrote with
    assert_problem(upload(finder, comment_photos(comment_id)), 403, code="image_change_forbidden")


def test_a_hidden_trackables_entries_take_no_photos_from_strangers(app, owner):
    hidden = make_trackable(owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    finder = holding(app, hidden)
    comment_id, stop_id = comment(finder, hidden), stop(finder, hidden)
    stranger = browser(app).as_user(make_user("sam"))
    assert_problem(
        upload(stranger, comment_photos(comment_id)), 404, code="trackable_comment_not_found"
    )
    assert_problem(
        upload(stranger, stop_photos(stop_id)), 404, code="trackable_journey_stop_not_found"
    )
    assert upload(finder, comment_photos(comment_id)).status_code == 201  # it still holds it


def test_an_unknown_entry_is_404(app, trackable):
    finder = holding(app, trackable)
    assert_problem(
        upload(finder, comment_photos(trackable.id)), 404, code="trackable_comment_not_found"
    )


# --- the pipeline ----------------------------------------------------------------------


def test_exif_and_gps_are_gone_from_every_stored_variant(app, trackable):
    finder = holding(app, trackable)
    record = upload(
        finder, comment_photos(comment(finder, trackable)), jpeg_with_metadata()
    ).get_json()["image"]
    for name in ("thumbnail", "small", "medium", "large"):
        response = finder.get(f"/api/images/{record['contentImageId']}/{name}")
        assert response.status_code == 200
        image = Image.open(io.BytesIO(response.data))
        assert not image.getexif()
        assert not image.getexif().get_ifd(0x8825)  # no GPS block
        assert "exif" not in image.info
        assert "xmp" not in image.info
        assert b"SecretCam" not in response.data
        assert b"Exif" not in response.data


def test_a_broken_file_is_refused_and_nothing_is_stored(app, trackable, image_files):
    finder = holding(app, trackable)
    response = upload(finder, comment_photos(comment(finder, trackable)), b"not an image")
    assert_problem(response, 400, code="image_rejected")
    assert count_rows(ContentImage) == 0
    assert image_files() == []


# --- who may delete --------------------------------------------------------------------


def test_the_anonymous_writer_deletes_its_photo_and_the_files_go(app, trackable, image_files):
    finder = holding(app, trackable)
    image_id = upload(finder, comment_photos(comment(finder, trackable))).get_json()["image"][
        "contentImageId"
    ]
    assert len(image_files()) == 4
    assert finder.delete(f"/api/images/{image_id}").status_code == 204
    assert count_rows(ContentImage) == 0
    assert image_files() == []


@pytest.mark.parametrize("manager", ["owner", "team_admin"])
def test_the_trackables_owner_side_deletes_a_finders_photo(app, owner, manager):
    tara = make_user("tara")
    team = make_team(tara, members=(owner,))
    trackable = make_trackable(owner, team_id=team.id)
    finder = holding(app, trackable)
    image_id = upload(finder, stop_photos(stop(finder, trackable))).get_json()["image"][
        "contentImageId"
    ]
    who = {"owner": owner, "team_admin": tara}[manager]
    assert browser(app).as_user(who).delete(f"/api/images/{image_id}").status_code == 204
    assert count_rows(ContentImage) == 0


def test_others_may_not_delete_a_finders_photo(app, owner, trackable):
    finder = holding(app, trackable)
    image_id = upload(finder, comment_photos(comment(finder, trackable))).get_json()["image"][
        "contentImageId"
    ]
    for caller in (holding(app, trackable), browser(app).as_user(make_user("sam"))):
        response = caller.delete(f"/api/images/{image_id}")
        assert_problem(response, 403, code="image_change_forbidden")
    assert count_rows(ContentImage) == 1


def test_without_a_token_only_a_finders_photo_can_be_deleted(app, owner, trackable):
    note = make_note(owner)
    note_image = upload(browser(app).as_user(owner), f"/api/images/notes/{note.id}").get_json()
    finder = holding(app, trackable)
    response = finder.delete(f"/api/images/{note_image['image']['contentImageId']}")
    assert_problem(response, 401, code="authentication_required")
    assert_problem(finder.delete(f"/api/images/{trackable.id}"), 401)  # no such image


# --- caps ------------------------------------------------------------------------------


def test_an_entry_holds_at_most_four_photos(app, trackable):
    finder = holding(app, trackable)
    url = comment_photos(comment(finder, trackable))
    for _ in range(4):
        assert upload(finder, url).status_code == 201
    assert_problem(upload(finder, url), 400, code="image_limit_reached")


def test_an_anonymous_finders_session_is_capped_with_a_429(app, trackable):
    app.config["FINDER_PHOTOS_PER_SESSION"] = 2
    finder = holding(app, trackable)
    first, second = comment(finder, trackable), comment(finder, trackable)
    assert upload(finder, comment_photos(first)).status_code == 201
    assert upload(finder, comment_photos(second)).status_code == 201
    response = upload(finder, comment_photos(second))
    body = assert_problem(response, 429, code="finder_photo_limit_reached")
    assert int(response.headers["Retry-After"]) > 0
    assert "session" in body["detail"]
    other = holding(app, trackable)  # another session, same network: still room
    assert upload(other, comment_photos(comment(other, trackable))).status_code == 201


def test_anonymous_finders_of_one_network_share_a_cap(app, trackable):
    app.config["FINDER_PHOTOS_PER_NETWORK"] = 2
    near, far = {"REMOTE_ADDR": "198.51.100.7"}, {"REMOTE_ADDR": "203.0.113.9"}
    uploads = []
    for _ in range(3):
        finder = holding(app, trackable)
        url = comment_photos(comment(finder, trackable))
        uploads.append(
            finder.post(
                url,
                data={"file": (io.BytesIO(sample("JPEG")), "x.jpg")},
                content_type="multipart/form-data",
                environ_base=near,
            )
        )
    assert [response.status_code for response in uploads] == [201, 201, 429]
    body = assert_problem(uploads[2], 429, code="finder_photo_limit_reached")
    assert "network" in body["detail"]
    elsewhere = holding(app, trackable)
    response = elsewhere.post(
        comment_photos(comment(elsewhere, trackable)),
        data={"file": (io.BytesIO(sample("JPEG")), "x.jpg")},
        content_type="multipart/form-data",
        environ_base=far,
    )
    assert response.status_code == 201


def test_a_signed_in_finder_spends_the_accounts_daily_budget(app, trackable):
    app.config["IMAGES_PER_USER_PER_DAY"] = 1
    author = browser(app).as_user(make_user("ann"))
    url = comment_photos(comment(author, trackable))
    assert upload(author, url).status_code == 201
    assert_problem(upload(author, url), 429, code="image_daily_limit_reached")


# --- visibility follows the entry ------------------------------------------------------


def test_a_hidden_trackables_finder_photos_are_not_shown(app, owner):
    hidden = make_trackable(owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    finder = holding(app, hidden)
    comment_id = comment(finder, hidden)
    record = upload(finder, comment_photos(comment_id)).get_json()["image"]
    assert browser(app).get(comment_photos(comment_id)).get_json() == []
    assert_problem(browser(app).get(f"/api/images/{record['contentImageId']}/small"), 404)
    assert browser(app).get(record["smallUrl"]).status_code == 404
    seen = finder.get(record["smallUrl"])
    assert seen.status_code == 200
    assert "private" in seen.headers["Cache-Control"]
    managed = browser(app).as_user(owner).get(comment_photos(comment_id)).get_json()
    assert [image["contentImageId"] for image in managed] == [record["contentImageId"]]


def test_a_visible_trackables_finder_photos_are_public(app, trackable):
    finder = holding(app, trackable)
    record = upload(finder, stop_photos(stop(finder, trackable))).get_json()["image"]
    served = browser(app).get(record["smallUrl"])
    assert served.status_code == 200
    assert "public" in served.headers["Cache-Control"]


# --- deleting the entry takes its photos -----------------------------------------------


def test_deleting_a_comment_removes_its_photos_and_files(app, owner, trackable, image_files):
    finder = holding(app, trackable)
    gone, kept = comment(finder, trackable), comment(finder, trackable)
    upload(finder, comment_photos(gone))
    upload(finder, comment_photos(kept))
    response = browser(app).as_user(owner).delete(f"/api/trackables/{trackable.id}/comments/{gone}")
    assert response.status_code == 204
    assert count_rows(ContentImage) == 1
    assert len(image_files()) == 4
    assert count_rows(ContentImage, ContentImage.parent_id == uuid.UUID(kept)) == 1


def test_deleting_a_stop_removes_its_photos_and_files(app, owner, trackable, image_files):
    ann = make_user("ann")
    author = browser(app).as_user(ann)
    stop_id = stop(author, trackable)
    upload(author, stop_photos(stop_id))
    response = author.delete(f"/api/trackables/{trackable.id}/journey-stops/{stop_id}")
    assert response.status_code == 204
    assert count_rows(ContentImage) == 0
    assert image_files() == []


def test_deleting_the_authors_account_removes_its_entries_photos(app, owner, trackable):
    ann = make_user("ann")
    author = browser(app).as_user(ann)
    upload(author, comment_photos(comment(author, trackable)))
    upload(author, stop_photos(stop(author, trackable)))
    finder = holding(app, trackable)
    upload(finder, comment_photos(comment(finder, trackable)))  # someone else's stays
    response = author.delete("/api/account")
    assert response.status_code == 200
    assert response.get_json()["imagesDeleted"] == 2
    assert count_rows(ContentImage) == 1


def test_deleting_the_owners_account_removes_the_finders_photos_on_its_trackable(
    app, owner, trackable, image_files
):
    finder = holding(app, trackable)
    upload(finder, comment_photos(comment(finder, trackable)))
    upload(finder, stop_photos(stop(finder, trackable)))
    response = browser(app).as_user(owner).delete("/api/account")
    assert response.status_code == 200
    assert response.get_json()["imagesDeleted"] == 2
    assert count_rows(ContentImage) == 0
    assert count_rows(TrackableComment) == 0
    assert image_files() == []
