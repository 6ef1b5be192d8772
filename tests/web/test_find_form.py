"""The "log a find" form on the active landing (contract:
Trackables: comments and journey, rule 1; website pages): a comment, a journey stop or
both in one submit and one transaction, an optional "seen on" day, positions in any usual
notation, errors in words per field, one write per form however often it is sent, the
notice by the form with links to the new entries, forms that outlive an hour and a lost
session, and times as `<time>` elements with a UTC fallback."""

from __future__ import annotations

import re
import time
import uuid
from datetime import UTC, date, datetime, timedelta

import gpxpy
import pytest
from flask import g
from flask_babel import refresh
from sqlalchemy import select

from app.extensions import db
from app.models.trackable import JourneyStop, TrackableComment
from app.web.coordinates import Axis, parse
from app.web.forms import coordinate_examples
from tests.factories import count_rows, make_user
from tests.web.conftest import Finder, errors_of, form_fields, notices_of, text_of

DMS = {"latitude": "47°22'36.8\"N", "longitude": "8 32 30.1 E"}
DMS_VALUE = (47 + 22 / 60 + 36.8 / 3600, 8 + 32 / 60 + 30.1 / 3600)


def find_section(response) -> str:
    page = text_of(response)
    start = page.index('<section id="find"')
    return page[start : page.index("</section>", start)]


def test_a_comment_alone_is_posted_and_the_notice_sits_by_the_form(api, finder):
    response = finder.post("find", {"body": "Found it by the lake", "displayName": "Kim"})
    assert response.status_code == 303
    assert response.headers["Location"] == f"{finder.landing}#find"
    landing = api.get(finder.landing)
    assert notices_of(landing) == ["Your comment was posted."]
    assert 'class="notice"' in find_section(landing)  # by the form, not at the top
    assert '<p class="notice"' not in text_of(landing).split('<section id="find"')[0]
    comment = db.session.scalars(select(TrackableComment)).one()
    assert (comment.body, comment.author_display_name, comment.author_user_id) == (
        "Found it by the lake",
        "Kim",
        None,
    )
    assert count_rows(JourneyStop) == 0
    link = f'href="{finder.public}#comment-{comment.id}"'
    assert link in find_section(landing)
    assert "See your comment on the public page" in find_section(landing)
    assert notices_of(api.get(finder.landing)) == []  # once


def test_a_stop_alone_in_dms_is_added(api, finder):
    response = finder.post("find", DMS)
    assert response.status_code == 303
    stop = db.session.scalars(select(JourneyStop)).one()
    assert (stop.latitude, stop.longitude) == pytest.approx(DMS_VALUE, abs=1e-4)
    assert count_rows(TrackableComment) == 0
    landing = api.get(finder.landing)
    assert notices_of(landing) == ["The journey stop was added."]
    assert f'href="{finder.public}#stop-{stop.id}"' in find_section(landing)


def test_a_comment_and_a_stop_go_together_in_one_submit(api, finder):
    response = finder.post("find", {"body": "On a bench", **DMS})
    assert response.status_code == 303
    comment = db.session.scalars(select(TrackableComment)).one()
    stop = db.session.scalars(select(JourneyStop)).one()
    section = find_section(api.get(finder.landing))
    assert "Your comment and the journey stop were posted." in section
    assert f"#comment-{comment.id}" in section
    assert f"#stop-{stop.id}" in section


def test_the_public_page_gives_each_entry_an_id_the_links_point_at(api, finder):
    finder.post("find", {"body": "On a bench", **DMS})
    comment = db.session.scalars(select(TrackableComment)).one()
    stop = db.session.scalars(select(JourneyStop)).one()
    page = text_of(api.get(finder.public))
    assert f'<li id="comment-{comment.id}">' in page
    assert f'<li id="stop-{stop.id}">' in page
    css = text_of(api.get("/static/pages/pages.css"))
    assert ".stops li:target, .comments li:target" in css


