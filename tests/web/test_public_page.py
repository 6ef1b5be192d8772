"""The public trackable page GET /{lang}/trackables/{publicCode} (contract: website routes;
app/web/public.py): what it shows in each language, who sees it (404 otherwise), the
journey map and list, the comments, the link with the public code; nothing secret."""

from __future__ import annotations

import html
import json
import re

import pytest

from app.extensions import db
from app.models.enums import NoteVisibility
from app.models.trackable import TrackableVisibility
from app.services.trackables.journey import recording as journey
from tests.factories import codes_of, make_group, make_note, make_trackable, make_user
from tests.web.conftest import Finder, text_of


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


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("en", ["Journey", "Comments", "No comments yet.", "Status:"]),
        ("de", ["Reise", "Kommentare", "Noch keine Kommentare.", "Status:"]),
    ],
)
def test_the_public_page_shows_the_trackable_in_each_language(api, trackable, lang, words):
    response = api.get(f"/{lang}/trackables/{trackable.public_code}")
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    page = text_of(response)
    assert f'<html lang="{lang}">' in page
    for expected in ["Blue bug", "Heading north", "A blue toy bug travelling", *words]:
        assert expected in page
    assert trackable.public_code in page


def test_the_page_links_to_itself_in_the_other_language(api, trackable):
    page = text_of(api.get(f"/en/trackables/{trackable.public_code}"))
    assert f'href="/de/trackables/{trackable.public_code}"' in page


@pytest.mark.parametrize("lang", ["fr", "EN"])
def test_a_language_the_site_does_not_have_is_a_404_page(api, trackable, lang):
    response = api.get(f"/{lang}/trackables/{trackable.public_code}")
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    assert "Trackable not found" in text_of(response)


def test_api_paths_are_never_taken_for_pages(api, trackable):
    """A language is two letters: /api/trackables/... stays the API's (problem details)."""
    response = api.get("/api/trackables/not-a-guid")
    assert response.status_code == 404
    assert response.mimetype == "application/problem+json"


def test_an_unknown_code_is_a_404_page_in_the_page_language(api, trackable):
    response = api.get("/de/trackables/LN-ZZZZZZ")
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    page = text_of(response)
    assert "Trackable nicht gefunden" in page
    assert 'action="/trackable"' in page  # the lookup form


def test_a_hidden_trackable_is_a_404_page_for_strangers_and_shown_to_its_holder(api, owner):
    hidden = make_trackable(owner, name="Quiet one", visibility=TrackableVisibility.ONCE_ACCESSED)
    page = f"/en/trackables/{hidden.public_code}"
    assert api.get(page).status_code == 404
    assert api.as_user(make_user("sam")).get(page).status_code == 404
    assert api.as_user(owner).get(page).status_code == 200
    Finder(api, hidden).scan()
    response = api.get(page)
    assert response.status_code == 200
    assert "Quiet one" in text_of(response)


def test_an_unactivated_trackable_has_no_public_page(api):
    unactivated = make_trackable(None, name="Still in the box")
    assert api.get(f"/en/trackables/{unactivated.public_code}").status_code == 404


@pytest.mark.parametrize("kind", [0, 1])
def test_a_secret_code_or_qr_token_is_no_public_code_and_is_not_echoed(api, trackable, kind):
    code = codes_of(trackable)[kind]
    response = api.get(f"/en/trackables/{code}")
    assert response.status_code == 404
    assert code not in text_of(response)


def test_a_typed_form_of_the_public_code_redirects_to_the_canonical_page(api, owner):
    make_trackable(owner, public_code="LN-5V10A0")
    response = api.get("/de/trackables/ln-sv1oao")
    assert response.status_code == 301
    assert response.headers["Location"] == "/de/trackables/LN-5V10A0"


def test_the_journey_is_a_map_of_hosted_tiles_and_a_list_oldest_first(api, trackable):
    record(trackable, 47.3769, 8.5417, "Ann")  # Zurich
    record(trackable, 48.1374, 11.5755, "Ben")  # Munich
    page = text_of(api.get(f"/en/trackables/{trackable.public_code}"))
    tiles = re.findall(r'<image href="(/maps/tiles/(\d+)/\d+/\d+\.png)"', page)
    assert tiles
    # The highest zoom (MAP_PAGE_MAX_ZOOM is the base map's 10) at which both stops fit.
    assert {int(zoom) for _, zoom in tiles} == {7}
    assert "<polyline" in page
    assert page.count('<g class="stop">') == 2
    listed = page[page.index('<ol class="stops">') :]
    assert listed.index("47.3769, 8.5417") < listed.index("48.1374, 11.5755")
    assert "Zürich" in listed  # the place name saved with the stop
    assert "47.3769, 8.5417" in listed
    assert "Ann" in listed
    assert "Ben" in listed


def test_without_script_each_stop_on_the_map_says_its_number_and_place_as_the_list_does(
    api, trackable
):
    """What docs/website.md says of the map without JavaScript: each stop a circle, its
    number and place in its tooltip, the newest filled, the list below numbering them."""
    record(trackable, 47.3769, 8.5417, "Ann")  # Zurich
    record(trackable, 48.1374, 11.5755, "Ben")  # Munich
    page = text_of(api.get(f"/en/trackables/{trackable.public_code}"))
    stops = re.findall(
        r'<g class="stop"><circle [^>]*fill="(#\w+)"[^>]*/>\s*<title>([^<]*)</title>', page
    )
    tooltips = [html.unescape(title) for _fill, title in stops]
    assert [title.split(". ", 1)[0] for title in tooltips] == ["1", "2"]
    assert [fill for fill, _title in stops] == ["#ffffff", "#b03a2e"]  # the newest filled
    listed = page[page.index('<ol class="stops">') :]
    places = [
        html.unescape(place)
        for place in re.findall(r'<li id="stop-[^"]+"><strong>([^<]*)</strong>', listed)
    ]
    assert tooltips == [f"{number}. {place}" for number, place in enumerate(places, 1)]


