"""Webhook routes: signed-in users manage their subscriptions, and
team admins their team's; everyone else is answered 404 for a subscription."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import current_app

from app.api.base import PROBLEM_JSON, Blueprint, ProblemSchema
from app.api.examples import coded_problem
from app.api.pages import LINK_HEADERS, PageQuerySchema, list_answer
from app.api.webhooks.schemas import (
    WebhookCreatedSchema,
    WebhookCreateSchema,
    WebhookDeliverySchema,
    WebhookSchema,
    WebhookUpdateSchema,
)
from app.auth import current_viewer
from app.error_codes import Code
from app.extensions import db
from app.services import webhooks

blp = Blueprint(
    "webhooks",
    __name__,
    url_prefix="/api/webhooks",
    description="Signed HTTP callbacks of the events an inbox hears of (Standard Webhooks 1.0)",
)

CAPPED_LIST_HEADERS = {
    "X-Result-Truncated": {
        "description": "`true` when more deliveries exist than the cap returned.",
        "schema": {"type": "string", "enum": ["true"]},
    }
}


def conflict_response(description: str, code: str, detail: str) -> dict[str, Any]:
    """The 409 of a delivery that cannot be sent now (its codes in `description`)."""
    return {
        "schema": ProblemSchema,
        "content_type": PROBLEM_JSON,
        "description": description,
        "example": coded_problem(409, code, detail),
    }


SWITCHED_OFF = "`webhook_disabled`: the webhook is switched off; switch it on first (PATCH)."
SENDS_LIMITED = {
    "schema": ProblemSchema,
    "content_type": PROBLEM_JSON,
    "description": "`webhook_sends_limited`: the account asked for its test messages and "
    "redeliveries of the hour (60 by default, `limits.webhookSends`), or this webhook had "
    "its (20, `limits.webhookSendsPerWebhook`); `Retry-After` says when the next one fits.",
    "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer"}}},
    "example": coded_problem(
        429,
        Code.WEBHOOK_SENDS_LIMITED,
        "This webhook has had 20 test messages and redeliveries in the last hour, the most "
        "allowed. Try again in 1200 seconds.",
    ),
}


@blp.route("", methods=["POST"])
@blp.auth()
@blp.arguments(WebhookCreateSchema)
@blp.response(201, WebhookCreatedSchema)
def create_webhook(data: dict) -> Any:
    """Create a webhook

    For me, or with `teamId` for a team I am an admin of (403 `team_admin_required` for
    its other members, 404 `team_not_found` for a team I may not see). The answer holds
    the signing secret, shown this once. At most `WEBHOOKS_PER_OWNER` (20) per user and
    per team (400 `webhook_limit_reached`).
    """
    created = webhooks.create_webhook(current_viewer(), current_app.config, **data)
    db.session.commit()
    return created


@blp.route("", methods=["GET"])
@blp.auth()
@blp.arguments(PageQuerySchema, location="query")
@blp.response(200, WebhookSchema(many=True), headers=LINK_HEADERS)
def list_webhooks(query: dict) -> Any:
    """List my webhooks

    Mine, and those of the teams I am an admin of; newest first, paged with `limit` and
    `cursor`.
    """
    return list_answer(webhooks.list_webhooks(current_viewer(), page=query["page"]))


@blp.route("/<uuid:webhook_id>", methods=["GET"])
@blp.auth()
@blp.response(200, WebhookSchema)
def get_webhook(webhook_id: UUID) -> Any:
    """Get a webhook"""
    return webhooks.get_webhook(current_viewer(), webhook_id)


@blp.route("/<uuid:webhook_id>", methods=["PATCH"])
@blp.auth()
@blp.arguments(WebhookUpdateSchema)
@blp.response(200, WebhookSchema)
def update_webhook(data: dict, webhook_id: UUID) -> Any:
    """Change a webhook

    Only the fields sent change. Switching it on again forgets its failures.
    """
    changed = webhooks.update_webhook(current_viewer(), webhook_id, current_app.config, **data)
    db.session.commit()
    return changed


@blp.route("/<uuid:webhook_id>", methods=["DELETE"])
@blp.auth()
@blp.response(204)
def delete_webhook(webhook_id: UUID) -> None:
    """Delete a webhook

    With its deliveries; a try under way may still arrive.
    """
    webhooks.delete_webhook(current_viewer(), webhook_id)
    db.session.commit()


@blp.route("/<uuid:webhook_id>/deliveries", methods=["GET"])
@blp.auth()
@blp.arguments(PageQuerySchema, location="query")
@blp.response(
    200, WebhookDeliverySchema(many=True), headers={**CAPPED_LIST_HEADERS, **LINK_HEADERS}
)
def list_webhook_deliveries(query: dict, webhook_id: UUID) -> Any:
    """List a webhook's deliveries

    Newest first, each with every try (status, latency, the start of the answer, the
    error); kept 30 days. At most the cap (500) with `X-Result-Truncated: true` when cut,
    or paged with `limit` and `cursor`.
    """
    found = webhooks.list_deliveries(
        current_viewer(),
        webhook_id,
        page=query["page"],
        cap=current_app.config["PUBLIC_LIST_CAP"],
    )
    return list_answer(found)


@blp.route("/<uuid:webhook_id>/deliveries/<uuid:delivery_id>/redeliver", methods=["POST"])
@blp.auth()
@blp.response(202, WebhookDeliverySchema)
@blp.alt_response(
    409,
    **conflict_response(
        "`webhook_delivery_pending`: the delivery is still being tried; wait for its "
        "outcome. " + SWITCHED_OFF,
        Code.WEBHOOK_DELIVERY_PENDING,
        "The delivery is still being tried.",
    ),
)
@blp.alt_response(429, **SENDS_LIMITED)
def redeliver_webhook_delivery(webhook_id: UUID, delivery_id: UUID) -> Any:
    """Send a delivery again

    With the same `webhook-id`, retried for another day. 409 while it is still being
    tried, or when the webhook is switched off; 429 past the hourly limits on test
    messages and redeliveries (per account and per webhook, counted together).
    """
    delivery = webhooks.redeliver(current_viewer(), webhook_id, delivery_id, current_app.config)
    db.session.commit()
    return delivery


@blp.route("/<uuid:webhook_id>/test", methods=["POST"])
@blp.auth()
@blp.response(202, WebhookDeliverySchema)
@blp.alt_response(
    409, **conflict_response(SWITCHED_OFF, Code.WEBHOOK_DISABLED, "Switch the webhook on first.")
)
@blp.alt_response(429, **SENDS_LIMITED)
def test_webhook(webhook_id: UUID) -> Any:
    """Send a test message

    A `webhook.test` delivery, signed and retried as any other. 409 when the webhook is
    switched off; 429 past the hourly limits on test messages and redeliveries (per
    account and per webhook, counted together).
    """
    delivery = webhooks.send_test(current_viewer(), webhook_id, current_app.config)
    db.session.commit()
    return delivery


@blp.route("/<uuid:webhook_id>/secret/rotate", methods=["POST"])
@blp.auth()
@blp.response(200, WebhookCreatedSchema)
def rotate_webhook_secret(webhook_id: UUID) -> Any:
    """Rotate a webhook's signing secret

    The new secret is in the answer, shown this once. For a day both secrets sign each
    delivery (two signatures in `webhook-signature`), so a receiver can switch over.
    """
    rotated = webhooks.rotate_secret(current_viewer(), webhook_id, current_app.config)
    db.session.commit()
    return rotated
