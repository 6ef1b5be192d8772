"""The Android beta page, the address `androidBetaPageUrl` of the system status gives
(contract: Versioning): what the beta is, how to join it, and the versions the
service accepts, read from the same settings as `GET /api/system/beta-android`.

- `GET /{lang}/beta/android`: the page in one of the site's languages.
- `GET /beta/android` (the status's default address, which has no language): the same
  page in the language the browser prefers (`Accept-Language`), with links to each.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint, current_app, render_template

from app.services import system

# Each address without a language (its language comes from Accept-Language: app.web.pages)
# and the endpoint of the same page with one.
LANGUAGE_FREE: Mapping[str, str] = {"pages.beta_android_any": "pages.beta_android"}


def _page(headers: dict[str, str] | None = None) -> Any:
    beta = system.beta_android(current_app.config)
    return render_template("pages/beta_android.html", beta=beta), 200, headers or {}


def beta_android() -> Any:
    return _page()


def beta_android_any() -> Any:
    return _page({"Vary": "Accept-Language"})


def add_routes(pages: Blueprint) -> None:
    """The page's two addresses, on the pages blueprint (its languages, templates and
    headers)."""
    pages.add_url_rule("/<string(length=2):lang>/beta/android", view_func=beta_android)
    pages.add_url_rule("/beta/android", view_func=beta_android_any)
