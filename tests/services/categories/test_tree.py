"""Category tree rules in the services, without HTTP (services.categories.tree): parents in
the same scope and language, moves that would make a cycle, deletes that never lose a
note, the per-language "Notes" root, language tags, and whose tree a viewer may use.

Personal trees are `OwnerScope.personal(user.id)`, team trees `OwnerScope.team(team.id)`;
viewers are built the way requests build them. A successful change is committed, as its
route commits it; after a refusal the session is rolled back, as the failed request's
teardown does, and the database is checked.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from sqlalchemy import select

from app.auth import build_viewer
from app.errors import ApiError, Forbidden, NotFound, ValidationFailed
from app.extensions import db
from app.models.category import DEFAULT_CATEGORY_NAME, Category, OwnerScope
from app.models.note import Note
from app.models.team import MembershipStatus, PageVisibility
from app.models.user import User
from app.services import categories
from tests.factories import make_category, make_membership, make_note, make_team, make_user


@pytest.fixture
def alice(app) -> User:
    return make_user("alice")


def _mine(user: User) -> tuple[Any, OwnerScope]:
    return build_viewer(user), OwnerScope.personal(user.id)


def _tree_rows() -> list[tuple[Any, ...]]:
    """Every category as stored, tombstones included."""
    rows = db.session.execute(
        select(
            Category.id,
            Category.parent_category_id,
            Category.name,
            Category.content_language,
            Category.is_deleted,
            Category.owner_user_id,
            Category.team_id,
        ).order_by(Category.id)
    ).all()
    return [tuple(row) for row in rows]


def _note_categories() -> dict[uuid.UUID, uuid.UUID]:
    return dict(db.session.execute(select(Note.id, Note.category_id)).all())


def _field_errors(error: pytest.ExceptionInfo[ValidationFailed]) -> set[str]:
    return set(error.value.extra["errors"])


# --- language tags -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tag", "canonical"),
    [
        ("en-us", "en-US"),
        ("EN", "en"),
        (" de-de ", "de-DE"),
        ("zh-hant-tw", "zh-Hant-TW"),
        ("SR-LATN-rs", "sr-Latn-RS"),
        ("es-419", "es-419"),
        ("sl-ROZAJ", "sl-rozaj"),
        ("de-ch-1901", "de-CH-1901"),
    ],
)
def test_canonical_language_uses_the_conventional_casing(tag, canonical):
    assert categories.canonical_language(tag) == canonical


# --- creating ----------------------------------------------------------------------------

# (content_language given, the parent's language, default_language) -> the new category's
# language, in a personal tree and in a team tree whose content language is de-AT.
LANGUAGE_TABLE = [
    pytest.param("personal", "fr-ca", None, "en", "fr-CA", id="personal-given"),
    pytest.param("personal", None, None, "en-gb", "en-GB", id="personal-default"),
    pytest.param("personal", None, "it", "en", "it", id="personal-parents"),
    pytest.param("personal", "IT", "it", "en", "it", id="personal-given-matches-parent"),
    pytest.param("team", "fr-ca", None, "en", "fr-CA", id="team-given"),
    pytest.param("team", None, None, "en", "de-AT", id="team-teams-not-the-default"),
    pytest.param("team", None, "it", "en", "it", id="team-parents"),
]


@pytest.mark.parametrize(
    ("kind", "given", "parent_language", "default", "expected"), LANGUAGE_TABLE
)
def test_the_language_of_a_new_category(alice, kind, given, parent_language, default, expected):
    team = make_team(alice, content_language="de-AT") if kind == "team" else None
    scope = OwnerScope.team(team.id) if team else OwnerScope.personal(alice.id)
    parent = None
    if parent_language:
        parent = make_category(
            alice, team_id=team.id if team else None, content_language=parent_language
        )
    category = categories.create_category(
        build_viewer(alice),
        scope,
        name="New",
        content_language=given,
        parent_category_id=parent.id if parent else None,
        default_language=default,
    )
    db.session.commit()
    stored = db.session.get(Category, category.id)
    assert stored.content_language == expected
    assert stored.parent_category_id == (parent.id if parent else None)
    assert (stored.owner_user_id, stored.team_id) == ((None, team.id) if team else (alice.id, None))


def _parent_elsewhere(alice: User, where: str) -> uuid.UUID:
    """A category id that cannot be a parent in alice's English tree."""
    if where == "another_language":
        return make_category(alice, content_language="de").id
    if where == "another_users_tree":
        return make_category(make_user(), content_language="en").id
    if where == "a_team_tree_of_hers":
        team = make_team(alice)
        return make_category(alice, team_id=team.id, content_language="en").id
    if where == "a_deleted_category":
        return make_category(alice, content_language="en", is_deleted=True).id
    return uuid.uuid4()  # no category at all


