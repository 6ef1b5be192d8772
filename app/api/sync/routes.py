"""Sync routes (contract: Sync): a device pushes its dirty records, then pulls."""

from __future__ import annotations

import uuid
from typing import Any, cast

import orjson
from flask import Response, current_app
from marshmallow import Schema, ValidationError

from app.api.base import Blueprint, camelcase, flatten_messages
from app.api.mobile import require_supported_mobile_version
from app.api.notes.routes import CAPPED_LIST_HEADERS
from app.api.sync.schemas import (
    SyncCategoryInSchema,
    SyncCategorySchema,
    SyncNoteInSchema,
    SyncPullResultSchema,
    SyncPullSchema,
    SyncPushResultSchema,
    SyncPushSchema,
)
from app.auth import current_viewer
from app.extensions import db
from app.platform.wire import wire_time
from app.services import sync
from app.services.notes import NoteList
from app.services.shared.areas import Bounds

blp = Blueprint("sync", __name__, url_prefix="/api/sync", description="Sync")
blp.before_request(require_supported_mobile_version)

NOTE_ID = "11111111-2222-4333-8444-555555555555"
CATEGORY_ID = "66666666-7777-4888-8999-aaaaaaaaaaaa"
PUSH_EXAMPLE = {
    "deviceId": "0f8c2b1e-5d7a-4c3e-9b6f-2a1d4e5f6a7b",
    "categories": [
        {"categoryId": CATEGORY_ID, "name": "Walks", "contentLanguage": "en", "updatedUtc": None}
    ],
    "notes": [
        {
            "noteId": NOTE_ID,
            "categoryId": CATEGORY_ID,
            "title": "Old oak",
            "body": "By the gate",
            "latitude": 52.52,
            "longitude": 13.405,
            "visibility": "Private",
            "clientMutationId": "device-7:42",
            "updatedUtc": None,
            "applyExternalLinkChanges": False,
        }
    ],
}
PUSH_RESULT_EXAMPLE = {
    "appliedNoteIds": [NOTE_ID],
    "appliedCategoryIds": [],
    "conflicts": [
        {
            "entityType": "category",
            "id": CATEGORY_ID,
            "reason": "changed_on_server",
            "detail": "The server copy changed after the client's updatedUtc; pull, merge, "
            "push again.",
            "errors": None,
            "serverRecord": {
                "categoryId": CATEGORY_ID,
                "name": "Walks and hikes",
                "contentLanguage": "en",
                "parentCategoryId": None,
                "teamId": None,
                "isDeleted": False,
                "updatedUtc": "2026-11-23T10:15:00.000Z",
            },
        }
    ],
}
PULL_EXAMPLE = {
    "lastSyncUtc": "2026-11-23T10:00:00.000Z",
    "publicArea": {
        "minLatitude": 52.3,
        "minLongitude": 13.0,
        "maxLatitude": 52.7,
        "maxLongitude": 13.8,
    },
}
PULL_RESULT_EXAMPLE = {
    "serverSyncUtc": "2026-11-23T10:20:00.123Z",
    "userNotes": [{"noteId": NOTE_ID, "teamId": None, "isDeleted": True}],
    "userCategories": [],
    "teamCategories": [],
    "teamNotes": [],
    "publicNotes": [],
}


@blp.route("/push", methods=["POST"])
@blp.auth()
@blp.arguments(SyncPushSchema, example=PUSH_EXAMPLE)
@blp.response(200, SyncPushResultSchema, example=PUSH_RESULT_EXAMPLE)
def push_changes(data: dict) -> Any:
    """Push a device's changes

    Full records with the client's own ids; `updatedUtc` is the server copy the device
    edited (null for a new record). Categories are applied before notes (category
    deletions after them). A record that is not applied comes back in `conflicts` with
    `reason` `changed_on_server`, `deleted_on_server`, `forbidden`, `validation_failed`
    or `client_mutation_id_reused`, and `serverRecord` when the caller may see it; the
    others are applied. A retried push (same `clientMutationId`, same record) applies
    nothing twice; the same `clientMutationId` with another record is
    `client_mutation_id_reused` (send that change with a new one). At most `limits.syncPushMaxNotes`
    notes and `limits.syncPushMaxCategories` categories (status). The links of records
    with `applyExternalLinkChanges` are checked within one budget per push
    (`limits.syncPushLinkBudgetSeconds`), each distinct link once; a record whose link was
    not reached in time is `validation_failed` on `externalLinkUrl` ("not checked").

    A mobile build sends its version code in `X-Android-Version-Code`; below
    `androidMinimumCompatibleVersionCode` (system status) it is refused with 400
    `mobile_version_unsupported`.
    """
    result = sync.push(
        current_viewer(),
        notes_in=pushed_records(SyncNoteInSchema, "note_id", data["notes"]),
        categories_in=pushed_records(SyncCategoryInSchema, "category_id", data["categories"]),
        default_language=current_app.config["DEFAULT_CONTENT_LANGUAGE"],
        link_budget_seconds=current_app.config["SYNC_PUSH_LINK_BUDGET_SECONDS"],
    )
    db.session.commit()
    for conflict in result.conflicts:
        conflict.server_record = _wire_record(conflict.server_record)
    return result