def test_a_german_submit_is_answered_in_german(api, trackable):
    finder = Finder(api, trackable, lang="de")
    finder.scan()
    finder.post("find", {"body": "Am See", "latitude": "47,3769", "longitude": "O 8° 32,502'"})
    section = find_section(api.get(finder.landing))
    assert "Dein Kommentar und die Reisestation wurden veröffentlicht." in section
    assert "Deinen Kommentar auf der öffentlichen Seite ansehen" in section
    stop = db.session.scalars(select(JourneyStop)).one()
    assert (stop.latitude, stop.longitude) == pytest.approx((47.3769, 8.5417), abs=1e-4)


def test_a_signed_in_finder_logs_under_their_account_name(api, finder):
    user = make_user("ann", display_name="Ann A.")
    signed_in = Finder(api.as_user(user), finder.trackable)
    assert 'name="displayName"' not in text_of(signed_in.api.get(signed_in.landing))
    assert signed_in.post("find", {"body": "Hello", **DMS}).status_code == 303
    assert db.session.scalars(select(TrackableComment)).one().author_user_id == user.id
    assert db.session.scalars(select(JourneyStop)).one().created_by_user_id == user.id


# --- one write per form --------------------------------------------------------------------


def test_the_same_form_sent_twice_writes_one_comment_and_one_stop(api, finder):
    fields = form_fields(api.get(finder.landing))
    locations = []
    for _ in range(2):  # a double tap, or a resend after a timeout
        response = api.post(f"{finder.landing}/find", data={**fields, "body": "Once", **DMS})
        assert response.status_code == 303
        locations.append(text_of(api.get(finder.landing)))
    assert count_rows(TrackableComment) == count_rows(JourneyStop) == 1
    comment = db.session.scalars(select(TrackableComment)).one()
    assert f"#comment-{comment.id}" in locations[1]  # the resend links the same entry


def test_the_comment_and_the_stop_take_ids_derived_from_the_form_id(api, finder):
    fields = form_fields(api.get(finder.landing))
    api.post(f"{finder.landing}/find", data={**fields, "body": "Tagged", **DMS})
    form_id = uuid.UUID(fields["clientMutationId"])
    comment = db.session.scalars(select(TrackableComment)).one()
    stop = db.session.scalars(select(JourneyStop)).one()
    assert comment.client_mutation_id == str(uuid.uuid5(form_id, "comment"))
    assert stop.client_mutation_id == str(uuid.uuid5(form_id, "stop"))


def test_each_render_carries_a_new_form_id(api, finder):
    assert form_fields(api.get(finder.landing)) != form_fields(api.get(finder.landing))


def test_the_form_id_sent_again_with_other_words_writes_nothing_in_one_transaction(api, finder):
    fields = form_fields(api.get(finder.landing))
    assert api.post(f"{finder.landing}/find", data={**fields, "body": "First"}).status_code == 303
    # Back in the browser, the comment edited and a position added: the stop is new, the
    # comment a conflict, so neither is written (one transaction).
    response = api.post(f"{finder.landing}/find", data={**fields, "body": "Second", **DMS})
    assert response.status_code == 409
    assert errors_of(response) == [
        "This form was sent before with other content, so nothing was saved now. Check "
        "it and send it again."
    ]
    assert "Second</textarea>" in text_of(response)
    assert count_rows(JourneyStop) == 0
    assert count_rows(TrackableComment) == 1
    again = form_fields(response)  # a fresh form id: sending again writes
    assert again["clientMutationId"] != fields["clientMutationId"]
    data = {**again, "body": "Second", **DMS}
    assert api.post(f"{finder.landing}/find", data=data).status_code == 303
    assert count_rows(TrackableComment) == 2
    assert count_rows(JourneyStop) == 1


def test_a_form_without_a_form_id_still_writes(api, finder):
    fields = form_fields(api.get(finder.landing))
    del fields["clientMutationId"]
    assert api.post(f"{finder.landing}/find", data={**fields, "body": "Hi"}).status_code == 303
    assert db.session.scalars(select(TrackableComment)).one().client_mutation_id is None


