"""GET /api/public/teams/{teamName}/notes/nearby (contract: Public note discovery): the
profile route's query rules, members see what membership allows, everyone else what they
may open; `pageVisibility` respected."""

from __future__ import annotations

import pytest

from app.models.enums import NoteVisibility
from app.models.team import PageVisibility
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
HERE = "latitude=52.52&longitude=13.40"


@pytest.fixture
def team(admin, member):
    return make_team(admin, name="Berlin Hikers", members=(member,))


def nearby(api, user, name="Berlin Hikers", query=HERE):
    return api.as_user(user).get(f"/api/public/teams/{name}/notes/nearby?{query}")


def team_note(team, author, **fields):
    fields.setdefault("latitude", 52.52)
    fields.setdefault("longitude", 13.40)
    return make_note(author, team_id=team.id, **fields)


def ids(response):
    assert response.status_code == 200, response.get_data(as_text=True)
    return {row["noteId"] for row in response.get_json()}


def test_anonymous_callers_see_the_teams_public_notes_only(api, team, member):
    public = team_note(team, member, visibility=PUBLIC)
    team_note(team, member, visibility=PRIVATE)
    make_note(member, visibility=PUBLIC, latitude=52.52, longitude=13.40)  # personal
    assert ids(nearby(api, None)) == {str(public.id)}


def test_members_see_every_team_note(api, team, admin, member):
    public = team_note(team, member, visibility=PUBLIC)
    private = team_note(team, member, visibility=PRIVATE)
    assert ids(nearby(api, admin)) == {str(public.id), str(private.id)}


def test_a_stranger_sees_a_gated_note_only_once_unlocked(api, team, member):
    gated = team_note(team, member, visibility=GATED)
    trackable = attach_trackable(gated)
    stranger = make_user()
    assert ids(nearby(api, stranger)) == set()
    unlock_trackable(stranger, trackable)
    assert ids(nearby(api, stranger)) == {str(gated.id)}


def test_a_members_only_page_is_404_for_others_and_open_to_members(api, admin, member):
    team = make_team(admin, name="Secret", members=(member,))
    team.page_visibility = PageVisibility.MEMBERS_ONLY
    note = team_note(team, member, visibility=PUBLIC)
    assert_problem(nearby(api, None, "Secret"), 404)
    assert_problem(nearby(api, make_user(), "Secret"), 404)
    assert ids(nearby(api, member, "Secret")) == {str(note.id)}


def test_an_unknown_team_is_404(api):
    assert_problem(nearby(api, None, "nobody"), 404)


@pytest.mark.parametrize("name", ["berlin hikers", "BERLIN HIKERS", "berlin-hikers"])
def test_the_team_is_found_by_its_name_in_any_case_or_its_slug(api, team, member, name):
    public = team_note(team, member, visibility=PUBLIC)
    assert ids(nearby(api, None, name)) == {str(public.id)}


def test_the_radius_limits_the_notes(api, team, member):
    near = team_note(team, member, visibility=PUBLIC)
    team_note(team, member, visibility=PUBLIC, latitude=52.60, longitude=13.40)  # ~9 km
    assert ids(nearby(api, None)) == {str(near.id)}
    assert len(ids(nearby(api, None, query=f"{HERE}&radiusKm=10"))) == 2


def test_the_four_bounds_work_too(api, team, member):
    inside = team_note(team, member, visibility=PUBLIC)
    team_note(team, member, visibility=PUBLIC, latitude=10, longitude=10)
    query = "minLatitude=52&minLongitude=13&maxLatitude=53&maxLongitude=14"
    assert ids(nearby(api, None, query=query)) == {str(inside.id)}


def test_a_point_and_bounds_together_are_400(api, team):
    query = f"{HERE}&minLatitude=52&minLongitude=13&maxLatitude=53&maxLongitude=14"
    assert "latitude" in assert_problem(nearby(api, None, query=query), 400)["errors"]


def test_content_language_filters_unless_all_languages_are_asked(api, team, member):
    de = make_category(team_id=team.id, content_language="de")
    fr = make_category(team_id=team.id, content_language="fr")
    german = team_note(team, member, visibility=PUBLIC, category=de)
    french = team_note(team, member, visibility=PUBLIC, category=fr)
    assert ids(nearby(api, None, query=f"{HERE}&contentLanguage=de")) == {str(german.id)}
    both = ids(nearby(api, None, query=f"{HERE}&contentLanguage=de&includeAllLanguages=true"))
    assert both == {str(german.id), str(french.id)}


@pytest.fixture
def app_overrides():
    return {"PUBLIC_LIST_CAP": 2}


def test_the_list_is_capped_and_says_so(api, team, member):
    for _ in range(3):
        team_note(team, member, visibility=PUBLIC)
    response = nearby(api, None)
    assert len(response.get_json()) == 2
    assert response.headers["X-Result-Truncated"] == "true"
