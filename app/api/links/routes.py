"""External link verification (contract: External links)."""

from __future__ import annotations

from flask import current_app

from app.api.base import Blueprint
from app.api.links.schemas import (
    LinkProblemSchema,
    LinkVerificationSchema,
    LinkVerifyRequestSchema,
)
from app.errors import PROBLEM_JSON
from app.extensions import limiter
from app.services.shared import links

blp = Blueprint(
    "links", __name__, url_prefix="/api/external-links", description="External link verification"
)


def verify_rate_limit() -> str:
    return str(current_app.config["RATE_LIMIT_LINK_VERIFY"])


@blp.route("/verify", methods=["POST"])
@limiter.limit(verify_rate_limit)
@blp.auth()
@blp.arguments(LinkVerifyRequestSchema)
@blp.response(200, LinkVerificationSchema)
@blp.doc(  # the rejection's extra fields; a manual doc, as @blp.arguments documents 400 too
    responses={
        "400": {
            "description": "The link is malformed, not allowed, unreachable or answered an "
            "HTTP error (or the body is invalid).",
            "content": {PROBLEM_JSON: {"schema": LinkProblemSchema}},
        }
    }
)
def verify_external_link(data: dict) -> links.LinkVerification:
    """Verify an external link and suggest a description

    Normalizes the URL (https:// is added to a bare host), fetches it without following
    redirects to private addresses, and suggests the page title as description. Note, team
    and trackable saves verify the link again on their own.
    """
    return links.verify_link(data["url"])
