"""Team categories under /api/teams/{teamId}/categories (contract: Categories, the team
equivalents): the personal routes' shapes, inside the team's tree, for active members."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import delete

from app.extensions import db
from app.models.category import Category
from app.models.team import PageVisibility, TeamMembership
from tests.conftest import assert_problem
from tests.factories import make_category, make_note, make_team, make_user


def url(team, suffix=""):
    return f"/api/teams/{team.id}/categories{suffix}"


def test_a_member_creates_a_team_category_in_the_teams_language(api, team, member):
    response = api.as_user(member).post(url(team), json={"name": "Huts"})
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == {"categoryId", "name", "contentLanguage", "parentCategoryId"}
    assert (body["name"], body["contentLanguage"], body["parentCategoryId"]) == ("Huts", "de", None)
    stored = db.session.get(Category, uuid.UUID(body["categoryId"]))
    assert (stored.team_id, stored.owner_user_id) == (team.id, None)


def test_create_under_a_team_parent_takes_its_language(api, team, member):
    parent = make_category(team_id=team.id, content_language="fr")
    body = (
        api.as_user(member)
        .post(url(team), json={"name": "Alps", "parentCategoryId": str(parent.id)})
        .get_json()
    )
    assert (body["parentCategoryId"], body["contentLanguage"]) == (str(parent.id), "fr")


def test_create_under_a_personal_parent_is_400(api, team, member):
    mine = make_category(member, content_language="de")
    response = api.as_user(member).post(
        url(team), json={"name": "x", "parentCategoryId": str(mine.id)}
    )
    assert "parentCategoryId" in assert_problem(response, 400)["errors"]


def test_list_tree_sections_and_children_show_only_the_team_tree(api, team, member):
    root = make_category(team_id=team.id, name="Alps", content_language="de")
    child = make_category(team_id=team.id, name="Huts", parent=root)
    make_category(member, name="Mine", content_language="de")  # personal: left out
    make_category(team_id=make_team(member).id, name="Other team")  # left out
    client = api.as_user(member)
    assert [c["name"] for c in client.get(url(team)).get_json()] == ["Alps", "Huts"]
    tree = client.get(url(team, "/tree")).get_json()
    assert [(n["name"], n["childCategoryCount"]) for n in tree] == [("Alps", 1)]
    assert [n["name"] for n in tree[0]["children"]] == ["Huts"]
    sections = client.get(url(team, "/tree/sections")).get_json()
    assert sections == [
        {
            "contentLanguage": "de",
            "rootCategories": [
                {
                    "categoryId": str(root.id),
                    "name": "Alps",
                    "contentLanguage": "de",
                    "parentCategoryId": None,
                    "childCategoryCount": 1,
                }
            ],
        }
    ]
    children = client.get(url(team, f"/tree/children?parentCategoryId={root.id}")).get_json()
    assert [(n["categoryId"], n["childCategoryCount"]) for n in children] == [(str(child.id), 0)]


def test_children_of_a_personal_category_is_404(api, team, member):
    mine = make_category(member)
    assert_problem(
        api.as_user(member).get(url(team, f"/tree/children?parentCategoryId={mine.id}")), 404
    )


def test_move_renames_and_reparents_inside_the_team(api, team, member):
    root = make_category(team_id=team.id, name="Alps", content_language="de")
    other = make_category(team_id=team.id, name="Lakes", content_language="de")
    response = api.as_user(member).post(
        url(team, f"/{other.id}/move"), json={"name": "Tarns", "parentCategoryId": str(root.id)}
    )
    assert response.status_code == 200
    assert (response.get_json()["name"], response.get_json()["parentCategoryId"]) == (
        "Tarns",
        str(root.id),
    )


def test_move_under_a_personal_parent_is_400(api, team, member):
    folder = make_category(team_id=team.id, content_language="de")
    mine = make_category(member, content_language="de")
    response = api.as_user(member).post(
        url(team, f"/{folder.id}/move"), json={"parentCategoryId": str(mine.id)}
    )
    assert "parentCategoryId" in assert_problem(response, 400)["errors"]


def test_a_personal_category_under_the_team_path_is_404(api, team, member):
    mine = make_category(member)
    assert_problem(api.as_user(member).post(url(team, f"/{mine.id}/move"), json={"name": "x"}), 404)
    assert_problem(api.as_user(member).delete(url(team, f"/{mine.id}")), 404)


def test_delete_moves_notes_up_and_keeps_them_in_the_team(api, team, member):
    root = make_category(team_id=team.id, content_language="de")
    child = make_category(team_id=team.id, parent=root)
    note = make_note(member, team_id=team.id, category=child)
    assert api.as_user(member).delete(url(team, f"/{child.id}")).status_code == 204
    db.session.expire_all()
    assert db.session.get(Category, child.id).is_deleted
    assert db.session.get(type(note), note.id).category_id == root.id
    assert [c["categoryId"] for c in api.as_user(member).get(url(team)).get_json()] == [
        str(root.id)
    ]


ROUTES = [
    ("GET", ""),
    ("GET", "/tree"),
    ("GET", "/tree/sections"),
    ("GET", "/tree/children"),
    ("POST", ""),
    ("POST", "/{category}/move"),
    ("DELETE", "/{category}"),
]


@pytest.mark.parametrize(
    ("page", "status"), [(PageVisibility.PUBLIC, 403), (PageVisibility.MEMBERS_ONLY, 404)]
)
@pytest.mark.parametrize(("method", "suffix"), ROUTES)
def test_every_team_category_route_refuses_a_stranger_403_or_hides_a_members_only_team(
    api, team, method, suffix, page, status
):
    team.page_visibility = page
    db.session.commit()
    category = make_category(team_id=team.id)
    response = api.as_user(make_user()).open(
        method, url(team, suffix.format(category=category.id)), json={"name": "x"}
    )
    assert_problem(response, status)
    assert db.session.get(Category, category.id).name != "x"


@pytest.mark.parametrize(("method", "suffix"), ROUTES)
def test_team_category_routes_end_for_a_removed_member(api, team, member, method, suffix):
    category = make_category(team_id=team.id)
    client = api.as_user(member)
    assert client.get(url(team)).status_code == 200
    db.session.execute(delete(TeamMembership).where(TeamMembership.user_id == member.id))
    db.session.commit()
    response = client.open(
        method, url(team, suffix.format(category=category.id)), json={"name": "x"}
    )
    assert_problem(response, 403)  # the team's page is public: it stays visible


def test_an_unknown_team_is_404(api, member):
    assert_problem(api.as_user(member).get(f"/api/teams/{uuid.uuid4()}/categories"), 404)
