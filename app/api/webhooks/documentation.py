"""The document's `webhooks` section (OpenAPI 3.1): one entry per event type, made from
the EventType enum (a type added there appears here), plus the test message. Each is the
POST a subscriber receives: the Standard Webhooks headers and the JSON payload."""

from __future__ import annotations

from typing import Any

from apispec import APISpec

from app.api import examples
from app.api.webhooks.schemas import WebhookPayloadSchema, WebhookTestPayloadSchema
from app.services.events import EventType
from app.services.webhooks import TEST_EVENT

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


def _entry(event_type: str, schema: str, description: str) -> dict[str, Any]:
    body = {
        "allOf": [
            {"$ref": f"#/components/schemas/{schema}"},
            {"type": "object", "properties": {"type": {"const": event_type}}},
        ]
    }
    example = {**examples.SCHEMAS[schema], "type": event_type}
    return {
        "post": {
            "summary": event_type,
            "description": description,
            "operationId": "webhook_" + event_type.replace(".", "_"),
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
                "content": {"application/json": {"schema": body, "example": example}},
            },
            "responses": {"2XX": {"description": RECEIVED}},
        }
    }


def document_webhooks(spec: APISpec) -> None:
    """Register the payload schemas and write the `webhooks` section."""
    spec.components.schema("WebhookPayload", schema=WebhookPayloadSchema)
    spec.components.schema("WebhookTestPayload", schema=WebhookTestPayloadSchema)
    section = {
        kind.value: _entry(
            kind.value,
            "WebhookPayload",
            f"A `{kind.value}` event, sent to subscriptions that hear of it (docs/"
            "contract/events.md, Events and notifications; docs/contract/webhooks.md).",
        )
        for kind in EventType
    }
    section[TEST_EVENT] = _entry(
        TEST_EVENT, "WebhookTestPayload", "Sent by POST /api/webhooks/{webhookId}/test."
    )
    spec.options["webhooks"] = section