PARENTS_ELSEWHERE = [
    "another_language",
    "another_users_tree",
    "a_team_tree_of_hers",
    "a_deleted_category",
    "unknown",
]


@pytest.mark.parametrize("where", PARENTS_ELSEWHERE)
def test_create_under_a_parent_outside_the_scope_and_language_is_400_on_parent(alice, where):
    parent_id = _parent_elsewhere(alice, where)
    before = _tree_rows()
    viewer, scope = _mine(alice)
    with pytest.raises(ValidationFailed) as refused:
        categories.create_category(
            viewer,
            scope,
            name="Child",
            content_language="en",
            parent_category_id=parent_id,
            default_language="en",
        )
    assert _field_errors(refused) == {"parentCategoryId"}
    db.session.rollback()
    assert _tree_rows() == before


# --- moving ------------------------------------------------------------------------------


@pytest.fixture
def forest(alice) -> dict[str, Category]:
    """alice's tree. en: Animals; Walks > (beaches, City > Park, a deleted Old). de:
    Wanderungen."""
    walks = make_category(alice, name="Walks", content_language="en")
    city = make_category(alice, name="City", parent=walks)
    return {
        "walks": walks,
        "city": city,
        "park": make_category(alice, name="Park", parent=city),
        "beaches": make_category(alice, name="beaches", parent=walks),
        "old": make_category(alice, name="Old", parent=walks, is_deleted=True),
        "animals": make_category(alice, name="Animals", content_language="en"),
        "wanderungen": make_category(alice, name="Wanderungen", content_language="de"),
    }


def _move(user: User, category: Category, **changes: Any) -> Category:
    viewer, scope = _mine(user)
    moved = categories.move_category(viewer, scope, category.id, changes)
    db.session.commit()
    return moved


def test_move_renames_and_keeps_the_parent(alice, forest):
    _move(alice, forest["city"], name="Town")
    stored = db.session.get(Category, forest["city"].id)
    assert (stored.name, stored.parent_category_id) == ("Town", forest["walks"].id)


def test_move_re_parents_with_the_subtree(alice, forest):
    _move(alice, forest["city"], parent_category_id=forest["animals"].id)
    assert db.session.get(Category, forest["city"].id).parent_category_id == forest["animals"].id
    assert db.session.get(Category, forest["park"].id).parent_category_id == forest["city"].id


def test_move_with_no_parent_makes_a_root(alice, forest):
    _move(alice, forest["park"], parent_category_id=None)
    assert db.session.get(Category, forest["park"].id).parent_category_id is None


@pytest.mark.parametrize("target", ["walks", "city", "park"], ids=["itself", "child", "grandchild"])
def test_move_into_its_own_subtree_is_400_and_changes_nothing(alice, forest, target):
    before = _tree_rows()
    viewer, scope = _mine(alice)
    with pytest.raises(ValidationFailed) as refused:
        categories.move_category(
            viewer,
            scope,
            forest["walks"].id,
            {"name": "Renamed", "parent_category_id": forest[target].id},
        )
    assert _field_errors(refused) == {"parentCategoryId"}
    db.session.rollback()
    assert _tree_rows() == before


@pytest.mark.parametrize("where", PARENTS_ELSEWHERE)
def test_move_under_a_parent_outside_the_scope_and_language_is_400(alice, forest, where):
    parent_id = _parent_elsewhere(alice, where)
    before = _tree_rows()
    viewer, scope = _mine(alice)
    with pytest.raises(ValidationFailed) as refused:
        categories.move_category(
            viewer, scope, forest["city"].id, {"parent_category_id": parent_id}
        )
    assert _field_errors(refused) == {"parentCategoryId"}
    db.session.rollback()
    assert _tree_rows() == before


