"""A photo with a find: the "log a find" form takes an optional photo,
attached through the images service to the comment it writes (or the stop, when there is
no comment), screened and stripped of its metadata; a refused photo saves nothing and
says why in the page's language; the public page and the landing's notice show each
entry's photos, lazily, from the variant files with the image route's cache headers."""

from __future__ import annotations

import io
import re

from sqlalchemy import select

from app.extensions import db
from app.models.image import ContentImage, ImageTarget
from app.models.trackable import JourneyStop, TrackableComment, TrackableVisibility
from tests.api.images.samples import jpeg_with_metadata, sample
from tests.factories import count_rows, make_trackable, make_user
from tests.web.conftest import Finder, errors_of, form_fields, text_of

IMG = re.compile(r"<img ([^>]*)>")
DMS = {"latitude": "47.3769", "longitude": "8.5417"}


def photo(data: bytes | None = None, name: str = "find.jpg") -> dict[str, tuple]:
    return {"photo": (io.BytesIO(sample("JPEG") if data is None else data), name)}


def attributes(tag: str) -> dict[str, str]:
    return dict(re.findall(r'([a-z-]+)="([^"]*)"', tag))


def section(page: str, marker: str) -> str:
    start = page.index(marker)
    return page[start : page.index("</li>", start)]


def find_section(response) -> str:
    page = text_of(response)
    start = page.index('<section id="find"')
    return page[start : page.index("</section>", start)]


def test_the_form_sends_files(api, finder):
    form = find_section(api.get(finder.landing))
    assert 'enctype="multipart/form-data"' in form
    assert 'type="file"' in form
    assert 'name="photo"' in form


def test_a_photo_goes_with_the_comment_without_its_metadata(api, finder):
    response = finder.post("find", {"body": "On a bench", **DMS, **photo(jpeg_with_metadata())})
    assert response.status_code == 303, text_of(response)
    comment = db.session.scalars(select(TrackableComment)).one()
    image = db.session.scalars(select(ContentImage)).one()
    assert (image.target, image.parent_id) == (ImageTarget.TRACKABLE_COMMENT, comment.id)
    assert comment.writer_session_id is not None  # the finder's proof, from its session
    large = api.get(f"/api/images/{image.id}/large")
    assert large.status_code == 200
    assert b"SecretCam" not in large.data
    assert b"Exif" not in large.data

    notice = find_section(api.get(finder.landing))
    (tag,) = IMG.findall(notice)
    assert attributes(tag)["loading"] == "lazy"

    page = text_of(api.get(finder.public))
    (tag,) = IMG.findall(section(page, f'id="comment-{comment.id}"'))
    found = attributes(tag)
    assert found["src"] == f"/Images/Small/{image.id}-306.jpg"
    assert found["loading"] == "lazy"
    assert found["alt"] == "Photo by Anonymous finder (1)"
    assert "-612.jpg 612w" in found["srcset"]
    assert IMG.findall(section(page, 'id="stop-')) == []  # the stop has none
    served = api.get(found["src"])
    assert served.status_code == 200
    assert "public" in served.headers["Cache-Control"]


def test_a_photo_with_only_a_stop_goes_with_the_stop_in_german(api, trackable):
    finder = Finder(api, trackable, lang="de")
    finder.scan()
    response = finder.post("find", {"displayName": "Kim", **DMS, **photo()})
    assert response.status_code == 303, text_of(response)
    stop = db.session.scalars(select(JourneyStop)).one()
    image = db.session.scalars(select(ContentImage)).one()
    assert (image.target, image.parent_id) == (ImageTarget.JOURNEY_STOP, stop.id)
    assert "Dein Foto des Funds" in find_section(api.get(finder.landing))
    page = text_of(api.get(finder.public))
    (tag,) = IMG.findall(section(page, f'id="stop-{stop.id}"'))
    assert attributes(tag)["alt"] == "Foto von Kim (1)"


