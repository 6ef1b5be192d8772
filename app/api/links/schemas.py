"""Schemas of the external link routes (contract: External links)."""

from __future__ import annotations

from marshmallow import fields, validate

from app.api.base import ProblemSchema, RequestSchema, Schema
from app.models.base import LINK_DESCRIPTION_MAX_LENGTH, LINK_URL_MAX_LENGTH


class ExternalLinkInputSchema(RequestSchema):
    """The External link fields of a create or update body (notes, teams, ...): the URL
    is verified server-side on save, whatever the client verified before."""

    external_link_url = fields.String(
        allow_none=True,
        validate=validate.Length(max=LINK_URL_MAX_LENGTH),
        metadata={"description": "http(s) URL, verified server-side; empty or null removes."},
    )
    external_link_description = fields.String(
        allow_none=True,
        validate=validate.Length(max=LINK_DESCRIPTION_MAX_LENGTH),
        metadata={"description": "Empty: the destination page's title is used."},
    )


class LinkVerifyRequestSchema(RequestSchema):
    read_models = ()  # a check: it writes nothing
    # Length and form are checked by the service, so that a rejection carries supportUrl.
    url = fields.String(required=True, metadata={"example": "https://example.com/page"})


class LinkVerificationSchema(Schema):
    normalized_url = fields.String(required=True, metadata={"example": "https://example.com/page"})
    suggested_description = fields.String(
        required=True,
        metadata={"description": "The destination page's title; empty when it has none."},
    )
    support_url = fields.String(required=True, metadata={"example": "/help/external-links"})


class LinkProblemSchema(ProblemSchema):
    support_url = fields.String(metadata={"description": "Where users learn what links work."})
    upstream_status_code = fields.Integer(
        metadata={"description": "The HTTP status the destination answered, when an error."}
    )