def test_move_cannot_change_the_language(alice, forest):
    before = _tree_rows()
    viewer, scope = _mine(alice)
    with pytest.raises(ValidationFailed) as refused:
        categories.move_category(viewer, scope, forest["city"].id, {"content_language": "de"})
    assert _field_errors(refused) == {"contentLanguage"}
    db.session.rollback()
    assert _tree_rows() == before


def test_move_naming_the_same_language_in_another_case_is_allowed(alice, forest):
    _move(alice, forest["city"], content_language="EN", name="Town")
    stored = db.session.get(Category, forest["city"].id)
    assert (stored.name, stored.content_language) == ("Town", "en")


def test_move_of_a_category_outside_the_scope_is_404(alice, forest):
    bob = make_user()
    before = _tree_rows()
    viewer, scope = _mine(bob)
    with pytest.raises(NotFound):
        categories.move_category(viewer, scope, forest["city"].id, {"name": "Mine now"})
    db.session.rollback()
    assert _tree_rows() == before


# --- deleting ----------------------------------------------------------------------------


def _delete(user: User, category: Category) -> None:
    viewer, scope = _mine(user)
    categories.delete_category(viewer, scope, category.id)
    db.session.commit()


def test_delete_moves_live_notes_and_children_to_the_parent(alice, forest):
    city, walks = forest["city"], forest["walks"]
    live = make_note(alice, category=city)
    gone = make_note(alice, category=city, is_deleted=True)
    _delete(alice, city)
    assert db.session.get(Category, city.id).is_deleted  # kept as a tombstone
    assert db.session.get(Category, forest["park"].id).parent_category_id == walks.id
    notes = _note_categories()
    assert notes[live.id] == walks.id
    assert notes[gone.id] == city.id  # a tombstoned note stays with its tombstoned category
    viewer, scope = _mine(alice)
    assert city.id not in {c.id for c in categories.list_categories(viewer, scope).items}


def test_delete_moves_only_the_direct_children(alice, forest):
    bench = make_category(alice, name="Bench", parent=forest["park"])
    _delete(alice, forest["city"])
    parents = {row[0]: row[1] for row in _tree_rows()}
    assert parents[forest["park"].id] == forest["walks"].id
    assert parents[bench.id] == forest["park"].id  # the grandchild stays with its parent
    assert parents[forest["beaches"].id] == forest["walks"].id


@pytest.mark.parametrize("holding", ["a_child", "a_live_note"])
def test_a_root_that_still_holds_something_cannot_be_deleted(alice, holding):
    root = make_category(alice, name="Root")
    if holding == "a_child":
        make_category(alice, parent=root)
    else:
        make_note(alice, category=root)
    before, notes = _tree_rows(), _note_categories()
    viewer, scope = _mine(alice)
    with pytest.raises(ApiError) as refused:
        categories.delete_category(viewer, scope, root.id)
    assert refused.value.status == 400
    db.session.rollback()
    assert _tree_rows() == before
    assert _note_categories() == notes


@pytest.mark.parametrize("holding", ["nothing", "a_deleted_child", "a_deleted_note"])
def test_a_root_without_live_content_can_be_deleted(alice, holding):
    root = make_category(alice, name="Root")
    if holding == "a_deleted_child":
        make_category(alice, parent=root, is_deleted=True)
    elif holding == "a_deleted_note":
        make_note(alice, category=root, is_deleted=True)
    _delete(alice, root)
    assert db.session.get(Category, root.id).is_deleted


def test_deleting_a_deleted_category_is_404(alice, forest):
    viewer, scope = _mine(alice)
    with pytest.raises(NotFound):
        categories.delete_category(viewer, scope, forest["old"].id)


# --- reading the tree --------------------------------------------------------------------


def test_list_is_the_scopes_live_categories_by_language_then_name(alice, forest):
    make_category(make_user(), name="Bobs")  # another user's
    viewer, scope = _mine(alice)
    listed = categories.list_categories(viewer, scope).items
    assert [c.name for c in listed] == [
        "Wanderungen",
        "Animals",
        "beaches",
        "City",
        "Park",
        "Walks",
    ]


