"""Trackable routes: lookup and active sessions, on the trackables blueprint (contract:
Trackables: lookup and active sessions; Active secret session; decisions: Trackable codes,
Access sessions for secret codes), with their schemas.

No schema here has a field for a secret code or QR token: a lookup answers with the
trackable it found and how, never with the code.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import current_app, request
from marshmallow import fields, post_dump, validate

from app.api.base import (
    NOT_BLANK_PATTERN,
    Guid,
    Refuses,
    Regexp,
    RequestSchema,
    Schema,
    UtcDateTime,
)
from app.api.pages import LINK_HEADERS, PageQuerySchema, list_answer
from app.api.trackables.cookies import (
    client_id_for_session,
    current_client_key,
    guess_client,
    keep_access_cookie,
    no_store,
)
from app.api.trackables.routes import blp
from app.auth import current_viewer
from app.extensions import db
from app.models.trackable import STATUS_MESSAGE_MAX_LENGTH
from app.services import trackables

CODE_MAX_LENGTH = 1024  # far above any code's configured length; only a sanity bound
PUBLIC_CODE_EXAMPLE = "LN-4K7Q2M"

# --- schemas -----------------------------------------------------------------------------


class LookupSchema(RequestSchema):
    """A typed or scanned code: public code, short secret code or QR token."""

    read_models = ()  # a look-up writes no record

    code = fields.String(
        required=True,
        validate=[
            validate.Length(max=CODE_MAX_LENGTH),
            Regexp(NOT_BLANK_PATTERN, error="Enter a code."),
        ],
        metadata={
            "description": "Public code, short secret code or QR token. Trimmed; case and "
            "the look-alikes O/0, I/L/1, S/5, U/V do not matter in system codes; a QR "
            "token must match exactly.",
            "example": PUBLIC_CODE_EXAMPLE,
        },
    )


class LookupResultSchema(Schema):
    """The lookup result (HTTP 200 whether or not a trackable was found)."""

    found = fields.Boolean(required=True)
    trackable_id = Guid(required=True, allow_none=True, metadata={"description": "null on a miss."})
    is_public_code_match = fields.Boolean(
        required=True, metadata={"description": "Matched a public code."}
    )
    uses_secret_access = fields.Boolean(
        required=True,
        metadata={
            "description": "Matched a short secret code or QR token: the active session "
            "for this trackable is now open on this client (cookie), and linked to the "
            "account when signed in."
        },
    )
    redirect_url = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "Relative URL of the page to show: `/{lang}/trackables/"
            "{publicCode}` for a public code, `/{lang}/trackables/active/{trackableId}` for "
            "secret access; null on a miss.",
            "example": f"/en/trackables/{PUBLIC_CODE_EXAMPLE}",
        },
    )
    error = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "On a miss: why, for people. The public code of a trackable not "
            "activated yet says so, and what to do, without anything of the trackable; "
            "otherwise a trackable the caller may not see misses as an unknown code does.",
            "example": "No trackable matches this code. Check it and try again.",
        },
    )
    help_url = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "On a miss for a code of another tracking system or of a sister "
            "service: where to read about it; otherwise null.",
            "example": "/help/foreign-codes",
        },
    )


class ActiveSessionSchema(Schema):
    """One active secret session of this client."""

    trackable_id = Guid(required=True)
    public_code = fields.String(required=True, metadata={"example": PUBLIC_CODE_EXAMPLE})
    name = fields.String(required=True)
    is_activated = fields.Boolean(required=True)
    status_message = fields.String(
        required=True,
        metadata={"description": "The status text this client remembers (may be empty)."},
    )
    unlocked_utc = UtcDateTime(
        required=True, metadata={"description": "When this client opened it."}
    )


class TrimmedString(fields.String):
    """A string trimmed before its validators run (a length limit counts what is kept).
    Refused characters are looked for in the text as sent, as the document's `pattern`
    states them: a trailing control character is refused, not trimmed away."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = str(super()._deserialize(value, attr, data, **kwargs))
        for validator in self.validators:
            if isinstance(validator, Refuses):
                validator(text)
        return text.strip()


class StatusMessageSchema(RequestSchema):
    read_models = (ActiveSessionSchema,)

    status_message = TrimmedString(
        required=True,
        validate=validate.Length(max=STATUS_MESSAGE_MAX_LENGTH),
        metadata={
            "description": f"At most {STATUS_MESSAGE_MAX_LENGTH} characters; trimmed; empty "
            "clears it.",
            "example": "Found it at the trailhead, taking it north.",
        },
    )


