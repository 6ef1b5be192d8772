"""Category routes (contract: Categories; Teams): the seven routes of a category tree,
served twice from one implementation, for the caller's personal tree under
`/api/categories/mine` and for a team's tree under `/api/teams/{teamId}/categories`. The
scope is the only difference; who may use it is policies.categories."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

from flask import current_app

from app.api.base import Blueprint
from app.api.categories.schemas import (
    CategoryChildrenQuerySchema,
    CategoryCreateSchema,
    CategoryListQuerySchema,
    CategoryMoveSchema,
    CategoryNodeSchema,
    CategoryPageQuerySchema,
    CategorySchema,
    CategorySectionSchema,
    CategoryTreeNodeSchema,
)
from app.api.mobile import require_supported_mobile_version
from app.api.pages import LINK_HEADERS, list_answer
from app.api.scopes import my_scope, team_scope
from app.auth import current_viewer
from app.extensions import db
from app.models.category import OwnerScope
from app.services import categories

blp = Blueprint(
    "categories", __name__, url_prefix="/api/categories", description="Personal categories"
)
team_blp = Blueprint(
    "team_categories", __name__, url_prefix="/api/teams", description="Team categories"
)
team_blp.before_request(require_supported_mobile_version)  # team management (Versioning 2)

ScopeOf = Callable[..., OwnerScope]  # the path's parameters -> the tree's scope


def _documented(summary: str, description: str) -> Callable[[Any], Any]:
    """Set a route's docstring (its OpenAPI summary and description) before the
    decorators that copy it wrap the function."""

    def decorate(func: Any) -> Any:
        func.__doc__ = f"{summary}\n\n{description}"
        return func

    return decorate


def add_category_routes(blp: Blueprint, base: str, scope_of: ScopeOf, *, whose: str) -> None:
    """The seven routes of one kind of tree on `blp`, under `base`; `whose` names the tree
    in the summaries ("my", "a team's")."""
    one = f"{base}/<uuid:category_id>"

    @blp.route(base, methods=["GET"])
    @blp.auth()
    @blp.arguments(CategoryPageQuerySchema, location="query")
    @blp.response(200, CategorySchema(many=True), headers=LINK_HEADERS)
    @_documented(
        f"List {whose} categories",
        "Every category of every language (or of `contentLanguage`), by language then name; "
        "paged with `limit` and `cursor`.",
    )
    def list_categories(query: dict, **path: Any) -> Any:
        found = categories.list_categories(
            current_viewer(), scope_of(**path), query.get("content_language"), page=query["page"]
        )
        return list_answer(found)

    @blp.route(f"{base}/tree", methods=["GET"])
    @blp.auth()
    @blp.arguments(CategoryListQuerySchema, location="query")
    @blp.response(200, CategoryTreeNodeSchema(many=True))
    @_documented(
        f"Get {whose} category tree",
        "The root categories with their `children` nested, recursively; siblings by name.",
    )
    def get_category_tree(query: dict, **path: Any) -> Any:
        return categories.tree(current_viewer(), scope_of(**path), query.get("content_language"))

    @blp.route(f"{base}/tree/sections", methods=["GET"])
    @blp.auth()
    @blp.arguments(CategoryListQuerySchema, location="query")
    @blp.response(200, CategorySectionSchema(many=True))
    @_documented(
        f"List {whose} category sections",
        "One section node per content language, holding its root categories with "
        "`childCategoryCount` (expand them with tree/children).",
    )
    def list_category_sections(query: dict, **path: Any) -> Any:
        scope = scope_of(**path)
        return categories.sections(current_viewer(), scope, query.get("content_language"))

    @blp.route(f"{base}/tree/children", methods=["GET"])
    @blp.auth()
    @blp.arguments(CategoryChildrenQuerySchema, location="query")
    @blp.response(200, CategoryNodeSchema(many=True))
    @_documented(
        f"List the direct children of {whose} category",
        "With `childCategoryCount` on each; without `parentCategoryId`, the root "
        "categories. 404 when the parent is not a category of this tree.",
    )
    def list_category_children(query: dict, **path: Any) -> Any:
        return categories.children(
            current_viewer(),
            scope_of(**path),
            query.get("parent_category_id"),
            query.get("content_language"),
        )

    @blp.route(base, methods=["POST"])
    @blp.auth()
    @blp.arguments(CategoryCreateSchema)
    @blp.response(201, CategorySchema)
    @_documented(
        f"Create {whose} category",
        "Under `parentCategoryId` (same content language) or, without one, as a root. "
        "Without `contentLanguage`: the parent's, else the team's for a team tree, else "
        "the service default.",
    )
    def create_category(data: dict, **path: Any) -> Any:
        category = categories.create_category(
            current_viewer(),
            scope_of(**path),
            default_language=current_app.config["DEFAULT_CONTENT_LANGUAGE"],
            **data,
        )
        db.session.commit()
        return category

    @blp.route(f"{one}/move", methods=["POST"])
    @blp.auth()
    @blp.arguments(CategoryMoveSchema)
    @blp.response(200, CategorySchema)
    @_documented(
        f"Rename or re-parent {whose} category",
        "The fields present are applied; `parentCategoryId` null makes it a root. A parent "
        "inside the category's own subtree (a cycle) or in another language is refused "
        "(400).",
    )
    def move_category(data: dict, category_id: UUID, **path: Any) -> Any:
        scope = scope_of(**path)
        category = categories.move_category(current_viewer(), scope, category_id, data)
        db.session.commit()
        return category

    @blp.route(one, methods=["DELETE"])
    @blp.auth()
    @blp.response(204)
    @_documented(
        f"Delete {whose} category",
        "Its notes and child categories move to its parent, so no note is lost; a root "
        "category that still holds notes or categories cannot be deleted (400).",
    )
    def delete_category(category_id: UUID, **path: Any) -> None:
        categories.delete_category(current_viewer(), scope_of(**path), category_id)
        db.session.commit()


add_category_routes(blp, "/mine", my_scope, whose="my")
add_category_routes(team_blp, "/<uuid:team_id>/categories", team_scope, whose="a team's")
