"""Personal categories: /api/categories/mine and its tree helpers (contract: Categories;
Category). Deleting never loses a note: contents move to the parent."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from app.extensions import db
from app.models.category import Category
from tests.conftest import assert_problem
from tests.factories import make_category, make_note, make_user

MINE = "/api/categories/mine"
UNKNOWN_ID = "00000000-0000-4000-8000-000000000001"  # fixed: parametrize ids must be stable


@pytest.fixture
def alice(app):
    return make_user("alice")


def names(items):
    return [item["name"] for item in items]


# --- create ------------------------------------------------------------------------------


def test_create_root_is_201_with_the_record(api, alice):
    response = api.as_user(alice).post(MINE, json={"name": "Walks", "contentLanguage": "en-gb"})
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == {"categoryId", "name", "contentLanguage", "parentCategoryId"}
    assert (body["name"], body["contentLanguage"], body["parentCategoryId"]) == (
        "Walks",
        "en-GB",
        None,
    )
    stored = db.session.get(Category, uuid.UUID(body["categoryId"]))
    assert stored.owner_user_id == alice.id


def test_create_child_takes_the_parents_language(api, alice):
    parent = make_category(alice, content_language="de")
    body = (
        api.as_user(alice)
        .post(MINE, json={"name": "Berlin", "parentCategoryId": str(parent.id)})
        .get_json()
    )
    assert (body["contentLanguage"], body["parentCategoryId"]) == ("de", str(parent.id))


def test_create_under_a_parent_of_another_language_is_400(api, alice):
    parent = make_category(alice, content_language="de")
    response = api.as_user(alice).post(
        MINE, json={"name": "x", "contentLanguage": "fr", "parentCategoryId": str(parent.id)}
    )
    assert "parentCategoryId" in assert_problem(response, 400)["errors"]


def test_create_under_someone_elses_category_is_400(api, alice):
    parent = make_category(make_user())
    response = api.as_user(alice).post(MINE, json={"name": "x", "parentCategoryId": str(parent.id)})
    assert "parentCategoryId" in assert_problem(response, 400)["errors"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": "  "}, "name"),
        ({"name": "x" * 101}, "name"),
        ({"name": "x", "contentLanguage": "not a tag"}, "contentLanguage"),
        ({"name": "x", "parentCategoryId": "nope"}, "parentCategoryId"),
    ],
)
def test_create_rejects_invalid_fields_naming_them(api, alice, body, field):
    assert field in assert_problem(api.as_user(alice).post(MINE, json=body), 400)["errors"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", MINE),
        ("GET", f"{MINE}/tree"),
        ("GET", f"{MINE}/tree/sections"),
        ("GET", f"{MINE}/tree/children"),
        ("POST", MINE),
        ("POST", f"{MINE}/{UNKNOWN_ID}/move"),
        ("DELETE", f"{MINE}/{UNKNOWN_ID}"),
    ],
)
def test_category_routes_need_a_token(api, method, path):
    assert_problem(api.open(method, path, json={}), 401)


# --- reads -------------------------------------------------------------------------------


def test_list_shows_only_my_live_categories_by_language_then_name(api, alice):
    make_category(alice, name="b-walks", content_language="en")
    make_category(alice, name="A-walks", content_language="en")
    make_category(alice, name="Wanderungen", content_language="de")
    make_category(alice, name="Gone", is_deleted=True)
    make_category(make_user(), name="Not mine")
    listed = api.as_user(alice).get(MINE).get_json()
    assert names(listed) == ["Wanderungen", "A-walks", "b-walks"]


def test_list_filters_by_content_language(api, alice):
    make_category(alice, name="Wanderungen", content_language="de")
    make_category(alice, name="Walks", content_language="en")
    assert names(api.as_user(alice).get(f"{MINE}?contentLanguage=de").get_json()) == ["Wanderungen"]


@pytest.fixture
def forest(alice):
    walks = make_category(alice, name="Walks", content_language="en")
    city = make_category(alice, name="City", parent=walks)
    park = make_category(alice, name="Park", parent=city)
    coast = make_category(alice, name="Coast", parent=walks)
    german = make_category(alice, name="Wanderungen", content_language="de")
    return {"walks": walks, "city": city, "park": park, "coast": coast, "german": german}


def test_tree_nests_children_with_counts(api, alice, forest):
    tree = api.as_user(alice).get(f"{MINE}/tree").get_json()
    assert names(tree) == ["Wanderungen", "Walks"]
    walks = tree[1]
    assert walks["childCategoryCount"] == 2
    assert names(walks["children"]) == ["City", "Coast"]
    city = walks["children"][0]
    assert (city["childCategoryCount"], names(city["children"])) == (1, ["Park"])
    assert city["children"][0]["children"] == []
    assert city["parentCategoryId"] == str(forest["walks"].id)


def test_sections_group_roots_by_language(api, alice, forest):
    sections = api.as_user(alice).get(f"{MINE}/tree/sections").get_json()
    assert [section["contentLanguage"] for section in sections] == ["de", "en"]
    english = sections[1]["rootCategories"]
    assert names(english) == ["Walks"]
    assert english[0]["childCategoryCount"] == 2
    assert "children" not in english[0]


def test_children_lists_direct_children_with_counts(api, alice, forest):
    query = f"parentCategoryId={forest['walks'].id}"
    children = api.as_user(alice).get(f"{MINE}/tree/children?{query}").get_json()
    assert names(children) == ["City", "Coast"]
    assert [child["childCategoryCount"] for child in children] == [1, 0]


def test_children_without_a_parent_lists_the_roots(api, alice, forest):
    roots = api.as_user(alice).get(f"{MINE}/tree/children?contentLanguage=en").get_json()
    assert names(roots) == ["Walks"]


def test_children_of_someone_elses_category_is_404(api, alice):
    other = make_category(make_user())
    response = api.as_user(alice).get(f"{MINE}/tree/children?parentCategoryId={other.id}")
    assert_problem(response, 404)


# --- move --------------------------------------------------------------------------------


def move(api, user, category, **body):
    return api.as_user(user).post(f"{MINE}/{category.id}/move", json=body)


def test_move_renames(api, alice, forest):
    response = move(api, alice, forest["city"], name="Town")
    assert response.status_code == 200
    assert response.get_json()["name"] == "Town"
    assert response.get_json()["parentCategoryId"] == str(forest["walks"].id)


def test_move_re_parents(api, alice, forest):
    body = move(api, alice, forest["park"], parentCategoryId=str(forest["coast"].id)).get_json()
    assert body["parentCategoryId"] == str(forest["coast"].id)


def test_move_with_null_parent_makes_a_root(api, alice, forest):
    assert (
        move(api, alice, forest["city"], parentCategoryId=None).get_json()["parentCategoryId"]
        is None
    )


@pytest.mark.parametrize("target", ["walks", "city", "park"])
def test_move_into_its_own_subtree_is_400(api, alice, forest, target):
    response = move(api, alice, forest["walks"], parentCategoryId=str(forest[target].id))
    assert "parentCategoryId" in assert_problem(response, 400)["errors"]


def test_move_under_another_language_is_400(api, alice, forest):
    response = move(api, alice, forest["city"], parentCategoryId=str(forest["german"].id))
    assert "parentCategoryId" in assert_problem(response, 400)["errors"]


def test_move_cannot_change_the_language(api, alice, forest):
    response = move(api, alice, forest["city"], contentLanguage="de")
    assert "contentLanguage" in assert_problem(response, 400)["errors"]


def test_move_of_someone_elses_category_is_404(api, alice):
    assert_problem(move(api, alice, make_category(make_user()), name="x"), 404)


# --- delete ------------------------------------------------------------------------------


def delete(api, user, category):
    return api.as_user(user).delete(f"{MINE}/{category.id}")


def test_delete_moves_notes_and_children_to_the_parent(api, alice, forest):
    note = make_note(alice, category=forest["city"])
    assert delete(api, alice, forest["city"]).status_code == 204
    tree = api.as_user(alice).get(f"{MINE}/tree?contentLanguage=en").get_json()
    assert names(tree[0]["children"]) == ["Coast", "Park"]
    notes = api.as_user(alice).get("/api/notes/mine").get_json()
    assert [(item["noteId"], item["categoryId"]) for item in notes] == [
        (str(note.id), str(forest["walks"].id))
    ]


def test_notes_moved_by_a_category_delete_get_a_new_update_time(api, alice, forest):
    long_ago = datetime(2020, 1, 1, tzinfo=UTC)
    make_note(alice, category=forest["park"], updated_utc=long_ago)
    delete(api, alice, forest["park"])
    assert api.as_user(alice).get("/api/notes/mine").get_json()[0]["updatedUtc"] > "2021"


def test_delete_of_an_empty_root_is_204_and_it_leaves_every_read(api, alice, forest):
    assert delete(api, alice, forest["german"]).status_code == 204
    assert "Wanderungen" not in names(api.as_user(alice).get(MINE).get_json())
    assert_problem(move(api, alice, forest["german"], name="back"), 404)


def test_delete_of_a_root_with_children_is_400(api, alice, forest):
    assert_problem(delete(api, alice, forest["walks"]), 400)
    assert "Walks" in names(api.as_user(alice).get(MINE).get_json())


def test_delete_of_a_root_with_notes_is_400_and_keeps_them(api, alice):
    root = make_category(alice)
    note = make_note(alice, category=root)
    assert_problem(delete(api, alice, root), 400)
    assert api.as_user(alice).get("/api/notes/mine").get_json()[0]["noteId"] == str(note.id)


def test_delete_of_a_root_holding_only_deleted_notes_is_allowed(api, alice):
    root = make_category(alice)
    make_note(alice, category=root, is_deleted=True)
    assert delete(api, alice, root).status_code == 204


def test_delete_twice_is_404(api, alice, forest):
    delete(api, alice, forest["park"])
    assert_problem(delete(api, alice, forest["park"]), 404)


def test_delete_of_someone_elses_category_is_404(api, alice):
    assert_problem(delete(api, alice, make_category(make_user())), 404)


def test_deleted_category_cannot_take_new_notes(api, alice, forest):
    delete(api, alice, forest["park"])
    response = api.as_user(alice).post(
        "/api/notes/mine", json={"title": "x", "categoryId": str(forest["park"].id)}
    )
    assert "categoryId" in assert_problem(response, 400)["errors"]
