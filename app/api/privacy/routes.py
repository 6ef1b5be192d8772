"""Personal data export routes (docs/contract/privacy.md, Data export): the
signed-in account asks for a copy of its data, follows the export and downloads it. An
export is its account's alone: everyone else gets 404. The JSON Schemas of the export's
files are the same for everyone."""

from __future__ import annotations

import hashlib
import json
from typing import Any
from uuid import UUID

from flask import Response, current_app

from app.api.base import PROBLEM_JSON, Blueprint, ProblemSchema
from app.api.examples import coded_problem
from app.api.privacy.schemas import (
    AccountExportSchema,
    ExportInProgressProblemSchema,
    ExportNotReadyProblemSchema,
)
from app.auth import current_viewer
from app.error_codes import Code
from app.extensions import db
from app.platform.http_files import attachment, cached_file
from app.services import privacy

blp = Blueprint(
    "privacy",
    __name__,
    url_prefix="/api",
    description="A copy of everything the service keeps about the account (GDPR art. 15, 20)",
)


IN_PROGRESS = {
    "schema": ExportInProgressProblemSchema,
    "content_type": PROBLEM_JSON,
    "description": "The account's previous export is still queued or running; `exportId` names it.",
    "example": coded_problem(
        409,
        Code.ACCOUNT_EXPORT_IN_PROGRESS,
        "Your previous export is still being made; wait for it.",
        exportId="3b8f2c71-5d0e-4a69-9c14-7e2a6d8b0f53",
    ),
}
DAILY_LIMIT = {
    "schema": ProblemSchema,
    "content_type": PROBLEM_JSON,
    "description": "The account asked for its exports for the day (3 in 24 hours by "
    "default); `Retry-After` says when the next one fits.",
    "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer"}}},
    "example": coded_problem(
        429,
        Code.ACCOUNT_EXPORT_DAILY_LIMIT_REACHED,
        "At most 3 data exports per account per day. Try again in 5400 seconds.",
    ),
}
NOT_READY = {
    "schema": ExportNotReadyProblemSchema,
    "content_type": PROBLEM_JSON,
    "description": "The export is not made yet (`queued`, `running`) or it `failed`.",
    "example": coded_problem(
        409,
        Code.ACCOUNT_EXPORT_NOT_READY,
        "This export is running, not ready for download.",
        state="running",
    ),
}
EXPIRED = {
    "schema": ProblemSchema,
    "content_type": PROBLEM_JSON,
    "description": "The export's download time (24 hours) ran out; its file is gone.",
    "example": coded_problem(
        410,
        Code.ACCOUNT_EXPORT_EXPIRED,
        "This export's download time ran out; ask for a new export.",
    ),
}
ZIP_DOC = {
    "responses": {
        "200": {
            "description": "The export: a ZIP with a README.md that explains each file, "
            "and in `schemas/` the JSON Schema of each JSON file (as GET "
            "/api/account/export/schemas/{name} serves them).",
            "content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}},
            "headers": {
                "Content-Disposition": {
                    "description": '`attachment; filename="location-notes-export-{date}.zip"`',
                    "schema": {"type": "string"},
                }
            },
        }
    }
}
# The example is a real one: the schema of the smallest file.
SCHEMA_EXAMPLE = json.loads(privacy.schema_file("note_comments.schema.json"))
SCHEMA_DOC = {
    "responses": {
        "200": {
            "description": "The JSON Schema (2020-12) of one JSON file of the export "
            "(strong `ETag`; `304` on `If-None-Match`).",
            "content": {
                privacy.SCHEMA_MEDIA_TYPE: {"schema": {"type": "object"}, "example": SCHEMA_EXAMPLE}
            },
        },
        "304": {"description": "The client's copy (`If-None-Match`) is current."},
    }
}
LOCATION = {
    "Location": {
        "description": "The export's address (GET it to follow its state).",
        "schema": {"type": "string"},
    }
}


@blp.route("/account/export", methods=["POST"])
@blp.auth()
@blp.response(202, AccountExportSchema, headers=LOCATION)
@blp.alt_response(409, **IN_PROGRESS)
@blp.alt_response(429, **DAILY_LIMIT)
def start_account_export() -> Any:
    """Ask for a copy of my data

    Starts an export of everything the service keeps about the account (GDPR articles 15
    and 20): a ZIP with one JSON file per kind of record, each described by a JSON Schema
    (in the ZIP's `schemas/`, and at GET /api/account/export/schemas/{name}), the notes
    as GPX, the image files and a README; never a secret. A worker makes it (`state`
    goes `queued`, `running`, `done`) and mails the account when it is ready. One at a time (409
    `account_export_in_progress`), at most 3 a day (429
    `account_export_daily_limit_reached`).
    """
    export = privacy.start_export(current_viewer(), current_app.config)
    db.session.commit()
    return export, 202, {"Location": f"/api/account/export/{export.export_id}"}


@blp.route("/account/export/<uuid:export_id>", methods=["GET"])
@blp.auth()
@blp.response(200, AccountExportSchema)
def get_account_export(export_id: UUID) -> Any:
    """Get one of my data exports

    Its state; once `done`, `downloadUrl` until `expiresUtc` (24 hours), then `expired`.
    Records are kept a week after that, then 404. Someone else's export is 404.
    """
    return privacy.get_export(current_viewer(), export_id)


@blp.route("/account/export/<uuid:export_id>/download", methods=["GET"])
@blp.auth()
@blp.doc(**ZIP_DOC)
@blp.alt_response(409, **NOT_READY)
@blp.alt_response(410, **EXPIRED)
def download_account_export(export_id: UUID) -> Response:
    """Download one of my data exports

    The ZIP, to the account's own bearer token only (anyone else: 404). 409 while it is
    not made, 410 once its time ran out. Never cached.
    """
    found = privacy.open_download(current_viewer(), export_id, current_app.config)
    return attachment(
        found.chunks, size=found.size, mimetype="application/zip", filename=found.filename
    )


@blp.route("/account/export/schemas/<string:name>", methods=["GET"])
@blp.doc(**SCHEMA_DOC)
def get_account_export_file_schema(name: str) -> Response:
    """Get the JSON Schema of a data export file

    The JSON Schema (2020-12) of one JSON file of the data export, as the ZIP's `schemas/`
    holds it: `notes.schema.json` describes `notes.json` (the README in the ZIP lists
    the files). The same for everyone, without a token; another name is 404.
    """
    data = privacy.schema_file(name)
    etag = hashlib.sha256(data).hexdigest()[:32]
    return cached_file(data, mimetype=privacy.SCHEMA_MEDIA_TYPE, etag=etag, is_public=True)
