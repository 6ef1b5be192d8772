"""Schemas of the sync routes (contract: Sync; Note; Category)."""

from __future__ import annotations

import uuid
from typing import Any

from marshmallow import ValidationError, fields, validates_schema
from marshmallow.validate import OneOf

from app.api.base import AnyOf, Guid, RequestSchema, Schema, UtcDateTime
from app.api.categories.schemas import CategoryMoveSchema
from app.api.notes.schemas import BoundsQuerySchema, NoteMoveSchema, NoteSchema
from app.services.sync import CONFLICT_REASONS

BASE_DOC = (
    "The server copy's `updatedUtc` this record was edited from (null or absent for a "
    "record the server has never sent); a different server copy is a conflict."
)


class SyncNoteInSchema(NoteMoveSchema):
    """A pushed note: the full record with the client's own `noteId`."""

    note_id = Guid(required=True, metadata={"description": "The client's id for a new note."})
    team_id = Guid(allow_none=True, metadata={"description": "Set for a team note."})
    is_deleted = fields.Boolean(load_default=False, metadata={"description": "Delete it."})
    updated_utc = UtcDateTime(
        allow_none=True, load_default=None, metadata={"description": BASE_DOC}
    )
    apply_external_link_changes = fields.Boolean(
        load_default=False,
        metadata={
            "description": "true: `externalLinkUrl`/`externalLinkDescription` are applied "
            "(and the link revalidated); false: they are ignored and the stored link stays."
        },
    )

    @validates_schema
    def check_title(self, data: dict[str, Any], **kwargs: Any) -> None:
        if not data.get("is_deleted") and "title" not in data:
            raise ValidationError({"title": ["Missing data for required field."]})


class SyncCategoryInSchema(CategoryMoveSchema):
    """A pushed category: the full record with the client's own `categoryId`. Every field
    of the sync record (SyncCategorySchema) is one of its own; the category read models'
    others (`childCategoryCount`, ...) are tolerated, as on the REST routes."""

    category_id = Guid(required=True)
    team_id = Guid(allow_none=True, metadata={"description": "Set for a team category."})
    is_deleted = fields.Boolean(load_default=False)
    updated_utc = UtcDateTime(
        allow_none=True, load_default=None, metadata={"description": BASE_DOC}
    )

    @validates_schema
    def check_name(self, data: dict[str, Any], **kwargs: Any) -> None:
        if not data.get("is_deleted") and "name" not in data:
            raise ValidationError({"name": ["Missing data for required field."]})


class SyncCategorySchema(Schema):
    """A category as sync sends it (a tombstone is SyncCategoryTombstoneSchema)."""

    category_id = Guid(required=True)
    name = fields.String(required=True)
    content_language = fields.String(required=True, metadata={"example": "en-US"})
    parent_category_id = Guid(required=True, allow_none=True)
    team_id = Guid(required=True, allow_none=True)
    is_deleted = fields.Boolean(required=True)
    updated_utc = UtcDateTime(required=True)


class RecordList(fields.List):
    """Documented as an array of `schema` records, loaded as raw objects: each record is
    validated on its own (a bad one is a conflict, not a failed push). Only the shape is
    checked here, for the whole push: an object with a GUID `id_key`, and no field the
    record schema refuses as unknown (a client bug, not a conflict of this record)."""

    def __init__(self, schema: type[RequestSchema], id_key: str, **kwargs: Any) -> None:
        super().__init__(fields.Nested(schema), **kwargs)
        self.id_key = id_key
        self.record_schema = schema()

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> list[Any]:
        if not isinstance(value, list):
            raise ValidationError("Not a valid list.")
        errors: dict[int, Any] = {}
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                errors[index] = ["Not an object."]
                continue
            unknown = self.record_schema.unknown_fields(item)
            try:
                uuid.UUID(str(item.get(self.id_key)))
            except ValueError:
                unknown[self.id_key] = ["A GUID is required: conflicts name it."]
            if unknown:
                errors[index] = unknown
        if errors:
            raise ValidationError(errors)
        return value