def test_the_pannable_map_gets_the_journey_from_data_attributes(api, trackable):
    """journey-map.js builds the Leaflet map from the figure's data (no inline script),
    with Leaflet's files from our own origin under their version."""
    record(trackable, 47.3769, 8.5417, "Ann")
    record(trackable, 48.1374, 11.5755, "Ben")
    page = text_of(api.get(f"/de/trackables/{trackable.public_code}"))
    figure = re.search(r"<figure class=\"map\" data-journey-map(.*?)>", page, re.S)
    assert figure is not None
    attributes = {
        name: html.unescape(single or double)
        for name, single, double in re.findall(
            r"""data-([a-z-]+)=(?:'([^']*)'|"([^"]*)")""", figure.group(1)
        )
    }
    stops = json.loads(attributes["stops"])
    assert [stop[:2] for stop in stops] == [[47.3769, 8.5417], [48.1374, 11.5755]]
    assert attributes["tiles"] == "/maps/tiles/{z}/{x}/{y}.png"
    assert attributes["max-zoom"] == "10"
    assert attributes["attribution"] == "Natural Earth, GeoNames"
    assert attributes["zoom-in"] == "Vergrößern"
    assert "Kartendaten: Natural Earth, GeoNames" in page
    scripts = re.findall(r'<script src="([^"]+)"', page)
    assert "/static/pages/journey-map.js" in scripts
    leaflet = [src for src in scripts if src.startswith("/static/leaflet/")]
    assert leaflet
    assert leaflet[0].endswith("/leaflet.js")
    assert scripts.index(leaflet[0]) < scripts.index("/static/pages/journey-map.js")


def test_a_stop_name_cannot_break_out_of_the_map_data(api, trackable):
    stop = journey.record_stop(
        trackable,
        latitude=1.0,
        longitude=2.0,
        created_by=None,
        display_name="Ann",
        is_anonymous=True,
    )
    stop.location_label = "Bay '><script>alert(1)</script>"
    db.session.commit()
    page = text_of(api.get(f"/en/trackables/{trackable.public_code}"))
    assert "<script>alert(1)" not in page
    stops = re.search(r"data-stops='([^']*)'", page)
    assert stops is not None
    assert json.loads(html.unescape(stops.group(1)))[0][2] == "Bay '><script>alert(1)</script>"


def test_without_stops_there_is_no_map_but_a_sentence(api, trackable):
    page = text_of(api.get(f"/de/trackables/{trackable.public_code}"))
    assert "<svg" not in page
    assert "leaflet" not in page
    assert "Noch keine Reisestationen." in page


def test_a_private_note_at_a_stop_shows_its_point_not_its_content(api, trackable, owner):
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
    page = text_of(api.get(f"/en/trackables/{trackable.public_code}"))
    assert "A note stands here that is not shown to you." in page
    assert "Secret garden" not in page
    assert "Secret garden" in text_of(
        api.as_user(owner).get(f"/en/trackables/{trackable.public_code}")
    )


def test_comments_are_listed_newest_first(api, finder):
    for body in ("First find", "Second find"):
        assert finder.post("find", {"body": body}).status_code == 303
    page = text_of(api.get(finder.public))
    assert page.index("Second find") < page.index("First find")


def test_comment_text_is_escaped(api, finder):
    finder.post("find", {"body": "<script>alert(1)</script>"})
    page = text_of(api.get(finder.public))
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_link_carries_the_public_code_when_it_opts_in(api, owner):
    opted = make_trackable(
        owner,
        external_link_url="https://example.org/items?from=tag",
        external_link_description="Our project",
        external_link_append_public_code=True,
    )
    page = text_of(api.get(f"/en/trackables/{opted.public_code}"))
    assert (
        f'href="https://example.org/items?from=tag&amp;trackableCode={opted.public_code}"' in page
    )
    assert "Our project" in page
    plain = make_trackable(owner, external_link_url="https://example.org/plain")
    page = text_of(api.get(f"/en/trackables/{plain.public_code}"))
    assert 'href="https://example.org/plain"' in page


def test_the_holder_gets_a_link_to_the_active_page_and_a_stranger_does_not(api, trackable):
    landing = f"/en/trackables/active/{trackable.id}"
    assert landing not in text_of(api.get(f"/en/trackables/{trackable.public_code}"))
    Finder(api, trackable).scan()
    assert landing in text_of(api.get(f"/en/trackables/{trackable.public_code}"))


def test_an_unactivated_group_item_shows_the_group_defaults_to_its_holder(api, owner):
    group = make_group(owner, default_trackable_title="Lake traveller")
    item = make_trackable(None, group_id=group.id, name="", created_by_user_id=owner.id)
    Finder(api, item).scan()
    page = text_of(api.get(f"/en/trackables/{item.public_code}"))
    assert "Lake traveller" in page
    assert "Not activated yet" in page