def test_list_filters_by_the_canonical_language(alice, forest):
    make_category(alice, name="Yankee", content_language="en-US")
    viewer, scope = _mine(alice)
    assert [c.name for c in categories.list_categories(viewer, scope, "EN-us").items] == ["Yankee"]


def test_tree_nests_the_children_by_name_with_their_counts(alice, forest):
    viewer, scope = _mine(alice)

    def shape(nodes: list[dict]) -> list[tuple[str, int, list]]:
        return [(n["name"], n["child_category_count"], shape(n["children"])) for n in nodes]

    assert shape(categories.tree(viewer, scope)) == [
        ("Wanderungen", 0, []),
        ("Animals", 0, []),
        ("Walks", 2, [("beaches", 0, []), ("City", 1, [("Park", 0, [])])]),
    ]


def test_sections_hold_each_languages_roots_with_their_counts(alice, forest):
    viewer, scope = _mine(alice)
    found = [
        (
            s["content_language"],
            [(r["name"], r["child_category_count"]) for r in s["root_categories"]],
        )
        for s in categories.sections(viewer, scope)
    ]
    assert found == [("de", [("Wanderungen", 0)]), ("en", [("Animals", 0), ("Walks", 2)])]


def test_children_are_the_direct_live_children_with_their_counts(alice, forest):
    viewer, scope = _mine(alice)
    found = categories.children(viewer, scope, forest["walks"].id)
    assert [(n["name"], n["child_category_count"]) for n in found] == [("beaches", 0), ("City", 1)]


def test_children_without_a_parent_are_the_roots_of_the_language(alice, forest):
    viewer, scope = _mine(alice)
    assert [n["name"] for n in categories.children(viewer, scope)] == [
        "Wanderungen",
        "Animals",
        "Walks",
    ]
    assert [n["name"] for n in categories.children(viewer, scope, None, "EN")] == [
        "Animals",
        "Walks",
    ]


@pytest.mark.parametrize("parent", ["deleted", "another_users", "unknown"])
def test_children_of_a_parent_outside_the_tree_is_404(alice, forest, parent):
    parent_id = {
        "deleted": forest["old"].id,
        "another_users": make_category(make_user()).id,
        "unknown": uuid.uuid4(),
    }[parent]
    viewer, scope = _mine(alice)
    with pytest.raises(NotFound):
        categories.children(viewer, scope, parent_id)


# --- the default root --------------------------------------------------------------------


def _notes_roots() -> list[tuple[Any, ...]]:
    return [
        row
        for row in _tree_rows()
        if row[2] == DEFAULT_CATEGORY_NAME and row[1] is None and not row[4]
    ]


def test_default_category_makes_the_notes_root_once_and_returns_it_after(alice):
    scope = OwnerScope.personal(alice.id)
    first = categories.default_category(scope, "en-us")
    db.session.commit()
    again = categories.default_category(scope, "EN-US")
    db.session.commit()
    assert again.id == first.id
    assert _notes_roots() == [
        (first.id, None, "Notes", "en-US", False, alice.id, None),
    ]


def test_default_category_is_one_per_scope_and_language(alice):
    team = make_team(alice)
    scopes = [OwnerScope.personal(alice.id), OwnerScope.team(team.id)]
    made = {
        (scope, language): categories.default_category(scope, language).id
        for scope in scopes
        for language in ("en", "de")
    }
    db.session.commit()
    assert len(set(made.values())) == 4
    assert len(_notes_roots()) == 4
    for (scope, language), category_id in made.items():
        assert categories.default_category(scope, language).id == category_id


@pytest.mark.parametrize(
    ("existing", "reused"),
    [("a_live_root", True), ("a_child", False), ("a_deleted_root", False)],
)
def test_default_category_reuses_only_a_live_root_named_notes(alice, existing, reused):
    parent = make_category(alice, name="Trips") if existing == "a_child" else None
    found = make_category(
        alice, name="Notes", parent=parent, is_deleted=existing == "a_deleted_root"
    )
    default = categories.default_category(OwnerScope.personal(alice.id), "en")
    db.session.commit()
    assert (default.id == found.id) is reused
    assert default.parent_category_id is None
    assert not default.is_deleted


# --- the category a note names -----------------------------------------------------------


def test_category_for_note_without_a_category_is_none(alice):
    assert categories.category_for_note(OwnerScope.personal(alice.id), None, "en") is None


