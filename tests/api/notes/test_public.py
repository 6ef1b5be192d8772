"""Public note discovery: GET /api/notes/public/bounds, GET /api/notes/public/nearby and
GET /api/public/profiles/{userName}/notes/nearby (contract: Public note discovery; Limits)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from app.models.enums import NoteVisibility
from tests.conftest import assert_problem
from tests.factories import (
    attach_trackable,
    make_note,
    make_user,
    unlock_trackable,
)

PUBLIC = NoteVisibility.PUBLIC
PRIVATE = NoteVisibility.PRIVATE
GATED = NoteVisibility.ONCE_TRACKABLE_ACCESSED
BOUNDS = "/api/notes/public/bounds"
NEARBY = "/api/notes/public/nearby"
KM_PER_DEGREE = 111.195  # along a meridian


def window(min_lat, min_lon, max_lat, max_lon, **extra):
    query = {
        "minLatitude": min_lat,
        "minLongitude": min_lon,
        "maxLatitude": max_lat,
        "maxLongitude": max_lon,
        **extra,
    }
    return "&".join(f"{key}={value}" for key, value in query.items())


def ids(response):
    assert response.status_code == 200, response.get_data(as_text=True)
    return [item["noteId"] for item in response.get_json()]


def ago(hours: float) -> datetime:
    return datetime.now(UTC) - timedelta(hours=hours)


# --- bounds ------------------------------------------------------------------------------


def test_bounds_lists_public_and_untouched_gated_notes_in_the_window(api):
    public = make_note(visibility=PUBLIC, latitude=10, longitude=10, last_activity_utc=ago(1))
    gated = make_note(visibility=GATED, latitude=11, longitude=11, last_activity_utc=ago(2))
    make_note(visibility=PRIVATE, latitude=10, longitude=10)
    make_note(visibility=PUBLIC, latitude=10, longitude=10, is_deleted=True)
    make_note(visibility=PUBLIC, latitude=40, longitude=10)
    make_note(visibility=PUBLIC)
    assert ids(api.get(f"{BOUNDS}?{window(0, 0, 20, 20)}")) == [str(public.id), str(gated.id)]


def test_bounds_leaves_out_a_gated_note_once_a_trackable_is_attached(api):
    note = make_note(visibility=GATED, latitude=1, longitude=1)
    attach_trackable(note)
    assert ids(api.get(f"{BOUNDS}?{window(0, 0, 2, 2)}")) == []


def test_bounds_is_most_recent_activity_first(api):
    notes = [
        make_note(visibility=PUBLIC, latitude=1, longitude=1, last_activity_utc=ago(hours))
        for hours in (3, 1, 2)
    ]
    expected = [str(notes[1].id), str(notes[2].id), str(notes[0].id)]
    assert ids(api.get(f"{BOUNDS}?{window(0, 0, 2, 2)}")) == expected


def test_bounds_filters_by_content_language(api):
    german = make_note(visibility=PUBLIC, latitude=1, longitude=1, content_language="de-DE")
    make_note(visibility=PUBLIC, latitude=1, longitude=1, content_language="en")
    query = window(0, 0, 2, 2, contentLanguage="de-de")
    assert ids(api.get(f"{BOUNDS}?{query}")) == [str(german.id)]


def test_bounds_across_the_antimeridian(api):
    east = make_note(visibility=PUBLIC, latitude=0, longitude=179.5, last_activity_utc=ago(1))
    west = make_note(visibility=PUBLIC, latitude=0, longitude=-179.5, last_activity_utc=ago(2))
    make_note(visibility=PUBLIC, latitude=0, longitude=0)
    assert ids(api.get(f"{BOUNDS}?{window(-1, 179, 1, -179)}")) == [str(east.id), str(west.id)]


def test_bounds_does_not_tailor_to_a_signed_in_caller(api):
    owner = make_user()
    make_note(owner, visibility=PRIVATE, latitude=1, longitude=1)
    assert ids(api.as_user(owner).get(f"{BOUNDS}?{window(0, 0, 2, 2)}")) == []


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("minLongitude=0&maxLatitude=1&maxLongitude=1", "minLatitude"),
        (window(0, 0, 1, 1).replace("maxLongitude=1", "maxLongitude="), "maxLongitude"),
        (window(-91, 0, 1, 1), "minLatitude"),
        (window(0, 0, 91, 1), "maxLatitude"),
        (window(0, -181, 1, 1), "minLongitude"),
        (window(0, 0, 1, 180.1), "maxLongitude"),
        (window(0, 0, 1, "abc"), "maxLongitude"),
        (window("nan", 0, 1, 1), "minLatitude"),
        (window(0, "inf", 1, 1), "minLongitude"),
        (window(5, 0, 1, 1), "minLatitude"),
        (window(0, 0, 1, 1, contentLanguage="??"), "contentLanguage"),
    ],
)
def test_bounds_rejects_missing_or_invalid_coordinates_naming_the_field(api, query, field):
    body = assert_problem(api.get(f"{BOUNDS}?{query}"), 400)
    assert field in body["errors"]


class TestCap:
    @pytest.fixture
    def app_overrides(self):
        return {"PUBLIC_LIST_CAP": 3}

    def test_a_cut_list_says_so(self, api):
        notes = [
            make_note(visibility=PUBLIC, latitude=1, longitude=1, last_activity_utc=ago(h))
            for h in range(4)
        ]
        response = api.get(f"{BOUNDS}?{window(0, 0, 2, 2)}")
        assert ids(response) == [str(note.id) for note in notes[:3]]
        assert response.headers["X-Result-Truncated"] == "true"

    def test_a_full_but_uncut_list_has_no_truncation_header(self, api):
        for _ in range(3):
            make_note(visibility=PUBLIC, latitude=1, longitude=1)
        response = api.get(f"{BOUNDS}?{window(0, 0, 2, 2)}")
        assert len(ids(response)) == 3
        assert "X-Result-Truncated" not in response.headers

    def test_nearby_fills_the_cap_from_inside_the_circle(self, api):
        # The newest notes sit in the window's corners (outside the circle): the cap must
        # still be filled with the most recent notes that are really within the radius.
        corner = 4.5 / KM_PER_DEGREE
        for hours in range(4):
            make_note(
                visibility=PUBLIC, latitude=corner, longitude=corner, last_activity_utc=ago(hours)
            )
        inside = [
            make_note(visibility=PUBLIC, latitude=0, longitude=0, last_activity_utc=ago(10 + h))
            for h in range(4)
        ]
        response = api.get(f"{NEARBY}?latitude=0&longitude=0&radiusKm=5")
        assert ids(response) == [str(note.id) for note in inside[:3]]
        assert response.headers["X-Result-Truncated"] == "true"


# --- nearby ------------------------------------------------------------------------------


def test_nearby_uses_a_5_km_radius_by_default(api):
    near = make_note(visibility=PUBLIC, latitude=4.5 / KM_PER_DEGREE, longitude=0)
    make_note(visibility=PUBLIC, latitude=5.5 / KM_PER_DEGREE, longitude=0)
    assert ids(api.get(f"{NEARBY}?latitude=0&longitude=0")) == [str(near.id)]


def test_nearby_takes_a_radius(api):
    near = make_note(
        visibility=PUBLIC, latitude=4 / KM_PER_DEGREE, longitude=0, last_activity_utc=ago(1)
    )
    far = make_note(
        visibility=PUBLIC, latitude=9 / KM_PER_DEGREE, longitude=0, last_activity_utc=ago(2)
    )
    assert ids(api.get(f"{NEARBY}?latitude=0&longitude=0&radiusKm=10")) == [
        str(near.id),
        str(far.id),
    ]


def test_nearby_leaves_out_the_corners_of_the_window(api):
    offset = 4 / KM_PER_DEGREE  # ~5.7 km away diagonally: in the window, not the circle
    make_note(visibility=PUBLIC, latitude=offset, longitude=offset)
    assert ids(api.get(f"{NEARBY}?latitude=0&longitude=0")) == []


def test_nearby_across_the_antimeridian(api):
    across = make_note(visibility=PUBLIC, latitude=0, longitude=-179.99)
    make_note(visibility=PUBLIC, latitude=0, longitude=0)
    assert ids(api.get(f"{NEARBY}?latitude=0&longitude=179.99")) == [str(across.id)]


def test_nearby_over_the_pole(api):
    # 89.99N on opposite meridians: about 2.2 km apart across the pole.
    across = make_note(visibility=PUBLIC, latitude=89.99, longitude=180)
    make_note(visibility=PUBLIC, latitude=89.9, longitude=0)
    assert ids(api.get(f"{NEARBY}?latitude=89.99&longitude=0")) == [str(across.id)]


def test_nearby_at_high_latitude_reaches_wide_in_longitude(api):
    # At 80N one degree of longitude is ~19 km: a 25 km circle spans more than one degree.
    east = make_note(visibility=PUBLIC, latitude=80, longitude=21.2)
    assert ids(api.get(f"{NEARBY}?latitude=80&longitude=20&radiusKm=25")) == [str(east.id)]


def test_nearby_leaves_out_private_and_gated_with_trackables(api):
    make_note(visibility=PRIVATE, latitude=0, longitude=0)
    attach_trackable(make_note(visibility=GATED, latitude=0, longitude=0))
    assert ids(api.get(f"{NEARBY}?latitude=0&longitude=0")) == []


@pytest.mark.parametrize(
    "query",
    [
        "latitude=1e-300&longitude=0",
        "latitude=-1e-160&longitude=0",
        "latitude=0&longitude=1e-300",
        "latitude=1e-320&longitude=1e-320",
        "latitude=0&longitude=0&radiusKm=1e-300",
    ],
)
def test_nearby_with_tiny_numbers_finds_the_note_at_the_point_on_every_database(api, query):
    """Squares of tiny sines underflow; PostgreSQL raises on that where SQLite gives 0."""
    at_the_point = make_note(visibility=PUBLIC, latitude=0, longitude=0)
    make_note(visibility=PUBLIC, latitude=0.001, longitude=0)  # 111 m away
    if "radiusKm" not in query:
        query += "&radiusKm=0.1"
    assert ids(api.get(f"{NEARBY}?{query}")) == [str(at_the_point.id)]


def test_nearby_finds_a_note_stored_with_tiny_coordinates(api):
    owner = make_user("tiny")
    tiny = make_note(owner, visibility=PUBLIC, latitude=1e-300, longitude=-1e-200)
    assert ids(api.get(f"{NEARBY}?latitude=0&longitude=0")) == [str(tiny.id)]
    assert ids(api.get(f"{NEARBY}?latitude=1e-300&longitude=0&radiusKm=1e-9")) == [str(tiny.id)]
    profile = "/api/public/profiles/tiny/notes/nearby?latitude=1e-160&longitude=0"
    assert ids(api.get(profile)) == [str(tiny.id)]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("longitude=0", "latitude"),
        ("latitude=0", "longitude"),
        ("latitude=95&longitude=0", "latitude"),
        ("latitude=0&longitude=200", "longitude"),
        ("latitude=0&longitude=0&radiusKm=0", "radiusKm"),
        ("latitude=0&longitude=0&radiusKm=-1", "radiusKm"),
        ("latitude=0&longitude=0&radiusKm=501", "radiusKm"),
        ("latitude=0&longitude=0&radiusKm=nan", "radiusKm"),
    ],
)
def test_nearby_rejects_missing_or_invalid_values_naming_the_field(api, query, field):
    assert field in assert_problem(api.get(f"{NEARBY}?{query}"), 400)["errors"]


# --- records -----------------------------------------------------------------------------


def test_list_items_are_the_note_page_record(api):
    note = make_note(
        visibility=PUBLIC,
        latitude=1.25,
        longitude=2.5,
        external_link_url="https://example.org",
        external_link_description="Example",
        client_mutation_id="m-1",
    )
    listed = api.get(f"{BOUNDS}?{window(0, 0, 2, 3)}").get_json()
    page = api.get(f"/api/public/notes/{note.id}").get_json()
    assert listed == [page]
    assert page["ownerUserName"] == note.owner.user_name


def test_owner_sees_the_client_mutation_id_strangers_do_not(api):
    owner = make_user()
    note = make_note(owner, visibility=PUBLIC, latitude=1, longitude=1, client_mutation_id="m-7")
    assert api.get(f"{BOUNDS}?{window(0, 0, 2, 2)}").get_json()[0]["clientMutationId"] is None
    mine = api.as_user(owner).get(f"/api/public/notes/{note.id}").get_json()
    assert mine["clientMutationId"] == "m-7"


# --- profile nearby ----------------------------------------------------------------------


def profile(user_name: str, query: str) -> str:
    return f"/api/public/profiles/{user_name}/notes/nearby?{query}"


@pytest.fixture
def ada(app):
    return make_user("ada")


def test_profile_lists_the_users_public_notes_near_a_point(api, ada):
    public = make_note(ada, visibility=PUBLIC, latitude=0, longitude=0)
    make_note(ada, visibility=PRIVATE, latitude=0, longitude=0)
    make_note(make_user(), visibility=PUBLIC, latitude=0, longitude=0)
    make_note(ada, visibility=PUBLIC, latitude=1, longitude=1)
    assert ids(api.get(profile("ada", "latitude=0&longitude=0"))) == [str(public.id)]


def test_profile_shows_the_owner_their_private_notes(api, ada):
    private = make_note(ada, visibility=PRIVATE, latitude=0, longitude=0)
    assert ids(api.as_user(ada).get(profile("ada", "latitude=0&longitude=0"))) == [str(private.id)]


def test_profile_shows_an_unlocked_viewer_the_gated_note(api, ada):
    note = make_note(ada, visibility=GATED, latitude=0, longitude=0)
    trackable = attach_trackable(note)
    viewer = make_user()
    assert ids(api.as_user(viewer).get(profile("ada", "latitude=0&longitude=0"))) == []
    unlock_trackable(viewer, trackable)
    assert ids(api.as_user(viewer).get(profile("ada", "latitude=0&longitude=0"))) == [str(note.id)]


def test_profile_leaves_out_team_notes(api, ada):
    make_note(ada, visibility=PUBLIC, latitude=0, longitude=0, team_id=uuid.uuid4())
    assert ids(api.get(profile("ada", "latitude=0&longitude=0"))) == []


def test_profile_takes_the_four_bounds(api, ada):
    inside = make_note(ada, visibility=PUBLIC, latitude=10, longitude=10)
    assert ids(api.get(profile("ada", window(5, 5, 15, 15)))) == [str(inside.id)]


def test_profile_filters_by_language_unless_all_languages_are_asked(api, ada):
    english = make_note(ada, visibility=PUBLIC, latitude=0, longitude=0, last_activity_utc=ago(1))
    french = make_note(
        ada,
        visibility=PUBLIC,
        latitude=0,
        longitude=0,
        content_language="fr",
        last_activity_utc=ago(2),
    )
    point = "latitude=0&longitude=0&contentLanguage=en"
    assert ids(api.get(profile("ada", point))) == [str(english.id)]
    everything = ids(api.get(profile("ada", point + "&includeAllLanguages=true")))
    assert everything == [str(english.id), str(french.id)]


def test_profile_of_an_unknown_user_is_404(api):
    assert_problem(api.get(profile("nobody_here", "latitude=0&longitude=0")), 404)


@pytest.mark.parametrize(
    ("query", "fields"),
    [
        ("", {"latitude", "longitude"}),
        ("latitude=1", {"longitude"}),
        ("minLatitude=0&maxLatitude=1", {"minLongitude", "maxLongitude"}),
        ("latitude=0&longitude=0&" + window(0, 0, 1, 1), {"latitude"}),
        ("latitude=0&longitude=0&radiusKm=1000", {"radiusKm"}),
    ],
)
def test_profile_needs_a_point_or_the_four_bounds(api, ada, query, fields):
    body = assert_problem(api.get(profile("ada", query)), 400)
    assert set(body["errors"]) == fields