def test_the_old_comment_and_stop_routes_are_gone(api, finder):
    fields = form_fields(api.get(finder.landing))
    for path, data in (("comments", {"body": "Hi"}), ("stops", DMS)):
        response = api.post(f"{finder.landing}/{path}", data={**fields, **data})
        assert response.status_code in (404, 405)
        assert response.mimetype == "text/html"
    assert count_rows(TrackableComment) == count_rows(JourneyStop) == 0


# --- errors in words, what was typed kept ----------------------------------------------------


def test_an_empty_form_asks_for_a_comment_or_a_position(api, trackable):
    for lang, message in (
        ("en", "Write a comment, give a position, or both."),
        ("de", "Schreibe einen Kommentar, gib eine Position an oder beides."),
    ):
        finder = Finder(api, trackable, lang=lang)
        finder.scan()
        response = finder.post("find", {"body": "   ", "latitude": " ", "longitude": ""})
        assert response.status_code == 400
        assert errors_of(response) == [message]
        assert 'id="find-form-error"' in find_section(response)


@pytest.mark.parametrize(
    ("data", "field", "en", "de"),
    [
        (
            {"body": "x" * 4001},
            "body",
            "A comment may be at most 4000 characters long.",
            "Ein Kommentar darf höchstens 4000 Zeichen lang sein.",
        ),
        (
            {"body": "Hi", "displayName": "n" * 51},
            "name",
            "Your name may be at most 50 characters long.",
            "Dein Name darf höchstens 50 Zeichen lang sein.",
        ),
        (
            {"body": "Hi \u202eevil"},
            "body",
            "Your comment must not contain control or direction characters.",
            "Dein Kommentar darf keine Steuer- oder Richtungszeichen enthalten.",
        ),
        (
            {"body": "Hi", "displayName": "Kim\u202e"},
            "name",
            "Your name must not contain control or direction characters.",
            "Dein Name darf keine Steuer- oder Richtungszeichen enthalten.",
        ),
    ],
)
def test_each_comment_error_is_shown_in_words_by_its_field(api, trackable, data, field, en, de):
    for lang, message in (("en", en), ("de", de)):
        finder = Finder(api, trackable, lang=lang)
        finder.scan()
        response = finder.post("find", data)
        assert response.status_code == 400
        assert errors_of(response) == [message]
        assert f'id="find-{field}-error"' in text_of(response)
        assert 'aria-invalid="true"' in text_of(response)
    assert count_rows(TrackableComment) == 0


