"""Personal category routes (contract: Categories). The team equivalents reuse the same
service functions with a team scope."""

from __future__ import annotations

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
    CategorySchema,
    CategorySectionSchema,
    CategoryTreeNodeSchema,
)
from app.auth import Viewer, current_viewer
from app.errors import Unauthorized
from app.extensions import db
from app.models.category import OwnerScope
from app.services import categories

blp = Blueprint(
    "categories", __name__, url_prefix="/api/categories", description="Personal categories"
)


def _mine(viewer: Viewer) -> OwnerScope:
    """The caller's personal scope (routes using it require a bearer token)."""
    if viewer.user_id is None:
        raise Unauthorized()
    return OwnerScope.personal(viewer.user_id)


@blp.route("/mine", methods=["GET"])
@blp.auth()
@blp.arguments(CategoryListQuerySchema, location="query")
@blp.response(200, CategorySchema(many=True))
def list_my_categories(query: dict) -> Any:
    """List my categories

    Every category of every language (or of `contentLanguage`), by language then name.
    """
    viewer = current_viewer()
    return categories.list_categories(viewer, _mine(viewer), query.get("content_language"))


@blp.route("/mine/tree", methods=["GET"])
@blp.auth()
@blp.arguments(CategoryListQuerySchema, location="query")
@blp.response(200, CategoryTreeNodeSchema(many=True))
def get_my_category_tree(query: dict) -> Any:
    """Get my category tree

    The root categories with their `children` nested, recursively; siblings by name.
    """
    viewer = current_viewer()
    return categories.tree(viewer, _mine(viewer), query.get("content_language"))


@blp.route("/mine/tree/sections", methods=["GET"])
@blp.auth()
@blp.arguments(CategoryListQuerySchema, location="query")
@blp.response(200, CategorySectionSchema(many=True))
def list_my_category_sections(query: dict) -> Any:
    """List my category sections

    One section node per content language, holding its root categories with
    `childCategoryCount` (expand them with tree/children).
    """
    viewer = current_viewer()
    return categories.sections(viewer, _mine(viewer), query.get("content_language"))


@blp.route("/mine/tree/children", methods=["GET"])
@blp.auth()
@blp.arguments(CategoryChildrenQuerySchema, location="query")
@blp.response(200, CategoryNodeSchema(many=True))
def list_my_category_children(query: dict) -> Any:
    """List the direct children of a category

    With `childCategoryCount` on each; without `parentCategoryId`, the root categories.
    404 when the parent is not one of the caller's categories.
    """
    viewer = current_viewer()
    return categories.children(
        viewer, _mine(viewer), query.get("parent_category_id"), query.get("content_language")
    )


@blp.route("/mine", methods=["POST"])
@blp.auth()
@blp.arguments(CategoryCreateSchema)
@blp.response(201, CategorySchema)
def create_my_category(data: dict) -> Any:
    """Create a category

    Under `parentCategoryId` (same content language) or, without one, as a root.
    """
    viewer = current_viewer()
    category = categories.create_category(
        viewer,
        _mine(viewer),
        default_language=current_app.config["DEFAULT_CONTENT_LANGUAGE"],
        **data,
    )
    db.session.commit()
    return category


@blp.route("/mine/<uuid:category_id>/move", methods=["POST"])
@blp.auth()
@blp.arguments(CategoryMoveSchema)
@blp.response(200, CategorySchema)
def move_my_category(data: dict, category_id: UUID) -> Any:
    """Rename or re-parent a category

    The fields present are applied; `parentCategoryId` null makes it a root. A parent
    inside the category's own subtree (a cycle) or in another language is refused (400).
    """
    viewer = current_viewer()
    category = categories.move_category(viewer, _mine(viewer), category_id, data)
    db.session.commit()
    return category


@blp.route("/mine/<uuid:category_id>", methods=["DELETE"])
@blp.auth()
@blp.response(204)
def delete_my_category(category_id: UUID) -> None:
    """Delete a category

    Its notes and child categories move to its parent, so no note is lost; a root
    category that still holds notes or categories cannot be deleted (400).
    """
    viewer = current_viewer()
    categories.delete_category(viewer, _mine(viewer), category_id)
    db.session.commit()