@pytest.mark.parametrize("language", ["en-us", "EN-US", None])
def test_category_for_note_finds_the_category_in_the_scope_and_language(alice, language):
    category = make_category(alice, content_language="en-US")
    found = categories.category_for_note(OwnerScope.personal(alice.id), category.id, language)
    assert found.id == category.id


@pytest.mark.parametrize("where", PARENTS_ELSEWHERE)
def test_category_for_note_outside_the_scope_and_language_is_400_on_category(alice, where):
    category_id = _parent_elsewhere(alice, where)
    with pytest.raises(ValidationFailed) as refused:
        categories.category_for_note(OwnerScope.personal(alice.id), category_id, "en")
    assert _field_errors(refused) == {"categoryId"}


# --- whose tree --------------------------------------------------------------------------

OPERATIONS = ("list", "tree", "sections", "children", "create", "move", "delete")


def _use(viewer: Any, scope: OwnerScope, category_id: uuid.UUID, operation: str) -> Any:
    if operation == "list":
        return categories.list_categories(viewer, scope).items
    if operation == "tree":
        return categories.tree(viewer, scope)
    if operation == "sections":
        return categories.sections(viewer, scope)
    if operation == "children":
        return categories.children(viewer, scope)
    if operation == "create":
        return categories.create_category(viewer, scope, name="Mine", default_language="en")
    if operation == "move":
        return categories.move_category(viewer, scope, category_id, {"name": "Mine"})
    return categories.delete_category(viewer, scope, category_id)


def _foreign_tree(alice: User, whose: str) -> tuple[OwnerScope, uuid.UUID]:
    """A tree alice may not use, and an (empty root) category in it."""
    if whose == "another_users":
        bob = make_user()
        return OwnerScope.personal(bob.id), make_category(bob).id
    team = make_team(make_user(), page_visibility=PageVisibility.MEMBERS_ONLY)
    if whose in {"invited", "requesting"}:
        status = MembershipStatus.INVITED if whose == "invited" else MembershipStatus.REQUESTING
        make_membership(team, alice, status=status)
    return OwnerScope.team(team.id), make_category(team_id=team.id).id


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("whose", ["another_users", "a_non_members_team", "invited", "requesting"])
def test_a_tree_the_viewer_may_not_use_is_404(alice, whose, operation):
    scope, category_id = _foreign_tree(alice, whose)
    before = _tree_rows()
    with pytest.raises(NotFound):
        _use(build_viewer(alice), scope, category_id, operation)
    db.session.rollback()
    assert _tree_rows() == before


@pytest.mark.parametrize("operation", OPERATIONS)
def test_a_public_teams_tree_is_403_to_a_non_member(alice, operation):
    team = make_team(make_user())
    scope, category_id = OwnerScope.team(team.id), make_category(team_id=team.id).id
    before = _tree_rows()
    with pytest.raises(Forbidden):
        _use(build_viewer(alice), scope, category_id, operation)
    db.session.rollback()
    assert _tree_rows() == before


@pytest.mark.parametrize("operation", OPERATIONS)
def test_an_active_member_uses_the_teams_tree(alice, operation):
    team = make_team(make_user(), members=(alice,))
    category_id = make_category(team_id=team.id).id
    _use(build_viewer(alice), OwnerScope.team(team.id), category_id, operation)
    db.session.commit()
    rows = {row[0]: row for row in _tree_rows()}
    if operation == "move":
        assert rows[category_id][2] == "Mine"
    elif operation == "delete":
        assert rows[category_id][4] is True
    elif operation == "create":
        assert [row[2] for row in rows.values() if row[0] != category_id] == ["Mine"]


def test_a_refused_move_applies_nothing_even_when_the_caller_commits(alice, forest):
    """Everything is checked before anything is applied: a rename that comes with a
    refused parent is not left behind for a later commit to save."""
    viewer, scope = _mine(alice)
    city = forest["city"]
    with pytest.raises(ValidationFailed):
        categories.move_category(
            viewer, scope, city.id, {"name": "Renamed", "parent_category_id": city.id}
        )
    db.session.commit()
    db.session.expire_all()
    assert db.session.get(Category, city.id).name != "Renamed"
