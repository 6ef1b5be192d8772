"""Schemas of the category routes (contract: Category; Categories)."""

from __future__ import annotations

from marshmallow import fields, validate

from app.api.base import Guid, RequestSchema, Schema
from app.api.notes.schemas import NOT_BLANK, language_field
from app.api.pages import PageQuerySchema
from app.models.category import CATEGORY_NAME_MAX_LENGTH


class CategorySchema(Schema):
    """A category record."""

    category_id = Guid(required=True, attribute="id")
    name = fields.String(required=True)
    content_language = fields.String(required=True, metadata={"example": "en-US"})
    parent_category_id = Guid(
        required=True, allow_none=True, metadata={"description": "null for a root"}
    )


class CategoryNodeSchema(Schema):
    """A category in a tree helper: the record plus its number of direct children."""

    category_id = Guid(required=True)
    name = fields.String(required=True)
    content_language = fields.String(required=True, metadata={"example": "en-US"})
    parent_category_id = Guid(required=True, allow_none=True)
    child_category_count = fields.Integer(required=True)


class CategoryTreeNodeSchema(CategoryNodeSchema):
    """A node of the full tree, with its children nested."""

    children = fields.List(fields.Nested(lambda: CategoryTreeNodeSchema()), required=True)


class CategorySectionSchema(Schema):
    """One content language's forest: its root categories."""

    content_language = fields.String(required=True, metadata={"example": "en-US"})
    root_categories = fields.List(fields.Nested(CategoryNodeSchema), required=True)


class CategoryMoveSchema(RequestSchema):
    """The create body; on move the fields present are applied (rename, re-parent)."""

    read_models = (CategorySchema, CategoryTreeNodeSchema)

    name = fields.String(validate=[validate.Length(max=CATEGORY_NAME_MAX_LENGTH), NOT_BLANK])
    content_language = language_field(
        metadata={
            "description": "On create: defaults to the parent's language, else the service "
            "default. On move: must stay the category's language.",
            "example": "en-US",
        }
    )
    parent_category_id = Guid(
        allow_none=True, metadata={"description": "null (or absent on create): a root"}
    )


class CategoryCreateSchema(CategoryMoveSchema):
    name = fields.String(
        required=True, validate=[validate.Length(max=CATEGORY_NAME_MAX_LENGTH), NOT_BLANK]
    )


class CategoryListQuerySchema(Schema):
    content_language = language_field()


class CategoryPageQuerySchema(CategoryListQuerySchema, PageQuerySchema):
    """The flat list: optional language, and a page."""


class CategoryChildrenQuerySchema(Schema):
    parent_category_id = Guid(
        metadata={"description": "Absent: the root categories (of contentLanguage, if given)."}
    )
    content_language = language_field()
