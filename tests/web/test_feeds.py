"""The Atom feeds of a trackable and of a group (app/web/feeds.py): valid
Atom with stable entry ids, only what an anonymous viewer sees, 404 like the public page,
linked from the public page, conditional GET."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import timedelta

import pytest
from defusedxml.ElementTree import fromstring

from app.extensions import db
from app.models.base import utcnow
from app.models.enums import NoteVisibility
from app.models.trackable import TrackableComment, TrackableVisibility
from app.services.trackables.journey import recording as journey
from tests.factories import codes_of, make_group, make_note, make_trackable, make_user
from tests.web.conftest import Finder, text_of

NS = {"a": "http://www.w3.org/2005/Atom"}
BASE = "https://notes.example"


@pytest.fixture
def app_overrides() -> dict:
    return {"PUBLIC_BASE_URL": BASE}


@pytest.fixture
def trackable(owner):
    """The page tests' trackable, activated a day ago (the activation is an entry)."""
    return make_trackable(
        owner,
        name="Blue bug",
        description="A blue toy bug travelling from lake to lake.",
        status_message="Heading north",
        visibility=TrackableVisibility.ALWAYS_VISIBLE,
        activated_utc=utcnow() - timedelta(days=1),
    )


def record(trackable, latitude: float, longitude: float, name: str = "Ann") -> None:
    journey.record_stop(
        trackable,
        latitude=latitude,
        longitude=longitude,
        created_by=None,
        display_name=name,
        is_anonymous=True,
    )
    db.session.commit()


def write_comment(trackable, body: str) -> None:
    db.session.add(
        TrackableComment(
            trackable_id=trackable.id,
            author_user_id=None,
            author_display_name="Finder",
            body=body,
            created_utc=utcnow(),
        )
    )
    db.session.commit()


def parsed(response) -> ET.Element:
    assert response.status_code == 200, text_of(response)
    assert response.headers["Content-Type"] == "application/atom+xml; charset=utf-8"
    root = fromstring(response.data)
    assert root.tag == "{http://www.w3.org/2005/Atom}feed"
    for required in ("a:id", "a:title", "a:updated"):
        assert root.findtext(required, None, NS), required
    for entry in root.findall("a:entry", NS):
        for required in ("a:id", "a:title", "a:updated", "a:summary"):
            assert entry.findtext(required, None, NS), required
        link = entry.find("a:link[@rel='alternate']", NS)
        assert link is not None
        assert link.get("href", "").startswith(f"{BASE}/")
    return root


def titles(root: ET.Element) -> list[str]:
    return [entry.findtext("a:title", "", NS) for entry in root.findall("a:entry", NS)]


def test_a_trackable_feed_holds_its_stops_comments_and_activation(api, trackable, finder):
    record(trackable, 47.3769, 8.5417, "Ann")
    assert finder.post("find", {"body": "Found it by the lake"}).status_code == 303
    response = api.get(f"/en/trackables/{trackable.public_code}/feed.atom")
    root = parsed(response)
    assert root.findtext("a:title", "", NS) == "Blue bug"
    self_link = root.find("a:link[@rel='self']", NS)
    assert self_link is not None
    assert self_link.get("href") == f"{BASE}/en/trackables/{trackable.public_code}/feed.atom"
    assert root.findtext("a:id", "", NS) == f"urn:uuid:{trackable.id}"
    found = titles(root)
    assert found[0] == "Blue bug: comment by Anonymous finder"  # newest first
    assert any(title.startswith("Blue bug: journey stop at") for title in found)
    assert found[-1] == "Blue bug was activated"
    assert "Found it by the lake" in text_of(response)
    page = f"{BASE}/en/trackables/{trackable.public_code}"
    hrefs = {link.get("href") for link in root.findall("a:entry/a:link", NS)}
    assert {f"{page}#comments", f"{page}#journey", f"{page}#top"} <= hrefs


def test_entry_ids_are_stable_and_unique_across_requests(api, trackable):
    record(trackable, 47.1, 8.1)
    write_comment(trackable, "Hello")
    url = f"/en/trackables/{trackable.public_code}/feed.atom"
    first = [e.findtext("a:id", "", NS) for e in parsed(api.get(url)).findall("a:entry", NS)]
    record(trackable, 47.2, 8.2)
    second = [e.findtext("a:id", "", NS) for e in parsed(api.get(url)).findall("a:entry", NS)]
    assert len(first) == 3
    assert len(set(second)) == 4
    assert set(first) < set(second)
    assert all(entry_id.startswith("urn:uuid:") for entry_id in second)
    german = parsed(api.get(url.replace("/en/", "/de/")))
    assert {e.findtext("a:id", "", NS) for e in german.findall("a:entry", NS)} == set(second)


def test_a_feed_is_in_its_language(api, trackable):
    record(trackable, 47.1, 8.1)
    root = parsed(api.get(f"/de/trackables/{trackable.public_code}/feed.atom"))
    assert "Blue bug wurde aktiviert" in titles(root)


