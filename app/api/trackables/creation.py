"""Trackable routes: creation of trackables and groups, and secret rotation, on the
trackables blueprint (contract: Trackables: reads, creation, groups)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import current_app

from app.api.base import PROBLEM_JSON, ProblemSchema
from app.api.trackables.cookies import guess_client, keeping_counted_misses, no_store
from app.api.trackables.routes import blp
from app.api.trackables.schemas import (
    PUBLIC_CODE_EXAMPLE,
    SCAN_URL_EXAMPLE,
    SECRET_CODE_EXAMPLE,
    TrackableCreatedSchema,
    TrackableCreateSchema,
    TrackableGroupCreatedSchema,
    TrackableGroupCreateSchema,
    TrackableSecretRotateSchema,
    TrackableSecretsSchema,
)
from app.auth import current_viewer
from app.error_codes import Code
from app.extensions import db
from app.services import trackables

# --- OpenAPI examples (secret codes and QR tokens masked: see schemas.MASKED) -------------

EXAMPLE_ID = "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
EXAMPLE_CODES = {
    "trackableId": EXAMPLE_ID,
    "publicCode": PUBLIC_CODE_EXAMPLE,
    "secretCode": SECRET_CODE_EXAMPLE,
    "scanUrl": SCAN_URL_EXAMPLE,
    "qrPayload": SCAN_URL_EXAMPLE,
}
CREATE_EXAMPLE = {
    "name": "Blue travel bug",
    "description": "Goes north with every finder.",
    "externalLinkUrl": "https://example.com/story",
    "externalLinkDescription": "Our story",
    "externalLinkAppendPublicTrackableCode": True,
    "teamId": None,
    "visibility": "AlwaysVisibleToEveryone",
    "activateImmediately": False,
    "secretCode": "",
}
CREATED_EXAMPLE = {
    "trackableId": EXAMPLE_ID,
    "heading": "Blue travel bug",
    "description": "Goes north with every finder.",
    "items": [{**EXAMPLE_CODES, "name": "Blue travel bug"}],
}
GROUP_CREATE_EXAMPLE = {
    "name": "Summer Hike 2026",
    "description": "Ten bugs for the summer trail.",
    "defaultTrackableTitle": "Summer hike bug",
    "defaultTrackableDescription": "Take me to the next hut.",
    "defaultExternalLinkUrl": "https://example.com/summer",
    "defaultExternalLinkDescription": "The trail",
    "defaultExternalLinkAppendPublicTrackableCode": False,
    "defaultStatusMessage": "Waiting at the start",
    "trackableCount": 10,
    "teamId": None,
    "visibility": "AlwaysVisibleToEveryone",
    "activateImmediately": False,
    "watchGroupActivityWhenCreated": True,
}
ROTATED_EXAMPLE = EXAMPLE_CODES
HOURLY_LIMIT = {
    "schema": ProblemSchema,
    "content_type": PROBLEM_JSON,
    "description": "The account created its trackables for the hour (200 by default, "
    "single or in groups; `limits.trackableCreations` in `GET /api/system/status`), "
    "`code` `trackable_hourly_limit_reached`: `Retry-After` says when these fit. Nothing "
    "is created. A request with its own `secretCode` is also 429 while this address is "
    "over its guess budget (`secret_guess_limit_reached`); so is any request over a rate "
    "limit (`rate_limited`).",
    "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer"}}},
    "example": {
        "type": "about:blank",
        "title": "Too Many Requests",
        "status": 429,
        "detail": "At most 200 trackables created per account per hour. Try again in 1200 seconds.",
        "code": Code.TRACKABLE_HOURLY_LIMIT_REACHED,
    },
}


def _codes() -> dict[str, Any]:
    """What issuing codes needs from the settings: the code rules and the scan base URL.
    The answer will show secret codes: no cache may keep it."""
    no_store()
    config = current_app.config
    return {
        "settings": trackables.CodeSettings.from_config(config),
        "base_url": config["PUBLIC_BASE_URL"],
    }


def _budgets() -> dict[str, Any]:
    """What creation and rotation need for their limits: this address's guess budget (a
    bring-your-own secret that is taken spends a guess) and the settings."""
    return {"guess_client": guess_client(), "config": current_app.config}


@blp.route("/trackables", methods=["POST"])
@blp.auth()
@blp.arguments(TrackableCreateSchema, example=CREATE_EXAMPLE)
@blp.response(201, TrackableCreatedSchema, example=CREATED_EXAMPLE)
@blp.alt_response(429, **HOURLY_LIMIT)
def create_trackable(data: dict) -> Any:
    """Create a trackable

    Answers its codes: the public code, and, in this response only, the short secret code
    and the QR scan URL. `secretCode` empty or absent generates one; your own (6 to 64
    letters, digits, `-`, `_`) is 400 on `secretCode` when malformed, reserved (LN, GT,
    TB), too common or in use; "in use" counts against this address's guess budget as a
    lookup miss does, and over that budget a request with its own secret is 429. `teamId`
    needs an active membership (404 otherwise). `externalLinkUrl` is verified server-side.
    An account creates at most 200 trackables an hour, single or in groups (429
    `trackable_hourly_limit_reached` with `Retry-After`; `limits.trackableCreations` in
    `GET /api/system/status`).
    """
    with keeping_counted_misses():
        created = trackables.create_trackable(current_viewer(), **_codes(), **_budgets(), **data)
    db.session.commit()
    return created


@blp.route("/trackables/groups", methods=["POST"])
@blp.auth()
@blp.arguments(TrackableGroupCreateSchema, example=GROUP_CREATE_EXAMPLE)
@blp.response(201, TrackableGroupCreatedSchema)
@blp.alt_response(429, **HOURLY_LIMIT)
def create_trackable_group(data: dict) -> Any:
    """Create a trackable group

    Makes the group and its `trackableCount` trackables (1 to 100) at once, all or none;
    items stay unactivated, showing the group's defaults, unless `activateImmediately`.
    Answers each item's codes, the secret ones in this response only. A `name` whose slug
    is taken is 400 on `name`. The items count against the account's 200 trackables an
    hour as a whole (429 `trackable_hourly_limit_reached`): a full group always fits an
    unused hour.
    """
    created = trackables.create_group(
        current_viewer(),
        **_codes(),
        max_count=current_app.config["TRACKABLES_PER_GROUP_MAX"],
        **data,
    )
    db.session.commit()
    return created


@blp.route("/trackables/<uuid:trackable_id>/secret/rotate", methods=["POST"])
@blp.auth()
@blp.arguments(TrackableSecretRotateSchema, required=False, example={"secretCode": ""})
@blp.response(200, TrackableSecretsSchema, example=ROTATED_EXAMPLE)
def rotate_trackable_secret(data: dict, trackable_id: UUID) -> Any:
    """Rotate a trackable's secret code and QR token

    Beyond the contract, which has no way to replace a leaked secret. For its managers:
    the owner (while on its team, for a team's) or a current admin of its team; 403
    `trackable_request_rejected` for others who can see it, 404 `trackable_not_found`
    for those who cannot. The old secret code and QR token stop working at once, for
    lookup and for `/trackable/{code}`; every client's active session ends, and so do
    the account unlocks of everyone who does not manage it. Answers the new codes, in
    this response only. The body is optional: `secretCode` empty or absent generates one;
    your own follows the rules of creation (its current secret counts as in use, and "in
    use" spends a guess). The public code stays. Each account may rotate a limited number
    of times in a window (429 with `Retry-After` beyond; `limits.secretRotations` in
    `GET /api/system/status`).
    """
    with keeping_counted_misses():
        rotated = trackables.rotate_secret(
            current_viewer(), trackable_id, **_codes(), **_budgets(), **data
        )
    db.session.commit()
    return rotated
