"""The journey's statistics on the public page and the precision choice of the "log a
find" form, in both languages."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.trackable import JourneyStop, StopPrecision
from app.services.trackables.journey import recording as journey
from tests.web.conftest import text_of


def record(trackable, latitude: float, longitude: float) -> None:
    journey.record_stop(
        trackable,
        latitude=latitude,
        longitude=longitude,
        created_by=None,
        display_name="Ann",
        is_anonymous=True,
    )
    db.session.commit()


def statistics_of(page: str) -> dict[str, str]:
    block = re.search(r'<dl class="journey-statistics">(.*?)</dl>', page, re.S)
    assert block is not None
    pairs = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", block.group(1), re.S)
    return {term: re.sub(r"<[^>]+>", "", value) for term, value in pairs}


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        (
            "en",
            {
                "Distance travelled": "1,338.2 km",
                "Stops": "3",
                "Countries": "Switzerland, Germany",
            },
        ),
        (
            "de",
            {
                "Zurückgelegte Strecke": "1.338,2 km",
                "Stationen": "3",
                "Länder": "Schweiz, Deutschland",
            },
        ),
    ],
)
def test_the_public_page_shows_the_journeys_statistics_in_its_language(
    api, trackable, lang, expected
):
    record(trackable, 47.3769, 8.5417)  # Zurich
    record(trackable, 52.52, 13.405)  # Berlin
    record(trackable, 47.3769, 8.5417)
    shown = statistics_of(text_of(api.get(f"/{lang}/trackables/{trackable.public_code}")))
    for term, value in expected.items():
        assert shown[term] == value
    assert len(shown) == 5  # with the first and the latest stop's time


def test_a_journey_without_stops_shows_no_statistics(api, trackable):
    page = text_of(api.get(f"/en/trackables/{trackable.public_code}"))
    assert "journey-statistics" not in page
    assert "No journey stops yet." in page


def test_stops_where_no_town_is_near_name_no_country(api, trackable):
    record(trackable, 0.0, -30.0)
    shown = statistics_of(text_of(api.get(f"/en/trackables/{trackable.public_code}")))
    assert shown["Countries"] == "none named yet"


@pytest.mark.parametrize(
    ("lang", "labels"),
    [
        ("en", ["Exactly (to about 10 m)", "Roughly (to about 1 km)", "Vaguely (to about 10 km)"]),
        ("de", ["Genau (auf etwa 10 m)", "Ungefähr (auf etwa 1 km)", "Grob (auf etwa 10 km)"]),
    ],
)
def test_the_find_form_offers_the_precision_in_each_language(api, finder, lang, labels):
    page = text_of(api.get(finder.landing.replace("/en/", f"/{lang}/")))
    select_element = re.search(r'<select id="find-precision"[^>]*>(.*?)</select>', page, re.S)
    assert select_element is not None
    assert '<label for="find-precision">' in page
    options = re.findall(
        r'<option( selected)? value="(\w+)">(.*?)</option>', select_element.group(1)
    )
    assert options == [
        (" selected", "exact", labels[0]),
        ("", "about1km", labels[1]),
        ("", "about10km", labels[2]),
    ]


def test_a_find_at_about_10_km_stores_only_the_coarse_point(api, finder):
    response = finder.post(
        "find", {"latitude": "47.37691", "longitude": "8.54172", "precision": "about10km"}
    )
    assert response.status_code == 303
    stop = db.session.scalars(select(JourneyStop)).one()
    assert (stop.latitude, stop.longitude, stop.precision) == (47.4, 8.5, StopPrecision.ABOUT_10KM)


def test_a_find_with_an_unknown_precision_is_refused_and_writes_nothing(api, finder):
    response = finder.post("find", {"latitude": "47.3", "longitude": "8.5", "precision": "fuzzy"})
    assert response.status_code == 400
    assert db.session.scalars(select(JourneyStop)).all() == []


def test_a_coarse_find_leaves_its_raw_position_in_no_table(api, finder):
    from tests.api.trackables.test_stop_precision_leaks import RAW, database_text, raw_forms

    response = finder.post(
        "find",
        {"latitude": f"{RAW[0]}", "longitude": f"{RAW[1]}", "precision": "about10km"},
    )
    assert response.status_code == 303
    stop = db.session.scalars(select(JourneyStop)).one()
    assert (stop.latitude, stop.longitude) == (-33.4, -70.7)
    text = database_text()
    assert [needle for needle in raw_forms(*RAW) if needle in text] == []


@pytest.mark.parametrize(
    ("lang", "precision", "shown"),
    [
        ("en", StopPrecision.EXACT, "47.3769, 8.5417</span>"),
        ("en", StopPrecision.ABOUT_1KM, "47.38, 8.54 (within about 1 km)</span>"),
        ("de", StopPrecision.ABOUT_10KM, "47.4, 8.5 (auf etwa 10 km genau)</span>"),
    ],
)
def test_the_page_shows_a_stop_no_finer_than_its_precision(api, trackable, lang, precision, shown):
    journey.record_stop(
        trackable,
        latitude=47.376912,
        longitude=8.541688,
        precision=precision,
        created_by=None,
        display_name="Ann",
        is_anonymous=True,
    )
    db.session.commit()
    assert shown in text_of(api.get(f"/{lang}/trackables/{trackable.public_code}"))
