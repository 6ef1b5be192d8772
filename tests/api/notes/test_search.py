"""Text search over public notes: GET /api/notes/public/search (contract notes: Public note
search). PostgreSQL reads each note in its language's text search configuration; SQLite's
FTS5 (unicode61, diacritics removed) matches whole words, without stemming."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from flask import Flask

from app.extensions import db
from app.models.enums import NoteVisibility
from tests.conftest import assert_problem
from tests.factories import (
    attach_trackable,
    make_category,
    make_note,
    make_team,
    make_user,
    unlock_trackable,
)

PUBLIC = NoteVisibility.PUBLIC
PRIVATE = NoteVisibility.PRIVATE
GATED = NoteVisibility.ONCE_TRACKABLE_ACCESSED
SEARCH = "/api/notes/public/search"
BOUNDS = "/api/notes/public/bounds"


def search(api, q, **query):
    return api.get(SEARCH, query_string={"q": q, **query})


def found(response) -> list[str]:
    assert response.status_code == 200, response.get_data(as_text=True)
    return [item["noteId"] for item in response.get_json()]


def titles(response) -> list[str]:
    assert response.status_code == 200, response.get_data(as_text=True)
    return [item["title"] for item in response.get_json()]


def ago(hours: float) -> datetime:
    return datetime.now(UTC) - timedelta(hours=hours)


def on_postgresql(app: Flask) -> bool:
    return db.engine.dialect.name == "postgresql"


def public_note(title: str, body: str = "", **fields):
    return make_note(visibility=PUBLIC, title=title, body=body, **fields)


def filler(count: int = 6) -> None:
    """Notes that match nothing searched for: ranking statistics need a corpus."""
    for number in range(count):
        public_note(f"Filler {number}", "Nothing to see in this one at all.")


# --- what is found, and who may see it ----------------------------------------------------


def test_search_finds_words_in_the_title_and_in_the_body(api):
    in_title = public_note("Lighthouse tour", last_activity_utc=ago(1))
    in_body = public_note("Harbour walk", "Ends at the old lighthouse.", last_activity_utc=ago(2))
    public_note("Harbour walk", "Ends at the pier.")
    assert found(search(api, "lighthouse")) == [str(in_title.id), str(in_body.id)]


def test_search_lists_public_and_untouched_gated_notes_only(api):
    public = public_note("Lighthouse one", last_activity_utc=ago(1))
    gated = make_note(visibility=GATED, title="Lighthouse two", last_activity_utc=ago(2))
    make_note(visibility=PRIVATE, title="Lighthouse private")
    public_note("Lighthouse deleted", is_deleted=True)
    attached = make_note(visibility=GATED, title="Lighthouse gated")
    attach_trackable(attached)
    assert found(search(api, "lighthouse")) == [str(public.id), str(gated.id)]


def test_search_never_lists_team_only_notes(api):
    admin = make_user()
    team = make_team(admin)
    category = make_category(team_id=team.id)
    make_note(admin, team_id=team.id, category=category, title="Lighthouse plans")
    shared = make_note(
        admin, team_id=team.id, category=category, visibility=PUBLIC, title="Lighthouse open"
    )
    assert found(api.as_user(admin).get(SEARCH, query_string={"q": "lighthouse"})) == [
        str(shared.id)
    ]


def test_search_does_not_tailor_to_the_caller(api):
    # The owner, and a viewer who unlocked a gated note, still get anonymous discovery.
    owner = make_user()
    make_note(owner, visibility=PRIVATE, title="Lighthouse mine")
    gated = make_note(owner, visibility=GATED, title="Lighthouse gated")
    trackable = attach_trackable(gated)
    viewer = make_user()
    unlock_trackable(viewer, trackable)
    for caller in (owner, viewer):
        assert found(api.as_user(caller).get(SEARCH, query_string={"q": "lighthouse"})) == []


def test_search_follows_edits_and_deletes_made_through_the_api(api):
    owner = make_user()
    client = api.as_user(owner)
    created = client.post("/api/notes/mine", json={"title": "Lighthouse", "visibility": "Public"})
    note_id = created.get_json()["noteId"]
    assert found(search(api, "lighthouse")) == [note_id]
    moved = client.post(f"/api/notes/mine/{note_id}/move", json={"title": "Windmill"})
    assert moved.status_code == 200
    assert found(search(api, "lighthouse")) == []
    assert found(search(api, "windmill")) == [note_id]
    client.post(f"/api/notes/mine/{note_id}/move", json={"visibility": "Private"})
    assert found(search(api, "windmill")) == []
    client.post(f"/api/notes/mine/{note_id}/move", json={"visibility": "Public"})
    assert client.delete(f"/api/notes/mine/{note_id}").status_code == 204
    assert found(search(api, "windmill")) == []


def test_search_records_are_the_records_of_the_other_public_reads(api):
    note = public_note(
        "Lighthouse", "Body text", latitude=1.5, longitude=2.5, content_language="en-GB"
    )
    window = {"minLatitude": 0, "minLongitude": 0, "maxLatitude": 2, "maxLongitude": 3}
    listed = api.get(BOUNDS, query_string=window).get_json()
    searched = search(api, "lighthouse").get_json()
    assert searched == listed
    assert searched[0]["noteId"] == str(note.id)
    assert searched[0]["clientMutationId"] is None


# --- ranking -----------------------------------------------------------------------------


def test_a_title_match_outranks_a_body_match(api):
    filler()
    in_body = public_note("Harbour walk", "Past the lighthouse.", last_activity_utc=ago(1))
    in_title = public_note("Lighthouse", "Past the harbour.", last_activity_utc=ago(5))
    assert found(search(api, "lighthouse")) == [str(in_title.id), str(in_body.id)]


def test_a_note_matching_more_of_the_words_outranks_one_matching_fewer(api):
    filler()
    one = public_note("Coffee", "A cup.", last_activity_utc=ago(1))
    both = public_note("Coffee by the river", "A cup.", last_activity_utc=ago(5))
    assert found(search(api, "coffee or river")) == [str(both.id), str(one.id)]


def test_equal_matches_are_most_recent_activity_first(api):
    filler()
    notes = [public_note("Lighthouse", last_activity_utc=ago(hours)) for hours in (3, 1, 2)]
    expected = [str(notes[1].id), str(notes[2].id), str(notes[0].id)]
    assert found(search(api, "lighthouse")) == expected


# --- query syntax ------------------------------------------------------------------------


def test_every_word_must_match(api):
    both = public_note("Coffee by the river")
    public_note("Coffee in town")
    assert found(search(api, "river coffee")) == [str(both.id)]


def test_a_quoted_phrase_matches_the_words_in_order(api):
    phrase = public_note("Old harbour lighthouse")
    public_note("Lighthouse of the old harbour")
    assert found(search(api, '"harbour lighthouse"')) == [str(phrase.id)]


def test_or_finds_either_word(api):
    coffee = public_note("Coffee", last_activity_utc=ago(1))
    tea = public_note("Tea", last_activity_utc=ago(2))
    public_note("Juice")
    assert sorted(found(search(api, "coffee or tea"))) == sorted([str(coffee.id), str(tea.id)])


def test_a_minus_leaves_out_the_notes_with_the_word(api):
    kept = public_note("Coffee in town")
    public_note("Coffee by the river")
    assert found(search(api, "coffee -river")) == [str(kept.id)]


def test_a_query_of_left_out_words_only_finds_nothing(api):
    public_note("Coffee in town")
    assert found(search(api, "-river")) == []


def test_case_and_diacritics_do_not_matter(api):
    note = public_note("Die Häuser am See", content_language="de-DE")
    assert found(search(api, "HÄUSER")) == [str(note.id)]
    assert found(search(api, "hauser")) == [str(note.id)]


# --- languages ---------------------------------------------------------------------------


def test_a_german_note_is_found_by_the_stem_of_its_words_on_postgresql(app, api):
    note = public_note("Die Häuser am See", content_language="de-DE")
    if on_postgresql(app):
        # German stemming: Häuser, Haus and Hauses are one word.
        assert found(search(api, "Haus")) == [str(note.id)]
        assert found(search(api, "Hauses", contentLanguage="de-DE")) == [str(note.id)]
    else:
        # SQLite: whole words only (no stemming); diacritics and case ignored.
        assert found(search(api, "Haus")) == []
        assert found(search(api, "haeuser")) == []


def test_an_english_note_is_found_by_its_stems_on_postgresql(app, api):
    note = public_note("Walking by the rivers", content_language="en-US")
    expected = [str(note.id)] if on_postgresql(app) else []
    assert found(search(api, "river walks")) == expected


def test_each_note_is_read_in_its_own_language_on_postgresql(app, api):
    # German stemming makes "Häuser" "haus"; an English note with the word "haus" is not
    # German, so the German reading of the query does not find it.
    german = public_note("Haus am See", content_language="de")
    public_note("Haus music night", content_language="en")
    if on_postgresql(app):
        assert found(search(api, "Häuser")) == [str(german.id)]
    else:
        assert found(search(api, "Häuser")) == []


def test_stop_words_of_a_language_are_not_looked_up_in_it_on_postgresql(app, api):
    english = public_note("The harbour", content_language="en")
    expected = [] if on_postgresql(app) else [str(english.id)]
    assert found(search(api, "the")) == expected


def test_content_language_filters_to_one_language(api):
    german = public_note("Hafen Café", content_language="de-DE", last_activity_utc=ago(1))
    public_note("Harbour Café", content_language="en")
    assert found(search(api, "café", contentLanguage="de-de")) == [str(german.id)]
    assert len(found(search(api, "café"))) == 2


def test_a_language_without_a_configuration_is_matched_by_whole_words(api):
    note = public_note("Kawiarnia nad rzeką", content_language="pl")
    assert found(search(api, "kawiarnia")) == [str(note.id)]
    assert found(search(api, "kawiarnia", contentLanguage="pl")) == [str(note.id)]


# --- window ------------------------------------------------------------------------------


def window(min_lat, min_lon, max_lat, max_lon):
    return {
        "minLatitude": min_lat,
        "minLongitude": min_lon,
        "maxLatitude": max_lat,
        "maxLongitude": max_lon,
    }


def test_a_window_keeps_the_notes_inside_it(api):
    inside = public_note("Lighthouse", latitude=1, longitude=1)
    public_note("Lighthouse", latitude=5, longitude=5)
    public_note("Lighthouse")  # not on the map
    assert found(search(api, "lighthouse", **window(0, 0, 2, 2))) == [str(inside.id)]


def test_a_window_across_the_antimeridian(api):
    east = public_note("Lighthouse", latitude=0, longitude=179.5, last_activity_utc=ago(1))
    west = public_note("Lighthouse", latitude=0, longitude=-179.5, last_activity_utc=ago(2))
    public_note("Lighthouse", latitude=0, longitude=0)
    query = window(-1, 179, 1, -179)
    assert found(search(api, "lighthouse", **query)) == [str(east.id), str(west.id)]


def test_without_a_window_notes_off_the_map_are_found(api):
    note = public_note("Lighthouse")
    assert found(search(api, "lighthouse")) == [str(note.id)]


# --- the cap -----------------------------------------------------------------------------


class TestCap:
    @pytest.fixture
    def app_overrides(self):
        return {"PUBLIC_LIST_CAP": 3}

    def test_search_returns_at_most_the_cap_and_says_it_was_cut(self, api):
        notes = [public_note("Lighthouse", last_activity_utc=ago(hours)) for hours in range(4)]
        response = search(api, "lighthouse")
        assert found(response) == [str(note.id) for note in notes[:3]]
        assert response.headers["X-Result-Truncated"] == "true"

    def test_a_list_of_exactly_the_cap_is_not_marked_cut(self, api):
        for _ in range(3):
            public_note("Lighthouse")
        response = search(api, "lighthouse")
        assert len(found(response)) == 3
        assert "X-Result-Truncated" not in response.headers


# --- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({}, "q"),
        ({"q": ""}, "q"),
        ({"q": "   "}, "q"),
        ({"q": "a" * 201}, "q"),
        ({"q": "x", "contentLanguage": "??"}, "contentLanguage"),
        ({"q": "x", "minLatitude": 0, "minLongitude": 0, "maxLatitude": 1}, "maxLongitude"),
        ({"q": "x", **window(5, 0, 1, 1)}, "minLatitude"),
        ({"q": "x", **window(0, 0, 1, 181)}, "maxLongitude"),
        ({"q": "x", **window("nan", 0, 1, 1)}, "minLatitude"),
    ],
)
def test_bad_queries_are_refused_naming_the_field(api, query, field):
    body = assert_problem(api.get(SEARCH, query_string=query), 400)
    assert field in body["errors"]


def test_the_longest_query_is_accepted(api):
    public_note("Lighthouse")
    assert search(api, ("lighthouse " * 20)[:200]).status_code == 200


# Text that is syntax to FTS5 or to tsquery, or just odd: each a 200 (the words it holds,
# if any, looked up) or a 400, never a 500.
HOSTILE = [
    '"',
    '""',
    '"unclosed phrase',
    "*",
    "lighthouse*",
    "NEAR(",
    "NEAR(lighthouse harbour, 2)",
    "-",
    "--",
    "- -",
    "AND",
    "OR",
    "NOT",
    "or or",
    "lighthouse AND",
    "AND lighthouse",
    "lighthouse NOT harbour",
    "(",
    ")",
    "((lighthouse)",
    "{title}: lighthouse",
    "title:lighthouse",
    "body : x",
    "^lighthouse",
    "lighthouse:*",
    "!lighthouse",
    "lighthouse & harbour",
    "lighthouse | harbour",
    "lighthouse <-> harbour",
    "lighthouse <2> harbour",
    "'",
    "''",
    "\\",
    "lighthouse'; DROP TABLE notes; --",
    "%",
    "_",
    "\u202elighthouse",
    "🏠 lighthouse",
    "\u0301",
    "a" * 200,
    "- " * 100,
    "-" * 100 + "x",
    "-(" * 60,
    '"' + "- " * 90 + 'x"',
    '" ' * 100,
    "x " * 100,
]


@pytest.mark.parametrize("q", HOSTILE)
def test_query_syntax_in_the_words_is_never_a_server_error(api, q):
    public_note("Lighthouse by the harbour")
    response = search(api, q)
    assert response.status_code in (200, 400), response.get_data(as_text=True)
    if response.status_code == 400:
        assert_problem(response, 400)


def test_syntax_characters_around_a_word_still_find_it(api):
    note = public_note("Lighthouse by the harbour")
    for q in ("lighthouse*", "(lighthouse)", "^lighthouse", "lighthouse:*", "{harbour}"):
        assert found(search(api, q)) == [str(note.id)], q