def test_a_signed_in_finders_photo_is_theirs(api, finder):
    ann = make_user("ann", display_name="Ann A.")
    signed_in = Finder(api.as_user(ann), finder.trackable)
    assert signed_in.post("find", {"body": "Hello", **photo()}).status_code == 303
    assert db.session.scalars(select(ContentImage)).one().uploaded_by_user_id == ann.id


def test_a_form_sent_twice_stores_its_photo_once(api, finder):
    fields = form_fields(api.get(finder.landing))
    url = f"{finder.landing}/find"
    for _ in range(2):
        response = api.post(url, data={**fields, "body": "Twice", **photo()})
        assert response.status_code == 303
    assert count_rows(TrackableComment) == 1
    assert count_rows(ContentImage) == 1


def test_a_file_that_is_no_image_saves_nothing_and_says_why(api, finder):
    response = finder.post("find", {"body": "Kept text", **photo(b"just text", "notes.txt")})
    assert response.status_code == 400
    errors = errors_of(response)
    assert "Nothing was saved: check the photo, choose it again (or none), then send the form." in (
        errors
    )
    assert (
        "This photo could not be used: choose a JPEG, PNG, WebP, GIF or HEIC image of at most "
        "20 MB and 60 megapixels."
    ) in errors
    assert "Kept text" in find_section(response)
    assert 'aria-invalid="true"' in find_section(response)
    assert count_rows(TrackableComment) == 0
    assert count_rows(ContentImage) == 0


def test_a_refused_photo_is_explained_in_german(api, trackable):
    finder = Finder(api, trackable, lang="de")
    finder.scan()
    response = finder.post("find", {"body": "Am See", **photo(b"kein Bild")})
    assert response.status_code == 400
    errors = errors_of(response)
    assert (
        "Dieses Foto kann nicht verwendet werden: Wähle ein JPEG-, PNG-, WebP-, GIF- oder "
        "HEIC-Bild mit höchstens 20 MB und 60 Megapixeln."
    ) in errors
    assert any(error.startswith("Nichts wurde gespeichert") for error in errors)
    assert count_rows(TrackableComment) == 0


def test_a_photo_over_the_size_limit_is_refused_by_the_form(app, api, trackable):
    app.config["IMAGE_MAX_BYTES"] = 300 * 1024  # small: the test body stays in memory
    for lang, words in (
        ("en", "The photo may be at most 300 KB."),
        ("de", "Das Foto darf höchstens 300 KB groß sein."),
    ):
        finder = Finder(api, trackable, lang=lang)
        finder.scan()
        response = finder.post("find", {"body": "Big", **photo(b"\xff" * (300 * 1024 + 1))})
        assert response.status_code == 400
        assert words in errors_of(response)
    assert count_rows(TrackableComment) == 0
    assert count_rows(ContentImage) == 0


def test_too_many_photos_from_one_session_is_a_429_in_words(app, api, finder):
    app.config["FINDER_PHOTOS_PER_SESSION"] = 1
    assert finder.post("find", {"body": "First", **photo()}).status_code == 303
    response = finder.post("find", {"body": "Second", **photo()})
    assert response.status_code == 429
    assert int(response.headers["Retry-After"]) > 0
    assert "Many photos were sent from here in a short time: send this one later." in (
        errors_of(response)
    )
    assert count_rows(TrackableComment) == 1  # the second find was not saved
    assert finder.post("find", {"body": "Second, no photo"}).status_code == 303


def test_a_hidden_trackables_finder_photos_stay_hidden(app, api, owner):
    hidden = make_trackable(owner, name="Shy bug", visibility=TrackableVisibility.ONCE_ACCESSED)
    finder = Finder(api, hidden)
    finder.scan()
    assert finder.post("find", {"body": "Psst", **photo()}).status_code == 303
    image = db.session.scalars(select(ContentImage)).one()
    url = f"/Images/Small/{image.id}-306.jpg"
    assert IMG.findall(text_of(api.get(finder.public)))  # the holder sees it
    seen = api.get(url)
    assert seen.status_code == 200
    assert "private" in seen.headers["Cache-Control"]
    stranger = app.test_client()
    assert stranger.get(f"/en/trackables/{hidden.public_code}").status_code == 404
    assert stranger.get(url).status_code == 404