@pytest.mark.parametrize(
    ("data", "errors_en", "errors_de"),
    [
        (
            {"latitude": "47.3769", "longitude": ""},
            ["Enter the longitude too, such as 8.5417, E 8° 32.502' or 8°32'30.1\"E."],
            ["Gib auch den Längengrad ein, zum Beispiel 8,5417; E 8° 32,502' oder 8°32'30,1\"E."],
        ),
        (
            {"latitude": "", "longitude": "8.5"},
            ["Enter the latitude too, such as 47.3769, N 47° 22.614' or 47°22'36.8\"N."],
            [
                "Gib auch den Breitengrad ein, zum Beispiel 47,3769; N 47° 22,614' oder "
                "47°22'36,8\"N."
            ],
        ),
        (
            {"latitude": "north", "longitude": "east"},
            [
                "Enter the latitude in degrees, such as 47.3769, N 47° 22.614' or 47°22'36.8\"N.",
                "Enter the longitude in degrees, such as 8.5417, E 8° 32.502' or 8°32'30.1\"E.",
            ],
            [
                "Gib den Breitengrad in Grad ein, zum Beispiel 47,3769; N 47° 22,614' oder "
                "47°22'36,8\"N.",
                "Gib den Längengrad in Grad ein, zum Beispiel 8,5417; E 8° 32,502' oder "
                "8°32'30,1\"E.",
            ],
        ),
        (
            {"latitude": "91", "longitude": "W 180.5"},
            [
                "A latitude lies from -90 to 90 (90° S to 90° N).",
                "A longitude lies from -180 to 180 (180° W to 180° E).",
            ],
            [
                "Ein Breitengrad liegt zwischen -90 und 90 (90° S bis 90° N).",
                "Ein Längengrad liegt zwischen -180 und 180 (180° W bis 180° E).",
            ],
        ),
        (
            {"latitude": "8.5 E", "longitude": "N 47"},
            [
                "A latitude takes N or S, such as 47.3769, N 47° 22.614' or 47°22'36.8\"N.",
                "A longitude takes E or W, such as 8.5417, E 8° 32.502' or 8°32'30.1\"E.",
            ],
            [
                "Ein Breitengrad nimmt N oder S, zum Beispiel 47,3769; N 47° 22,614' oder "
                "47°22'36,8\"N.",
                "Ein Längengrad nimmt E (oder O) oder W, zum Beispiel 8,5417; E 8° 32,502' oder "
                "8°32'30,1\"E.",
            ],
        ),
        (
            {"latitude": "47 60", "longitude": "8 32 60"},
            [
                "Minutes and seconds must be less than 60, such as 47.3769, N 47° 22.614' or "
                "47°22'36.8\"N.",
                "Minutes and seconds must be less than 60, such as 8.5417, E 8° 32.502' or "
                "8°32'30.1\"E.",
            ],
            [
                "Minuten und Sekunden müssen kleiner als 60 sein, zum Beispiel 47,3769; "
                "N 47° 22,614' oder 47°22'36,8\"N.",
                "Minuten und Sekunden müssen kleiner als 60 sein, zum Beispiel 8,5417; "
                "E 8° 32,502' oder 8°32'30,1\"E.",
            ],
        ),
        (
            {"latitude": "47.5 30", "longitude": "-8 W"},
            [
                "This can be read more than one way: use a sign or a letter, not both, and "
                "decimals only on the last number, such as 47.3769, N 47° 22.614' or "
                "47°22'36.8\"N.",
                "This can be read more than one way: use a sign or a letter, not both, and "
                "decimals only on the last number, such as 8.5417, E 8° 32.502' or "
                "8°32'30.1\"E.",
            ],
            [
                "Das lässt sich auf mehr als eine Art lesen: Nimm ein Vorzeichen oder einen "
                "Buchstaben, nicht beides, und Dezimalstellen nur bei der letzten Zahl, zum "
                "Beispiel 47,3769; N 47° 22,614' oder 47°22'36,8\"N.",
                "Das lässt sich auf mehr als eine Art lesen: Nimm ein Vorzeichen oder einen "
                "Buchstaben, nicht beides, und Dezimalstellen nur bei der letzten Zahl, zum "
                "Beispiel 8,5417; E 8° 32,502' oder 8°32'30,1\"E.",
            ],
        ),
    ],
)
def test_each_position_error_is_shown_in_words_with_its_own_axis_example(
    api, trackable, data, errors_en, errors_de
):
    for lang, expected in (("en", errors_en), ("de", errors_de)):
        finder = Finder(api, trackable, lang=lang)
        finder.scan()
        response = finder.post("find", {"body": "With a stop", **data})
        assert response.status_code == 400
        assert errors_of(response) == expected
    assert count_rows(JourneyStop) == count_rows(TrackableComment) == 0


@pytest.mark.parametrize(("lang", "separators"), [("en", (", ", " or ")), ("de", ("; ", " oder "))])
def test_every_example_a_refusal_gives_is_one_the_form_reads(app, lang, separators):
    expected = {
        Axis.LATITUDE: [47.3769, 47 + 22.614 / 60, 47 + 22 / 60 + 36.8 / 3600],
        Axis.LONGITUDE: [8.5417, 8 + 32.502 / 60, 8 + 32 / 60 + 30.1 / 3600],
    }
    with app.test_request_context(f"/{lang}/"):
        g.page_language = lang
        refresh()
        for axis, values in expected.items():
            first, rest = coordinate_examples(axis).split(separators[0])
            examples = [first, *rest.split(separators[1])]
            assert [parse(example, axis) for example in examples] == pytest.approx(values)
            assert ("," in first) == (lang == "de")  # the page language's decimal sign


