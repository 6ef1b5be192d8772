"""The wire shape of a personal data export."""

from __future__ import annotations

from marshmallow import fields

from app.api.base import Guid, ProblemSchema, Schema, UtcDateTime
from app.models.privacy import ExportState


class AccountExportSchema(Schema):
    export_id = Guid(required=True)
    state = fields.Enum(
        ExportState,
        by_value=True,
        required=True,
        metadata={
            "description": "`queued` (waiting for the worker), `running`, `done` (download "
            "until `expiresUtc`), `failed` (ask again), `expired` (the file is gone)."
        },
    )
    created_utc = UtcDateTime(required=True)
    finished_utc = UtcDateTime(
        required=True, allow_none=True, metadata={"description": "When it was done or failed."}
    )
    expires_utc = UtcDateTime(
        required=True,
        allow_none=True,
        metadata={"description": "Until when it may be downloaded (set once done)."},
    )
    size_bytes = fields.Integer(
        required=True, allow_none=True, metadata={"description": "The ZIP's size, once done."}
    )
    download_url = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "While `state` is `done`: where the owner downloads the ZIP "
            "with their bearer token (root-relative). Null otherwise."
        },
    )


class ExportInProgressProblemSchema(ProblemSchema):
    export_id = Guid(metadata={"description": "The export still being made."})


class ExportNotReadyProblemSchema(ProblemSchema):
    state = fields.Enum(
        ExportState, by_value=True, metadata={"description": "The export's state now."}
    )
