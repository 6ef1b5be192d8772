"""Schemas of the external link routes (contract: External links)."""

from __future__ import annotations

from marshmallow import fields

from app.api.base import ProblemSchema, Schema


class LinkVerifyRequestSchema(Schema):
    # Length and form are checked by the service, so that a rejection carries supportUrl.
    url = fields.String(required=True, metadata={"example": "https://example.com/page"})


class LinkVerificationSchema(Schema):
    normalized_url = fields.String(metadata={"example": "https://example.com/page"})
    suggested_description = fields.String(
        metadata={"description": "The destination page's title; empty when it has none."}
    )
    support_url = fields.String(metadata={"example": "/help/external-links"})


class LinkProblemSchema(ProblemSchema):
    support_url = fields.String(metadata={"description": "Where users learn what links work."})
    upstream_status_code = fields.Integer(
        metadata={"description": "The HTTP status the destination answered, when an error."}
    )
