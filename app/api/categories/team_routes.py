"""Team category routes (contract: Categories, the team equivalents): the personal routes'
schemas and services.categories with the team's scope. Every route needs an active member
of the team (404 for anyone else); members share the team's tree."""

from __future__ import annotations

from typing import Any
from uuid import UUID

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
from app.auth import current_viewer
from app.extensions import db
from app.models.category import OwnerScope
from app.services import categories, teams

blp = Blueprint("team_categories", __name__, url_prefix="/api/teams", description="Team categories")


@blp.route("/<uuid:team_id>/categories", methods=["GET"])
@blp.auth()
@blp.arguments(CategoryListQuerySchema, location="query")
@blp.response(200, CategorySchema(many=True))
def list_team_categories(query: dict, team_id: UUID) -> Any:
    """List a team's categories

    Every category of every language (or of `contentLanguage`), by language then name.
    """
    return categories.list_categories(
        current_viewer(), OwnerScope.team(team_id), query.get("content_language")
    )


@blp.route("/<uuid:team_id>/categories/tree", methods=["GET"])
@blp.auth()
@blp.arguments(CategoryListQuerySchema, location="query")
@blp.response(200, CategoryTreeNodeSchema(many=True))
def get_team_category_tree(query: dict, team_id: UUID) -> Any:
    """Get a team's category tree

    The root categories with their `children` nested, recursively; siblings by name.
    """
    return categories.tree(
        current_viewer(), OwnerScope.team(team_id), query.get("content_language")
    )


@blp.route("/<uuid:team_id>/categories/tree/sections", methods=["GET"])
@blp.auth()
@blp.arguments(CategoryListQuerySchema, location="query")
@blp.response(200, CategorySectionSchema(many=True))
def list_team_category_sections(query: dict, team_id: UUID) -> Any:
    """List a team's category sections

    One section node per content language, holding its root categories with
    `childCategoryCount`.
    """
    return categories.sections(
        current_viewer(), OwnerScope.team(team_id), query.get("content_language")
    )


@blp.route("/<uuid:team_id>/categories/tree/children", methods=["GET"])
@blp.auth()
@blp.arguments(CategoryChildrenQuerySchema, location="query")
@blp.response(200, CategoryNodeSchema(many=True))
def list_team_category_children(query: dict, team_id: UUID) -> Any:
    """List the direct children of a team category

    With `childCategoryCount` on each; without `parentCategoryId`, the root categories.
    404 when the parent is not one of the team's categories.
    """
    return categories.children(
        current_viewer(),
        OwnerScope.team(team_id),
        query.get("parent_category_id"),
        query.get("content_language"),
    )


@blp.route("/<uuid:team_id>/categories", methods=["POST"])
@blp.auth()
@blp.arguments(CategoryCreateSchema)
@blp.response(201, CategorySchema)
def create_team_category(data: dict, team_id: UUID) -> Any:
    """Create a team category

    Under `parentCategoryId` (a team category of the same content language) or, without
    one, as a root. Without `contentLanguage`: the parent's, else the team's.
    """
    category = teams.create_team_category(current_viewer(), team_id, **data)
    db.session.commit()
    return category


@blp.route("/<uuid:team_id>/categories/<uuid:category_id>/move", methods=["POST"])
@blp.auth()
@blp.arguments(CategoryMoveSchema)
@blp.response(200, CategorySchema)
def move_team_category(data: dict, team_id: UUID, category_id: UUID) -> Any:
    """Rename or re-parent a team category

    The fields present are applied; the new parent must be a team category of the same
    language, outside the category's own subtree (400).
    """
    category = categories.move_category(
        current_viewer(), OwnerScope.team(team_id), category_id, data
    )
    db.session.commit()
    return category


@blp.route("/<uuid:team_id>/categories/<uuid:category_id>", methods=["DELETE"])
@blp.auth()
@blp.response(204)
def delete_team_category(team_id: UUID, category_id: UUID) -> None:
    """Delete a team category

    Its notes and child categories move to its parent; a root category that still holds
    notes or categories cannot be deleted (400).
    """
    categories.delete_category(current_viewer(), OwnerScope.team(team_id), category_id)
    db.session.commit()
