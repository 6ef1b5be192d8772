"""A trackable's photos on its public page: each uploaded image as a
lazy `<img>` with its variants in `srcset` and its box sized, the files served with the
image route's visibility check and cache headers; none for a page the visitor may not
see."""

from __future__ import annotations

import re

from app.models.trackable import TrackableVisibility
from tests.api.images.samples import sample
from tests.factories import make_trackable
from tests.uploads import upload
from tests.web.conftest import text_of

IMG = re.compile(r"<img ([^>]*)>")


def attributes(tag: str) -> dict[str, str]:
    return dict(re.findall(r'([a-z-]+)="([^"]*)"', tag))


def test_an_uploaded_photo_shows_lazily_with_its_variants(api, owner, trackable):
    uploaded = upload(
        api.as_user(owner),
        f"/api/images/trackables/{trackable.id}",
        sample("JPEG", width=1600, height=1200),
    )
    assert uploaded.status_code == 201, uploaded.get_data(as_text=True)
    image = uploaded.get_json()["image"]
    page = text_of(api.get(f"/de/trackables/{trackable.public_code}"))
    (tag,) = IMG.findall(page)
    found = attributes(tag)
    assert found["src"] == image["smallUrl"]
    assert found["loading"] == "lazy"
    assert (found["width"], found["height"]) == ("306", "230")  # 1600x1200 fitted
    assert found["srcset"] == (
        f"{image['smallUrl']} 306w, {image['mediumUrl']} 612w, {image['largeUrl']} 1024w"
    )
    assert found["alt"] == "Foto 1 von Blue bug"
    assert f'href="{image["largeUrl"]}"' in page
    for url in (image["smallUrl"], image["mediumUrl"], image["largeUrl"]):
        served = api.get(url)
        assert served.status_code == 200
        assert served.mimetype == "image/jpeg"
        assert "public" in served.headers["Cache-Control"]


def test_a_small_original_is_never_enlarged(api, owner, trackable):
    upload(
        api.as_user(owner),
        f"/api/images/trackables/{trackable.id}",
        sample("JPEG", width=200, height=100),
    )
    (tag,) = IMG.findall(text_of(api.get(f"/en/trackables/{trackable.public_code}")))
    found = attributes(tag)
    assert (found["width"], found["height"]) == ("200", "100")
    assert found["srcset"] == f"{found['src']} 200w"  # its variants are all 200 wide


def test_no_photos_no_section(api, trackable):
    page = text_of(api.get(f"/en/trackables/{trackable.public_code}"))
    assert 'id="photos"' not in page
    assert IMG.findall(page) == []


def test_a_hidden_trackables_photo_is_not_served(api, owner):
    hidden = make_trackable(owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    image = upload(
        api.as_user(owner), f"/api/images/trackables/{hidden.id}", sample("JPEG")
    ).get_json()["image"]
    assert api.get(f"/en/trackables/{hidden.public_code}").status_code == 404
    assert api.get(image["smallUrl"]).status_code == 404
    seen = api.as_user(owner).get(image["smallUrl"])
    assert seen.status_code == 200
    assert "private" in seen.headers["Cache-Control"]