class SyncPushSchema(RequestSchema):
    read_models = ()  # a batch of changes; its records tolerate their own read models

    device_id = Guid(required=True)
    notes = RecordList(
        SyncNoteInSchema,
        "noteId",
        load_default=list,
        metadata={
            "description": "Whole records: one that is not `isDeleted` needs its `title` "
            "(else a `validation_failed` conflict); a field left out keeps the server's value."
        },
    )
    categories = RecordList(
        SyncCategoryInSchema,
        "categoryId",
        load_default=list,
        metadata={
            "description": "Whole records: one that is not `isDeleted` needs its `name` "
            "(else a `validation_failed` conflict)."
        },
    )

    @validates_schema
    def check_batch(self, data: dict[str, Any], **kwargs: Any) -> None:
        from flask import current_app

        for name, setting in (
            ("notes", "SYNC_PUSH_MAX_NOTES"),
            ("categories", "SYNC_PUSH_MAX_CATEGORIES"),
        ):
            limit = current_app.config[setting]
            if len(data.get(name, [])) > limit:
                raise ValidationError(
                    {name: [f"At most {limit} per push (status `limits`); send the rest next."]}
                )


class SyncConflictSchema(Schema):
    entity_type = fields.String(required=True, metadata={"enum": ["note", "category"]})
    id = Guid(required=True)
    reason = fields.String(
        required=True, validate=OneOf(CONFLICT_REASONS), metadata={"enum": CONFLICT_REASONS}
    )
    detail = fields.String(required=True)
    errors = fields.Dict(
        required=True,
        keys=fields.String(),
        values=fields.List(fields.String()),
        allow_none=True,
        metadata={"description": "`validation_failed`: field name -> messages; else null."},
    )
    server_record = fields.Dict(
        required=True,
        allow_none=True,
        metadata={
            "description": "The server's current note record or sync category record, "
            "when the caller may see it."
        },
    )


class SyncPushResultSchema(Schema):
    applied_note_ids = fields.List(Guid(), required=True)
    applied_category_ids = fields.List(Guid(), required=True)
    conflicts = fields.List(fields.Nested(SyncConflictSchema), required=True)


class PublicAreaSchema(RequestSchema, BoundsQuerySchema):
    """The four bounds of public discovery's window (no language filter)."""

    read_models = ()

    class Meta(RequestSchema.Meta):
        exclude = ("content_language",)


class SyncPullSchema(RequestSchema):
    read_models = ()  # a request for changes

    last_sync_utc = UtcDateTime(
        allow_none=True,
        load_default=None,
        metadata={"description": "The `serverSyncUtc` of the previous pull; null: everything."},
    )
    public_area = fields.Nested(
        PublicAreaSchema,
        allow_none=True,
        load_default=None,
        metadata={"description": "The map window whose public notes to send (optional)."},
    )


class SyncNoteTombstoneSchema(Schema):
    """A note deleted, or gone out of the caller's reach, since the last pull."""

    note_id = Guid(required=True)
    team_id = Guid(required=True, allow_none=True)
    is_deleted = fields.Boolean(required=True, metadata={"enum": [True]})


class SyncCategoryTombstoneSchema(Schema):
    """A category deleted, or gone out of the caller's reach, since the last pull."""

    category_id = Guid(required=True)
    team_id = Guid(required=True, allow_none=True)
    is_deleted = fields.Boolean(required=True, metadata={"enum": [True]})


def _records_and_tombstones(record: type[Schema], tombstone: type[Schema]) -> fields.List:
    return fields.List(
        AnyOf(record, tombstone),
        required=True,
        metadata={"description": "Records, and tombstones (the ids and `isDeleted: true`)."},
    )


class SyncPullResultSchema(Schema):
    server_sync_utc = UtcDateTime(
        required=True, metadata={"description": "Send it back as `lastSyncUtc` on the next pull."}
    )
    user_notes = _records_and_tombstones(NoteSchema, SyncNoteTombstoneSchema)
    user_categories = _records_and_tombstones(SyncCategorySchema, SyncCategoryTombstoneSchema)
    team_categories = _records_and_tombstones(SyncCategorySchema, SyncCategoryTombstoneSchema)
    team_notes = _records_and_tombstones(NoteSchema, SyncNoteTombstoneSchema)
    public_notes = fields.List(
        fields.Nested(NoteSchema),
        required=True,
        metadata={"description": "The area's public discovery list (capped), not a delta."},
    )
