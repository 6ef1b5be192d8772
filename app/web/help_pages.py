"""The help pages the API's answers link to, so that every address a client is handed
resolves (contract: Trackables: lookup and active sessions; External links): foreign codes
(the lookup's `helpUrl`) and external links (the link check's `supportUrl`).

Like the beta page (app.web.beta): the language-free address, the one the API hands out,
is the page in the browser's language (`Accept-Language`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from babel.lists import format_list
from flask import Blueprint, current_app, render_template
from flask_babel import get_locale

from app.integrations.outbound import OutboundSettings
from app.services import trackables

# Each address without a language (app.web.pages) and the endpoint of the same page with one.
LANGUAGE_FREE: Mapping[str, str] = {
    "pages.help_foreign_codes_any": "pages.help_foreign_codes",
    "pages.help_external_links_any": "pages.help_external_links",
}
NEGOTIATED_HEADERS = {"Vary": "Accept-Language"}


def _listed(items: list[str], style: Literal["standard", "or"] = "standard") -> str:
    """`80 and 443`, `LN, GT oder TB`: a list in the page's language."""
    return format_list(items, style, locale=get_locale() or "en")


# A miss for another tracking system's code or a sister service's secret code: which codes those are
# and what to do with one. The prefixes are this deployment's code settings, the ones the lookup
# recognises (TRACKABLE_FOREIGN_HELP_URL).
def _foreign_codes_page() -> str:
    settings = trackables.CodeSettings.from_config(current_app.config)
    own = dict.fromkeys((settings.public_prefix, settings.secret_prefix))
    sister = settings.sister_prefix
    return render_template(
        "pages/help_foreign_codes.html",
        public_prefix=settings.public_prefix,
        secret_prefix=settings.secret_prefix,
        foreign_prefix=settings.foreign_prefix,
        # The lookup takes a sister's code for one only where its prefix is not our own.
        sister_prefix=sister if sister != settings.secret_prefix else None,
        own_prefixes=_listed(list(own), "or"),
        reserved_prefixes=_listed(list(settings.reserved_prefixes), "or"),
    )


# Why a link is refused and what the user can do, with the limits of the outbound settings the check
# runs under (LINK_SUPPORT_URL).
def _external_links_page() -> str:
    rules = OutboundSettings.from_config(current_app.config)
    return render_template(
        "pages/help_external_links.html",
        rules=rules,
        ports=_listed([str(port) for port in sorted(rules.allowed_ports)]),
    )


def help_foreign_codes() -> Any:
    return _foreign_codes_page()


def help_foreign_codes_any() -> Any:
    return _foreign_codes_page(), 200, NEGOTIATED_HEADERS


def help_external_links() -> Any:
    return _external_links_page()


def help_external_links_any() -> Any:
    return _external_links_page(), 200, NEGOTIATED_HEADERS


def add_routes(pages: Blueprint) -> None:
    """The two pages' addresses, on the pages blueprint (its languages, templates and
    headers)."""
    lang = "/<string(length=2):lang>"
    pages.add_url_rule(f"{lang}/help/foreign-codes", view_func=help_foreign_codes)
    pages.add_url_rule("/help/foreign-codes", view_func=help_foreign_codes_any)
    pages.add_url_rule(f"{lang}/help/external-links", view_func=help_external_links)
    pages.add_url_rule("/help/external-links", view_func=help_external_links_any)
