"""The document's `webhooks` section (OpenAPI 3.1): one entry per event type, made from
the EventType enum (a type added there must name its data here), plus the test message.
Each is the POST a subscriber receives: the Standard Webhooks headers and a body that is a
named schema per event type (`<Type>Payload`) over one envelope (`WebhookEnvelope`), so
client generators emit a type for each, and a receiver can narrow on `type`."""

from __future__ import annotations

import re
from typing import Any

from apispec import APISpec

from app.api import examples
from app.api.webhooks import schemas
from app.services.events import EventType
from app.services.webhooks import TEST_EVENT

ENVELOPE = "WebhookEnvelope"
# The `data` of each event type (services.events.recording says what each records).
EVENT_DATA: dict[str, type[schemas.Schema]] = {
    EventType.ACTIVATED: schemas.WebhookTrackableDataSchema,
    EventType.COMMENT_WRITTEN: schemas.WebhookTrackableCommentDataSchema,
    EventType.COMMENT_EDITED: schemas.WebhookTrackableCommentDataSchema,
    EventType.COMMENT_DELETED: schemas.WebhookTrackableCommentDataSchema,
    EventType.STOP_ADDED: schemas.WebhookJourneyStopDataSchema,
    EventType.STOP_DELETED: schemas.WebhookJourneyStopDataSchema,
    EventType.STATUS_MESSAGE_CHANGED: schemas.WebhookTrackableDataSchema,
    EventType.ATTACHED_TO_NOTE: schemas.WebhookTrackableNoteDataSchema,
    EventType.SECRET_ROTATED: schemas.WebhookTrackableDataSchema,
    EventType.GROUP_ITEM_ADDED: schemas.WebhookGroupItemDataSchema,
    EventType.GROUP_ITEM_REMOVED: schemas.WebhookGroupItemDataSchema,
    EventType.TEAM_NOTE_CREATED: schemas.WebhookTeamNoteDataSchema,
    EventType.TEAM_NOTE_EDITED: schemas.WebhookTeamNoteDataSchema,
    EventType.TEAM_NOTE_DELETED: schemas.WebhookTeamNoteDataSchema,
    EventType.TEAM_NOTE_REMOVED: schemas.WebhookTeamNoteDataSchema,
    EventType.MEMBERSHIP_REQUESTED: schemas.WebhookMembershipDataSchema,
    EventType.MEMBER_JOINED: schemas.WebhookMembershipDataSchema,
    EventType.MEMBER_LEFT: schemas.WebhookMembershipDataSchema,
    EventType.MEMBER_REMOVED: schemas.WebhookMembershipDataSchema,
    EventType.MEMBER_ROLE_CHANGED: schemas.WebhookMembershipDataSchema,
    EventType.NOTE_PUBLISHED: schemas.WebhookNotePublishedDataSchema,
    TEST_EVENT: schemas.WebhookTestDataSchema,
}

HEADERS = (
    (
        "webhook-id",
        "The delivery's id: the same on every try of it (deduplicate by it).",
        {"type": "string", "format": "uuid"},
    ),
    (
        "webhook-timestamp",
        "When this try was signed, in Unix seconds.",
        {"type": "string", "pattern": "^[0-9]+$"},
    ),
    (
        "webhook-signature",
        "`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed "
        "with the base64-decoded part of the `whsec_` secret; during a secret rotation two "
        "such signatures, separated by a space (either verifies).",
        {"type": "string", "pattern": "^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$"},
    ),
)
RECEIVED = (
    "Received. Any other status (a 3xx too: redirects are not followed), or no answer "
    "within the time limit, is a failed try, retried with back-off for about a day."
)


def payload_name(event_type: str) -> str:
    """The component name of an event type's body: `trackable.journey_stop.added` ->
    `TrackableJourneyStopAddedPayload`."""
    return "".join(part.title() for part in re.split(r"[._]", event_type)) + "Payload"


def _data_name(schema: type[schemas.Schema]) -> str:
    return schema.__name__.removesuffix("Schema")


def _payload(event_type: str, data: str) -> dict[str, Any]:
    """The body of one event type: the envelope, its `type` that name alone, its `data`."""
    return {
        "description": f"The body of a `{event_type}` delivery.",
        "allOf": [
            {"$ref": f"#/components/schemas/{ENVELOPE}"},
            {
                "type": "object",
                "required": ["type", "data"],
                "properties": {
                    "type": {"type": "string", "enum": [event_type]},
                    "data": {"$ref": f"#/components/schemas/{data}"},
                },
            },
        ],
    }


def _entry(event_type: str, data: str, description: str) -> dict[str, Any]:
    example = {
        "type": event_type,
        "timestamp": examples.WEBHOOK_SENT_AT,
        "data": examples.SCHEMAS[data],
    }
    schema = {"$ref": f"#/components/schemas/{payload_name(event_type)}"}
    return {
        "post": {
            "summary": event_type,
            "description": description,
            "operationId": "receive" + payload_name(event_type).removesuffix("Payload"),
            # Signed as Standard Webhooks says (the headers below), not by an HTTP scheme.
            "security": [],
            "parameters": [
                {
                    "name": name,
                    "in": "header",
                    "required": True,
                    "description": text,
                    "schema": shape,
                }
                for name, text, shape in HEADERS
            ],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": schema, "example": example}},
            },
            "responses": {"2XX": {"description": RECEIVED}},
        }
    }


def document_webhooks(spec: APISpec) -> None:
    """Register the envelope, each event type's data and body, and write the `webhooks`
    section: every event type, then the test message."""
    spec.components.schema(ENVELOPE, schema=schemas.WebhookEnvelopeSchema)
    section = {}
    for event_type in [kind.value for kind in EventType] + [TEST_EVENT]:
        data = EVENT_DATA.get(event_type)
        if data is None:
            raise LookupError(f"{event_type}: name its webhook data schema in EVENT_DATA")
        name = _data_name(data)
        if name not in spec.components.schemas:
            spec.components.schema(name, schema=data)
        spec.components.schema(payload_name(event_type), component=_payload(event_type, name))
        if event_type == TEST_EVENT:
            description = "Sent by POST /api/webhooks/{webhookId}/test."
        else:
            description = (
                f"A `{event_type}` event, sent to subscriptions that hear of it (docs/"
                "contract/events.md, Events and notifications; docs/contract/webhooks.md)."
            )
        section[event_type] = _entry(event_type, name, description)
    spec.options["webhooks"] = section
