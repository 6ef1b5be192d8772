"""Trackable routes: comments, on the trackables blueprint (contract: Trackables: comments
and journey, rules 1-3), with their schemas and the fields every activity write shares
(`accessCode`, `clientMutationId`, `observedUtc`)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import current_app
from marshmallow import fields, validate

from app.api.base import Guid, ProblemSchema, Refuses, Regexp, RequestSchema, Schema, UtcDateTime
from app.api.pages import LINK_HEADERS, PageQuerySchema, list_answer
from app.api.trackables.cookies import guess_client, keeping_counted_misses
from app.api.trackables.lookup import CODE_MAX_LENGTH, TrimmedString
from app.api.trackables.reads import CAPPED_LIST_HEADERS
from app.api.trackables.routes import blp
from app.auth import current_viewer
from app.errors import PROBLEM_JSON
from app.extensions import db
from app.models.text import IN_NAMES, IN_TEXT
from app.models.trackable import (
    CLIENT_MUTATION_ID_MAX_LENGTH,
    COMMENT_BODY_MAX_LENGTH,
    COMMENT_NAME_MAX_LENGTH,
)
from app.services import trackables

NAME_CHARACTERS = Refuses(IN_NAMES, "Must not contain control or direction characters.")
BODY_CHARACTERS = Refuses(
    IN_TEXT, "Must not contain control characters (but tabs and line breaks) or direction ones."
)
BODY_DESCRIPTION = (
    f"Trimmed, 1 to {COMMENT_BODY_MAX_LENGTH} characters; no control characters other than "
    "tab and line breaks, no text-direction embeddings, overrides or isolates (U+202A-202E, "
    "U+2066-2069)."
)


# --- schemas -----------------------------------------------------------------------------


class ReusedTagProblemSchema(ProblemSchema):
    original_id = Guid(metadata={"description": "The record first written with the tag."})


def reused_tag_response(record: str) -> dict[str, Any]:
    """The 409 of a comment or stop write whose `clientMutationId` was used before on the
    trackable for another payload (docs/contract/sync.md, Replayed clientMutationIds)."""
    return {
        "schema": ReusedTagProblemSchema,
        "content_type": PROBLEM_JSON,
        "description": f"`code` `client_mutation_id_reused`: the tag already wrote another "
        f"{record}; `originalId` names it. Send the new one with a new `clientMutationId`.",
    }


class ActivityWriteSchema(RequestSchema):
    """What comment and stop writes share."""

    access_code = fields.String(
        load_default=None,
        validate=validate.Length(max=CODE_MAX_LENGTH),
        metadata={
            "description": "The trackable's short secret code or QR token, for an anonymous "
            "caller without an active session for it (a public code is no credential). "
            "A code that is not this trackable's is 403 `trackable_access_code_invalid` "
            "and counts against the guess budget."
        },
    )
    display_name = TrimmedString(
        load_default=None,
        validate=[validate.Length(min=1, max=COMMENT_NAME_MAX_LENGTH), NAME_CHARACTERS],
        metadata={
            "description": "An anonymous writer's name to show (trimmed, 1 to "
            f"{COMMENT_NAME_MAX_LENGTH} characters, no control, invisible or text-direction "
            "characters; default `Anonymous finder`). Ignored when signed in: the account's "
            "name shows."
        },
    )
    client_mutation_id = fields.String(
        load_default=None,
        validate=[
            validate.Length(min=1, max=CLIENT_MUTATION_ID_MAX_LENGTH),
            Regexp(r"^[A-Za-z0-9._:-]+$", error="Use letters, digits, . _ : or -."),
        ],
        metadata={
            "description": "A tag the client chooses per write: sending the same tag again "
            "(a retry) returns the first result instead of writing twice.",
            "example": "5b0e3f7a-2c1d-4e8f-9a6b-7c5d3e1f2a4b",
        },
    )
    observed_utc = UtcDateTime(
        load_default=None,
        metadata={
            "description": "When the item was really seen (a phone that was offline sends "
            "it later). Not in the future, not older than 365 days."
        },
    )


class TrackableCommentSchema(Schema):
    """A trackable comment as the caller sees it."""

    trackable_comment_id = Guid(required=True)
    trackable_id = Guid(required=True)
    body = fields.String(required=True)
    is_anonymous = fields.Boolean(required=True)
    author_display_text = fields.String(
        required=True,
        metadata={"description": "The account's name, or the anonymous writer's chosen one."},
    )
    author_profile_user_name = fields.String(
        required=True, allow_none=True, metadata={"description": "null for an anonymous comment."}
    )
    created_utc = UtcDateTime(required=True)
    edited_utc = UtcDateTime(required=True, allow_none=True)
    observed_utc = UtcDateTime(required=True, allow_none=True)
    can_edit = fields.Boolean(
        required=True, metadata={"description": "For the caller (its author only)."}
    )
    can_delete = fields.Boolean(
        required=True,
        metadata={"description": "For the caller (author, owner or current team admin)."},
    )


class TrackableCommentCreateSchema(ActivityWriteSchema):
    read_models = (TrackableCommentSchema,)

    body = TrimmedString(
        required=True,
        validate=[validate.Length(min=1, max=COMMENT_BODY_MAX_LENGTH), BODY_CHARACTERS],
        metadata={"description": BODY_DESCRIPTION},
    )


class TrackableCommentEditSchema(RequestSchema):
    read_models = (TrackableCommentSchema,)

    body = TrimmedString(
        required=True,
        validate=[validate.Length(min=1, max=COMMENT_BODY_MAX_LENGTH), BODY_CHARACTERS],
        metadata={"description": BODY_DESCRIPTION},
    )


def credential(data: dict[str, Any]) -> trackables.Credential:
    """The possession an activity write presents (its code, if any, and the client)."""
    return trackables.Credential(
        access_code=data.pop("access_code"), guess_client=guess_client(), config=current_app.config
    )


# --- routes ------------------------------------------------------------------------------


@blp.route("/trackables/<uuid:trackable_id>/comments", methods=["GET"])
@blp.auth(optional=True)
@blp.arguments(PageQuerySchema, location="query")
@blp.response(
    200, TrackableCommentSchema(many=True), headers={**CAPPED_LIST_HEADERS, **LINK_HEADERS}
)
def list_trackable_comments(query: dict, trackable_id: UUID) -> Any:
    """List a trackable's comments

    Newest first, at most the cap (500), `X-Result-Truncated: true` when cut; or paged
    with `limit` and `cursor`. 404 `trackable_not_found` when the caller may not see the
    trackable.
    """
    found = trackables.list_comments(
        current_viewer(),
        trackable_id,
        cap=current_app.config["PUBLIC_LIST_CAP"],
        page=query["page"],
    )
    return list_answer(found)


@blp.route("/trackables/<uuid:trackable_id>/comments", methods=["POST"])
@blp.auth(optional=True)
@blp.arguments(TrackableCommentCreateSchema)
@blp.response(201, TrackableCommentSchema)
@blp.alt_response(409, **reused_tag_response("comment"))
def create_trackable_comment(data: dict, trackable_id: UUID) -> Any:
    """Comment on a trackable

    Signed in: on any trackable the caller may see. Anonymous: with an active session
    for it or its exact `accessCode` (403 `trackable_access_code_required` /
    `trackable_access_code_invalid`). 400 `trackable_activation_required` when it is not
    activated. A retry with the same `clientMutationId` returns the first comment; the
    same tag with another body is 409 `client_mutation_id_reused` (`originalId`).
    """
    access = credential(data)
    with keeping_counted_misses():
        comment = trackables.add_comment(current_viewer(), trackable_id, credential=access, **data)
    db.session.commit()
    return comment


@blp.route("/trackables/<uuid:trackable_id>/comments/<uuid:comment_id>", methods=["PUT"])
@blp.auth()
@blp.arguments(TrackableCommentEditSchema)
@blp.response(200, TrackableCommentSchema)
def update_trackable_comment(data: dict, trackable_id: UUID, comment_id: UUID) -> Any:
    """Edit a trackable comment

    Only its signed-in author (403 `trackable_comment_edit_forbidden`); 404
    `trackable_comment_not_found` when it is not a comment of that trackable.
    """
    comment = trackables.edit_comment(current_viewer(), trackable_id, comment_id, **data)
    db.session.commit()
    return comment


@blp.route("/trackables/<uuid:trackable_id>/comments/<uuid:comment_id>", methods=["DELETE"])
@blp.auth()
@blp.response(204)
def delete_trackable_comment(trackable_id: UUID, comment_id: UUID) -> None:
    """Delete a trackable comment

    Its author, the trackable's owner or a current admin of its team (403
    `trackable_comment_delete_forbidden`); 404 `trackable_comment_not_found`.
    """
    trackables.delete_comment(current_viewer(), trackable_id, comment_id)
    db.session.commit()