class GroupRefSchema(Schema):
    trackable_group_id = Guid(required=True, attribute="id")
    name = fields.String(required=True)
    slug = fields.String(required=True, metadata={"example": "summer_hunt"})


class ActivationContextSchema(Schema):
    """`Personal`, or `Team` with the team's id and name."""

    kind = fields.String(required=True, validate=validate.OneOf(["Personal", "Team"]))
    team_id = Guid(metadata={"description": "Sent when `kind` is `Team`."})
    team_name = fields.String(metadata={"description": "Sent when `kind` is `Team`."})

    @post_dump
    def drop_empty(self, data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return {key: value for key, value in data.items() if value is not None}


class GroupItemSchema(Schema):
    trackable_id = Guid(required=True)
    public_code = fields.String(required=True, metadata={"example": PUBLIC_CODE_EXAMPLE})
    name = fields.String(required=True)
    is_activated = fields.Boolean(required=True)


class ActiveLandingSchema(Schema):
    """What the active landing page shows."""

    trackable_id = Guid(required=True)
    public_code = fields.String(required=True, metadata={"example": PUBLIC_CODE_EXAMPLE})
    name = fields.String(
        required=True,
        metadata={"description": "An unactivated group item shows the group's default."},
    )
    description = fields.String(required=True)
    is_activated = fields.Boolean(required=True)
    activation_required = fields.Boolean(
        required=True, metadata={"description": "Not activated yet."}
    )
    is_grouped = fields.Boolean(required=True)
    group = fields.Nested(GroupRefSchema, required=True, allow_none=True)
    activation_contexts = fields.List(
        fields.Nested(ActivationContextSchema),
        required=True,
        metadata={
            "description": "Where a signed-in caller may activate it: `Personal` and each "
            "team they are an active member of. Empty when activated, and for anonymous "
            "callers (who must sign in to activate)."
        },
    )
    group_items = fields.List(
        fields.Nested(GroupItemSchema),
        required=True,
        metadata={"description": "The group's other items the caller may see."},
    )
    status_message = fields.String(
        required=True,
        metadata={"description": "The status text this client remembers (may be empty)."},
    )


# --- lookup ------------------------------------------------------------------------------

# OpenAPI examples. The secret code is masked with `*`, which no real code contains.
EXAMPLE_ID = "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
LOOKUP_EXAMPLES = {
    "publicCode": {"summary": "A public code", "value": {"code": PUBLIC_CODE_EXAMPLE}},
    "secretCode": {
        "summary": "A short secret code (masked: real codes never contain `*`)",
        "value": {"code": "LN********"},
    },
}
_MISS = {"trackableId": None, "isPublicCodeMatch": False, "usesSecretAccess": False}
LOOKUP_RESULT_EXAMPLES = {
    "publicCode": {
        "summary": "A public code: its public page",
        "value": {
            "found": True,
            "trackableId": EXAMPLE_ID,
            "isPublicCodeMatch": True,
            "usesSecretAccess": False,
            "redirectUrl": f"/en/trackables/{PUBLIC_CODE_EXAMPLE}",
            "error": None,
            "helpUrl": None,
        },
    },
    "secretAccess": {
        "summary": "A secret code or QR token: the active landing, session opened",
        "value": {
            "found": True,
            "trackableId": EXAMPLE_ID,
            "isPublicCodeMatch": False,
            "usesSecretAccess": True,
            "redirectUrl": f"/en/trackables/active/{EXAMPLE_ID}",
            "error": None,
            "helpUrl": None,
        },
    },
    "miss": {
        "summary": "No match (still HTTP 200)",
        "value": {
            "found": False,
            **_MISS,
            "redirectUrl": None,
            "error": "No trackable matches this code. Check it and try again.",
            "helpUrl": None,
        },
    },
    "notActivated": {
        "summary": "The public code of a trackable not activated yet",
        "value": {
            "found": False,
            **_MISS,
            "redirectUrl": None,
            "error": trackables.NOT_ACTIVATED,
            "helpUrl": None,
        },
    },
    "otherSystem": {
        "summary": "A code of another tracking system",
        "value": {
            "found": False,
            **_MISS,
            "redirectUrl": None,
            "error": "This looks like a code of another tracking system; it is not a code "
            "of this service.",
            "helpUrl": "/help/foreign-codes",
        },
    },
}


def _lookup(code: str) -> Any:
    no_store()
    client_id = client_id_for_session()
    result = trackables.lookup_code(
        current_viewer(),
        code,
        lang=trackables.site_language(request.accept_languages),
        client_id=client_id,
        guess_client=guess_client(),
        config=current_app.config,
    )
    db.session.commit()
    if result.uses_secret_access:
        keep_access_cookie(client_id)
    return result


@blp.route("/trackables/lookup", methods=["POST"])
@blp.auth(optional=True)
@blp.arguments(LookupSchema, examples=LOOKUP_EXAMPLES)
@blp.response(200, LookupResultSchema, examples=LOOKUP_RESULT_EXAMPLES)
def lookup_trackable(data: dict) -> Any:
    """Look up a trackable by code

    Always 200 with the lookup result. A public code finds a trackable the caller may see.
    A short secret code or QR token opens the active session for it on this client (an
    HttpOnly cookie) and, when signed in, links it to the account; the code is never
    returned. A miss is `found` false with `error` (and `helpUrl` for another system's
    code); the public code of a trackable not activated yet is a miss whose `error` says
    so. A system code may be typed with spaces and hyphens after its prefix, and with
    O, I, L, S, U for 0, 1, 1, 5, V. Codes that match nothing count against this
    address's guess budget, or a signed-in account's own when its e-mail address is
    confirmed: over it, 429 with `Retry-After` and a `detail` saying whose budget is
    spent and how long to wait (limits in `GET /api/system/status`).

    The website's shareable entry route `GET /trackable/{code}` takes the same three
    kinds of code and answers with a redirect to the page `redirectUrl` names (or an HTML
    page for a miss); being no JSON API route, it is not an operation of this document.
    """
    return _lookup(data["code"])


@blp.route("/trackables/lookup", methods=["GET"])
@blp.auth(optional=True)
@blp.arguments(LookupSchema, location="query")
@blp.response(200, LookupResultSchema, examples=LOOKUP_RESULT_EXAMPLES)
def lookup_trackable_by_query(query: dict) -> Any:
    """Look up a trackable by code (query)

    As `POST /api/trackables/lookup`, with the code in the query string.
    """
    return _lookup(query["code"])


# --- active sessions ---------------------------------------------------------------------


@blp.route("/trackables/active", methods=["GET"])
@blp.auth(optional=True)
@blp.arguments(PageQuerySchema, location="query")
@blp.response(200, ActiveSessionSchema(many=True), headers=LINK_HEADERS)
def list_active_sessions(query: dict) -> Any:
    """List this client's active sessions

    The trackables this client opened with a secret code or QR token (its access cookie),
    the latest first; empty without one. Paged with `limit` and `cursor`.
    """
    return list_answer(trackables.list_active(current_client_key(), page=query["page"]))


@blp.route("/trackables/active/<uuid:trackable_id>", methods=["GET"])
@blp.auth(optional=True)
@blp.response(200, ActiveLandingSchema)
def get_active_landing(trackable_id: UUID) -> Any:
    """Get the active landing of a trackable

    For a client holding its active session, an account that unlocked it, or its
    managers; 404 `trackable_not_found` for anyone else.
    """
    return trackables.active_landing(current_viewer(), trackable_id, current_client_key())


@blp.route("/trackables/active/<uuid:trackable_id>/message", methods=["POST"])
@blp.auth(optional=True)
@blp.arguments(StatusMessageSchema)
@blp.response(200, ActiveSessionSchema)
def update_active_message(data: dict, trackable_id: UUID) -> Any:
    """Update the remembered status text

    Stored on this client's active session for the trackable (404 `trackable_not_found`
    without one); returns the session.
    """
    item = trackables.set_status_message(
        current_viewer(), current_client_key(), trackable_id, data["status_message"]
    )
    db.session.commit()
    return item


@blp.route("/trackables/active/<uuid:trackable_id>", methods=["DELETE"])
@blp.auth(optional=True)
@blp.response(204)
def end_active_session(trackable_id: UUID) -> None:
    """End the active session on this client

    Only this client's session ends: other clients' sessions and an account's unlock stay.
    204 also when there was none.
    """
    trackables.end_active(current_client_key(), trackable_id)
    db.session.commit()