def pushed_records(
    schema_type: type[Schema], id_name: str, items: list[dict]
) -> list[sync.PushedRecord]:
    """Each record loaded on its own: its fields, or its errors (a validation conflict).
    One schema instance loads them all (making one costs more than a load)."""
    schema = schema_type()
    records = []
    for item in items:
        try:
            fields = schema.load(item)
        except ValidationError as error:
            # RecordList has checked that every record carries a GUID id
            record_id = cast(
                uuid.UUID, schema.fields[id_name].deserialize(item[camelcase(id_name)])
            )
            records.append(sync.PushedRecord(record_id, errors=flatten_messages(error.messages)))
            continue
        records.append(sync.PushedRecord(fields.pop(id_name), fields))
    return records


def _wire_record(record: dict[str, Any] | None) -> dict[str, Any] | None:
    if record is None:
        return None
    if "note_id" in record:  # a note record's values are already in their wire form
        return {camelcase(name): value for name, value in record.items()}
    return SyncCategorySchema().dump(record)


@blp.route("/pull", methods=["POST"])
@blp.auth()
@blp.arguments(SyncPullSchema, example=PULL_EXAMPLE)
@blp.response(200, SyncPullResultSchema, example=PULL_RESULT_EXAMPLE, headers=CAPPED_LIST_HEADERS)
def pull_changes(data: dict) -> Response:
    """Pull the server's changes

    Everything the caller has (without `lastSyncUtc`), or what changed since that
    `serverSyncUtc`: the caller's notes and categories, those of every team the caller is
    an active member of, and tombstones (`isDeleted: true`, only the ids) for what was
    deleted or left the caller's reach (a team left, a note handed back to its author).
    `publicNotes` is the `publicArea` window's public discovery list, capped as public
    bounds is; `X-Result-Truncated: true` when it was cut.

    A mobile build sends its version code in `X-Android-Version-Code`; below
    `androidMinimumCompatibleVersionCode` (system status) it is refused with 400
    `mobile_version_unsupported`.
    """
    area = data["public_area"]
    result = sync.pull(
        current_viewer(),
        last_sync_utc=data["last_sync_utc"],
        public_area=Bounds(**area) if area else None,
        cap=current_app.config["PUBLIC_LIST_CAP"],
    )
    categories = SyncCategorySchema(many=True)
    body = {
        "serverSyncUtc": wire_time(result.server_sync_utc),
        "userNotes": _notes(result.user_notes, result.user_note_tombstones),
        "userCategories": categories.dump(result.user_categories),
        "teamCategories": categories.dump(result.team_categories),
        "teamNotes": _notes(result.team_notes, result.team_note_tombstones),
        "publicNotes": _notes(result.public_notes, []) if result.public_notes else [],
    }
    truncated = result.public_notes is not None and result.public_notes.truncated
    return current_app.response_class(
        orjson.dumps(body),
        mimetype="application/json",
        headers={"X-Result-Truncated": "true"} if truncated else None,
    )


def _notes(found: NoteList | None, tombstones: list[dict[str, Any]]) -> list[dict[str, Any]]:
    records = []
    if found is not None:
        keys = tuple(camelcase(name) for name in found.columns)
        records = [dict(zip(keys, row, strict=True)) for row in found.rows]
    return records + [
        {
            "noteId": str(t["note_id"]),
            "teamId": t["team_id"] and str(t["team_id"]),
            "isDeleted": True,
        }
        for t in tombstones
    ]