@pytest.mark.parametrize(
    ("lang", "latitude", "longitude"), [("en", "47.3769", "8.5417"), ("de", "47,3769", "8,5417")]
)
def test_the_coordinate_placeholders_are_written_as_the_page_language_writes_them(
    api, trackable, lang, latitude, longitude
):
    finder = Finder(api, trackable, lang=lang)
    finder.scan()
    section = find_section(api.get(finder.landing))
    assert f'placeholder="{latitude}"' in section
    assert f'placeholder="{longitude}"' in section


def test_the_longitude_error_shows_a_longitude_example(api, finder):
    response = finder.post("find", {"latitude": "47.3769", "longitude": "eight"})
    (message,) = errors_of(response)
    assert "8.5417" in message
    assert "47.3769" not in message
    assert 'id="find-longitude-error"' in text_of(response)


def test_a_refused_form_keeps_what_was_typed(api, finder):
    typed = {
        "body": "My story",
        "displayName": "Kim",
        "latitude": "N 47° 22.614'",
        "longitude": "8 32 60",
        "seenOn": (date.today() - timedelta(days=3)).isoformat(),
    }
    page = text_of(finder.post("find", typed))
    assert "My story</textarea>" in page
    assert 'value="Kim"' in page
    assert 'value="N 47° 22.614&#39;"' in page
    assert 'value="8 32 60"' in page
    assert f'value="{typed["seenOn"]}"' in page


# --- "seen on" -----------------------------------------------------------------------------


def test_a_seen_on_day_is_kept_on_the_comment_and_the_stop_as_noon_utc(api, finder):
    day = datetime.now(UTC).date() - timedelta(days=10)
    assert finder.post("find", {"body": "Seen", **DMS, "seenOn": day.isoformat()}).status_code == (
        303
    )
    noon = datetime(day.year, day.month, day.day, 12, tzinfo=UTC)
    comment = db.session.scalars(select(TrackableComment)).one()
    stop = db.session.scalars(select(JourneyStop)).one()
    assert comment.observed_utc == stop.observed_utc == noon
    page = text_of(api.get(finder.public))
    assert page.count(f'<time datetime="{noon.isoformat().replace("+00:00", "Z")}"') == 2


def test_the_seen_on_day_reaches_the_statistics_and_the_gpx_file(api, finder):
    day = datetime.now(UTC).date() - timedelta(days=10)
    response = finder.post("find", {**DMS, "displayName": "Kim", "seenOn": day.isoformat()})
    assert response.status_code == 303
    url = f"/api/trackables/{finder.trackable.id}"
    statistics = api.get(url).get_json()["journeyStatistics"]
    assert statistics["firstSeenOn"] == statistics["lastSeenOn"] == day.isoformat()
    (point,) = gpxpy.parse(api.get(f"{url}/journey.gpx").get_data(as_text=True)).get_points_data()
    assert point.point.description == f"Seen on {day.isoformat()} by Kim"


def test_today_is_not_in_the_future_even_before_noon(api, finder):
    today = datetime.now(UTC).date().isoformat()
    assert finder.post("find", {"body": "Today", "seenOn": today}).status_code == 303
    observed = db.session.scalars(select(TrackableComment)).one().observed_utc
    assert observed <= datetime.now(UTC)


