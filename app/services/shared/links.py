"""External link verification (contract: External links).

`verify_link` backs POST /api/external-links/verify; `revalidate_link` is what note, team,
trackable and group create and update call before saving a link, whatever the client
verified before. Both answer a rejected link with the same 400 problem details
(`supportUrl`, plus `upstreamStatusCode` when the destination answered with an HTTP error).
The fetching rules live in app.integrations.outbound; the choices are listed in
docs/contract-notes.md (External links).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask import current_app

from app.errors import ApiError
from app.integrations import outbound

log = logging.getLogger(__name__)

# "javascript:", "mailto:", "data:" ... but not "example.com:8080", where a port follows.
SCHEME_PREFIX = re.compile(r"^[a-z][a-z0-9+.-]*:(?![0-9])", re.IGNORECASE)


@dataclass(frozen=True)
class LinkVerification:
    normalized_url: str
    suggested_description: str  # the destination page's title; "" when it has none
    support_url: str


class LinkVerificationFailed(ApiError):
    """400: the link is malformed, not allowed, unreachable or answered an HTTP error."""

    status, title = 400, "External link rejected"

    def __init__(
        self, detail: str, *, support_url: str, upstream_status_code: int | None = None
    ) -> None:
        super().__init__(detail, supportUrl=support_url, upstreamStatusCode=upstream_status_code)
        self.upstream_status_code = upstream_status_code


def normalize_link(url: str, settings: outbound.OutboundSettings) -> str:
    """Trim, add https:// to a bare host, then normalize (lower-case scheme and host, IDNA,
    no default port, no fragment, path and query kept). Raises outbound.BlockedDestination."""
    text = url.strip()
    if not text:
        raise outbound.InvalidUrl("Enter a web address.")
    if len(text) > settings.max_url_length:
        raise outbound.InvalidUrl(
            f"The address is longer than {settings.max_url_length} characters."
        )
    if text.startswith("//"):
        text = "https:" + text
    elif "://" not in text and not SCHEME_PREFIX.match(text):
        text = "https://" + text
    return outbound.parse_target(text, settings).url


def verify_link(url: str, *, config: Mapping[str, Any] | None = None) -> LinkVerification:
    """Normalize the link, fetch it under the outbound rules and suggest its page title.

    `config` defaults to the current app's settings (OUTBOUND_*, LINK_SUPPORT_URL).
    """
    config = current_app.config if config is None else config
    settings = outbound.OutboundSettings.from_config(config)
    support_url = str(config["LINK_SUPPORT_URL"])
    try:
        normalized = normalize_link(url, settings)
        page = outbound.fetch_page(normalized, settings)
    except outbound.UpstreamHttpError as error:
        raise LinkVerificationFailed(
            error.reason, support_url=support_url, upstream_status_code=error.status
        ) from error
    except outbound.OutboundError as error:
        log.info("external link rejected: %s", error.reason)
        raise LinkVerificationFailed(error.reason, support_url=support_url) from error
    return LinkVerification(normalized, page.title, support_url)


def revalidate_link(url: str | None, description: str | None) -> tuple[str | None, str]:
    """The (url, description) to store for a link a client sends on create or update.

    No link (None or blank) stores (None, ""). Otherwise the link is verified again and
    stored normalized; a blank description takes the page title. Raises
    LinkVerificationFailed (400) like the verify route.
    """
    if url is None or not url.strip():
        return None, ""
    verification = verify_link(url)
    chosen = (description or "").strip()
    return verification.normalized_url, chosen or verification.suggested_description


def checked_link(url: str | None, description: str | None) -> tuple[str | None, str]:
    """A link about to be saved on a note, team, trackable or group, revalidated
    server-side (contract: External links): no URL means no link and no description."""
    if not url or not url.strip():
        return None, ""
    normalized, described = revalidate_link(url, description or None)
    return normalized, described or ""


def changed_link(
    current_url: str | None, current_description: str, changes: Mapping[str, Any]
) -> tuple[str | None, str] | None:
    """For an update: the link to store, or None to keep the stored one. Revalidated only
    when the URL is sent; a description sent alone replaces the stored one (and stays
    empty while there is no URL); sending the same URL keeps its description."""
    if "external_link_url" in changes:
        url = changes["external_link_url"]
        kept = current_description if url == current_url else None
        return checked_link(url, changes.get("external_link_description", kept))
    if "external_link_description" in changes and current_url:
        return current_url, changes["external_link_description"] or ""
    return None
