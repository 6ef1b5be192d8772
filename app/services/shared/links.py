"""External link verification (contract: External links).

`verify_link` backs POST /api/external-links/verify; `revalidate_link` is what note, team,
trackable and group create and update call before saving a link, whatever the client
verified before. Both answer a rejected link with the same 400 problem details
(`supportUrl`, plus `upstreamStatusCode` when the destination answered with an HTTP error).
The fetching rules live in app.integrations.outbound; the choices are listed in
docs/contract/README.md (External links).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

from flask import current_app

from app.error_codes import Code
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

    status = 400
    code = Code.LINK_VERIFICATION_FAILED

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

    `config` defaults to the current app's settings (OUTBOUND_*, LINK_SUPPORT_URL). Inside
    `checked_in_advance` the answer is the one found there, and nothing is fetched.
    """
    advance = _checked_in_advance.get()
    if advance is not None:
        return _answer(advance, url)
    config = current_app.config if config is None else config
    settings = outbound.OutboundSettings.from_config(config)
    support_url = str(config["LINK_SUPPORT_URL"])
    try:
        normalized = normalize_link(url, settings)
    except outbound.OutboundError as error:
        raise _failure(error, support_url) from error
    return _fetched(normalized, settings, support_url)


def _fetched(
    normalized: str, settings: outbound.OutboundSettings, support_url: str
) -> LinkVerification:
    try:
        page = outbound.fetch_page(normalized, settings)
    except outbound.OutboundError as error:
        raise _failure(error, support_url) from error
    return LinkVerification(normalized, page.title, support_url)


def _failure(error: outbound.OutboundError, support_url: str) -> LinkVerificationFailed:
    if isinstance(error, outbound.UpstreamHttpError):
        return LinkVerificationFailed(
            error.reason, support_url=support_url, upstream_status_code=error.status
        )
    log.info("external link rejected: %s", error.reason)
    return LinkVerificationFailed(error.reason, support_url=support_url)


# --- many links under one budget (a sync push) -------------------------------------------

LinkCheck = LinkVerification | LinkVerificationFailed
NOT_CHECKED = (
    "The link was not checked: this request's time for link checks ({budget:g} s, "
    "limits.syncPushLinkBudgetSeconds) ran out before it. Send it again."
)
MIN_FETCH_SECONDS = 0.05  # less than this left: not worth opening a connection
_checked_in_advance: ContextVar[Mapping[str, LinkCheck] | None] = ContextVar(
    "links_checked_in_advance", default=None
)


def verify_links(
    urls: Iterable[str], *, budget_seconds: float, config: Mapping[str, Any] | None = None
) -> dict[str, LinkCheck]:
    """Verify several links under one time budget (contract notes: Sync push link checks).

    Each distinct link (after normalization) is fetched once, in the order given, with
    what is left of the budget (and at most OUTBOUND_TIMEOUT_SECONDS); a link the budget
    no longer reaches, or whose fetch the budget cut short, fails with NOT_CHECKED and
    no fetch. Returns each given text's outcome."""
    config = current_app.config if config is None else config
    settings = outbound.OutboundSettings.from_config(config)
    support_url = str(config["LINK_SUPPORT_URL"])
    deadline = time.monotonic() + budget_seconds
    outcomes: dict[str, LinkCheck] = {}
    by_normalized: dict[str, LinkCheck] = {}
    for url in urls:
        if url in outcomes:
            continue
        try:
            normalized = normalize_link(url, settings)
        except outbound.OutboundError as error:
            outcomes[url] = _failure(error, support_url)
            continue
        if normalized not in by_normalized:
            by_normalized[normalized] = _within(
                normalized, settings, support_url, deadline, budget_seconds
            )
        outcomes[url] = by_normalized[normalized]
    return outcomes


def _within(
    normalized: str,
    settings: outbound.OutboundSettings,
    support_url: str,
    deadline: float,
    budget_seconds: float,
) -> LinkCheck:
    not_checked = LinkVerificationFailed(
        NOT_CHECKED.format(budget=budget_seconds), support_url=support_url
    )
    left = deadline - time.monotonic()
    if left < MIN_FETCH_SECONDS:
        return not_checked
    cut_short = left < settings.timeout_seconds
    try:
        timeout = min(left, settings.timeout_seconds)
        return _fetched(normalized, replace(settings, timeout_seconds=timeout), support_url)
    except LinkVerificationFailed as failure:
        # A fetch the budget cut short says nothing about the link: not checked.
        ran_out = cut_short and time.monotonic() >= deadline - MIN_FETCH_SECONDS
        return not_checked if ran_out and failure.upstream_status_code is None else failure


@contextmanager
def checked_in_advance(outcomes: Mapping[str, LinkCheck]) -> Iterator[None]:
    """Inside it, `verify_link` (and so every create and update) answers from `outcomes`
    (verify_links) without fetching; a link missing from them is NOT_CHECKED."""
    token = _checked_in_advance.set(outcomes)
    try:
        yield
    finally:
        _checked_in_advance.reset(token)


def _answer(outcomes: Mapping[str, LinkCheck], url: str) -> LinkVerification:
    found = outcomes.get(url)
    if isinstance(found, LinkVerification):
        return found
    if found is None:
        found = LinkVerificationFailed(
            "The link was not checked in this request. Send it again.",
            support_url=str(current_app.config["LINK_SUPPORT_URL"]),
        )
    # A fresh exception each time: several records may share one failed link.
    raise LinkVerificationFailed(
        found.detail,
        support_url=found.extra["supportUrl"],
        upstream_status_code=found.upstream_status_code,
    )


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