def test_a_feed_never_shows_secrets_or_hidden_content(api, trackable, owner):
    note = make_note(
        owner,
        title="Secret garden",
        visibility=NoteVisibility.PRIVATE,
        latitude=47.1,
        longitude=8.1,
    )
    journey.record_stop(
        trackable,
        latitude=47.1,
        longitude=8.1,
        created_by=owner,
        display_name="Olga O.",
        is_anonymous=False,
        note_id=note.id,
    )
    db.session.commit()
    body = text_of(api.as_user(owner).get(f"/en/trackables/{trackable.public_code}/feed.atom"))
    assert "Secret garden" not in body
    for code in codes_of(trackable):
        assert code not in body


def test_a_hidden_unknown_or_secret_coded_trackable_has_no_feed(api, owner, trackable):
    hidden = make_trackable(owner, name="Quiet one", visibility=TrackableVisibility.ONCE_ACCESSED)
    feed = f"/en/trackables/{hidden.public_code}/feed.atom"
    assert api.get(feed).status_code == 404
    # Neither its manager nor a holder of its session widen a feed: it is the anonymous view.
    assert api.as_user(owner).get(feed).status_code == 404
    Finder(api, hidden).scan()
    assert api.get(f"/en/trackables/{hidden.public_code}").status_code == 200
    response = api.get(feed)
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    assert "Quiet one" not in text_of(response)
    assert api.get("/en/trackables/LN-ZZZZZZ/feed.atom").status_code == 404
    unactivated = make_trackable(None, name="In the box")
    assert api.get(f"/en/trackables/{unactivated.public_code}/feed.atom").status_code == 404
    secret = codes_of(trackable)[0]
    response = api.get(f"/en/trackables/{secret}/feed.atom")
    assert response.status_code == 404
    assert secret not in text_of(response)
    assert api.get(f"/fr/trackables/{trackable.public_code}/feed.atom").status_code == 404


def test_a_typed_form_of_the_code_redirects_to_the_canonical_feed(api, owner):
    make_trackable(owner, public_code="LN-5V10A0")
    response = api.get("/en/trackables/ln-sv1oao/feed.atom")
    assert response.status_code == 301
    assert response.headers["Location"] == "/en/trackables/LN-5V10A0/feed.atom"


def test_the_public_page_links_its_feeds(api, owner, trackable):
    group = make_group(owner, name="Lake bugs")
    trackable.group = group
    db.session.commit()
    page = text_of(api.get(f"/en/trackables/{trackable.public_code}"))
    assert (
        '<link rel="alternate" type="application/atom+xml" title="Blue bug (Atom feed)" '
        f'href="{BASE}/en/trackables/{trackable.public_code}/feed.atom">'
    ) in page
    assert f'href="{BASE}/en/trackables/groups/{group.id}/feed.atom"' in page


def test_a_page_shown_only_to_its_holder_links_no_feed(api, owner):
    hidden = make_trackable(owner, name="Quiet one", visibility=TrackableVisibility.ONCE_ACCESSED)
    page = text_of(api.as_user(owner).get(f"/en/trackables/{hidden.public_code}"))
    assert "Quiet one" in page
    assert "application/atom+xml" not in page


def test_a_group_feed_merges_its_public_items_only(api, owner, trackable):
    group = make_group(owner, name="Lake bugs")
    hidden = make_trackable(owner, name="Quiet one", visibility=TrackableVisibility.ONCE_ACCESSED)
    other = make_trackable(owner, name="Red bug", visibility=TrackableVisibility.ALWAYS_VISIBLE)
    for item in (trackable, hidden, other):
        item.group = group
    db.session.commit()
    record(trackable, 47.1, 8.1)
    write_comment(other, "Red bug says hi")
    write_comment(hidden, "Whispered words")
    record(hidden, 46.0, 7.0, "Hidden finder")
    response = api.as_user(owner).get(f"/en/trackables/groups/{group.id}/feed.atom")
    root = parsed(response)
    assert root.findtext("a:title", "", NS) == "Group Lake bugs"
    assert root.findtext("a:id", "", NS) == f"urn:uuid:{group.id}"
    found = titles(root)
    assert found[0] == "Red bug: comment by Finder"
    assert any(title.startswith("Blue bug: journey stop") for title in found)
    body = text_of(response)
    assert "Red bug says hi" in body
    for never in ("Whispered words", "Quiet one", "Hidden finder", *codes_of(hidden)):
        assert never not in body


def test_a_group_without_public_items_has_no_feed(api, owner):
    group = make_group(owner, name="Quiet bugs")
    hidden = make_trackable(owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    hidden.group = group
    db.session.commit()
    feed = f"/en/trackables/groups/{group.id}/feed.atom"
    assert api.get(feed).status_code == 404
    assert api.as_user(owner).get(feed).status_code == 404
    assert api.get(f"/en/trackables/groups/{make_user('x').id}/feed.atom").status_code == 404


def test_a_feed_answers_a_conditional_get_with_304(api, trackable):
    url = f"/en/trackables/{trackable.public_code}/feed.atom"
    first = api.get(url)
    etag, modified = first.headers["ETag"], first.headers["Last-Modified"]
    assert first.headers["Cache-Control"] == "public, no-cache"
    assert api.get(url).headers["ETag"] == etag  # the same bytes
    again = api.get(url, headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.data == b""
    assert api.get(url, headers={"If-Modified-Since": modified}).status_code == 304
    write_comment(trackable, "News")
    changed = api.get(url, headers={"If-None-Match": etag})
    assert changed.status_code == 200
    assert changed.headers["ETag"] != etag