@pytest.mark.parametrize(
    ("seen_on", "en", "de"),
    [
        (
            (datetime.now(UTC).date() + timedelta(days=2)).isoformat(),
            "This date is in the future: enter the day you found it.",
            "Dieses Datum liegt in der Zukunft: Gib den Tag ein, an dem du das Stück gefunden "
            "hast.",
        ),
        (
            (datetime.now(UTC).date() - timedelta(days=365)).isoformat(),
            "Enter a day within the last 365 days.",
            "Gib einen Tag innerhalb der letzten 365 Tage ein.",
        ),
        (
            "26.11.2026",
            "Enter a date such as 2026-05-17.",
            "Gib ein Datum ein, zum Beispiel 2026-05-17.",
        ),
    ],
)
def test_a_seen_on_day_in_the_future_too_old_or_unreadable_is_refused_in_words(
    api, trackable, seen_on, en, de
):
    for lang, message in (("en", en), ("de", de)):
        finder = Finder(api, trackable, lang=lang)
        finder.scan()
        response = finder.post("find", {"body": "Seen", "seenOn": seen_on})
        assert response.status_code == 400
        assert errors_of(response) == [message]
        assert 'id="find-seen-on-error"' in text_of(response)
    assert count_rows(TrackableComment) == 0


def test_the_day_field_offers_the_days_it_takes(api, app, finder):
    app.config["TRACKABLE_OBSERVED_MAX_AGE_DAYS"] = 30
    page = text_of(api.get(finder.landing))
    today = datetime.now(UTC).date()
    first = (datetime.now(UTC) - timedelta(days=30)).date() + timedelta(days=1)
    assert f'min="{first.isoformat()}"' in page
    assert 'type="date"' in page
    latest = re.search(r'name="seenOn"[^>]*max="([0-9-]+)"|max="([0-9-]+)"[^>]*name="seenOn"', page)
    assert latest is not None
    assert date.fromisoformat(latest.group(1) or latest.group(2)) - today <= timedelta(days=1)


# --- forms that outlive an hour and a lost session ---------------------------------------------


def test_a_form_left_open_for_hours_is_still_taken(api, finder, monkeypatch):
    fields = form_fields(api.get(finder.landing))
    later = time.time() + 6 * 3600
    monkeypatch.setattr("itsdangerous.timed.time.time", lambda: later)
    response = api.post(f"{finder.landing}/find", data={**fields, "body": "Slow writer"})
    assert response.status_code == 303
    assert count_rows(TrackableComment) == 1


def test_a_refused_token_shows_the_form_again_with_what_was_typed(api, finder):
    fields = form_fields(api.get(finder.landing))
    api.client.delete_cookie("ln_pages")  # a new browser session: the token's cookie is gone
    data = {**fields, "body": "Long story", "displayName": "Kim", **DMS}
    response = api.post(f"{finder.landing}/find", data=data)
    assert response.status_code == 400
    page = text_of(response)
    assert errors_of(response) == [
        "This form has expired or did not come from this page, so nothing was saved. Check "
        "it and send it again."
    ]
    assert "Long story</textarea>" in page
    assert 'value="Kim"' in page
    assert count_rows(TrackableComment) == 0
    again = form_fields(response)  # a fresh token for this session: sending again works
    response = api.post(f"{finder.landing}/find", data={**data, **again})
    assert response.status_code == 303
    assert count_rows(TrackableComment) == count_rows(JourneyStop) == 1


def test_the_csrf_token_lasts_as_long_as_the_session(app):
    assert app.config["WTF_CSRF_TIME_LIMIT"] is None


# --- times ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "fallback"),
    [("en", "Nov 26, 2026, 2:05\u202fPM UTC"), ("de", "26.11.2026, 14:05 UTC")],
)
def test_times_are_time_elements_with_a_utc_fallback_without_seconds(
    api, trackable, lang, fallback
):
    finder = Finder(api, trackable, lang=lang)
    finder.scan()
    finder.post("find", {"body": "Timed"})
    comment = db.session.scalars(select(TrackableComment)).one()
    comment.created_utc = datetime(2026, 11, 26, 14, 5, 33, tzinfo=UTC)
    db.session.commit()
    page = text_of(api.get(finder.public))
    element = f'<time datetime="2026-11-26T14:05:33Z" data-local="datetime">{fallback}</time>'
    assert element in page
    assert ":33" not in page.split(element)[0].rsplit("<li", 1)[-1]
    script = text_of(api.get("/static/pages/pages.js"))
    assert "Intl.DateTimeFormat" in script
    assert "time[data-local]" in script
