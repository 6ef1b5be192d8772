"""A personal data export on the website: the page the "your export is ready" mail links
to, and the download it offers.

Both are behind the website's sign-in: a visitor who is not signed in is sent to sign in
and comes back here; an account that is not the export's own gets the 404 page, as for
anything it may not see (the rules are the API's: services.privacy). Only the pages' own
session counts here: a bearer token sent to the website opens nothing (the API has its own
download for it).
"""

from __future__ import annotations

import uuid
from typing import Any

from flask import Blueprint, current_app, g, redirect, render_template, url_for
from werkzeug.wrappers import Response as BaseResponse

from app.auth import current_viewer
from app.errors import ApiError, NotFound
from app.platform.http_files import attachment
from app.services import privacy
from app.web.forms import file_size
from app.web.page_common import PageNotFound

NO_STORE = {"Cache-Control": "private, no-store"}


def _sign_in_first(export_id: uuid.UUID) -> BaseResponse | None:
    """To sign-in (and back to the export's page) unless this browser is signed in."""
    if g.get("page_account") is not None:
        return None
    back = url_for("pages.account_export", export_id=export_id)
    return redirect(url_for("pages.sign_in", next=back), 303)


def account_export(export_id: uuid.UUID) -> Any:
    gate = _sign_in_first(export_id)
    if gate is not None:
        return gate
    try:
        export = privacy.get_export(current_viewer(), export_id)
    except NotFound as error:
        raise PageNotFound from error
    html = render_template(
        "pages/account_export.html",
        export=export,
        size=None if export.size_bytes is None else file_size(export.size_bytes),
    )
    return html, 200, NO_STORE


def account_export_download(export_id: uuid.UUID) -> Any:
    gate = _sign_in_first(export_id)
    if gate is not None:
        return gate
    try:
        found = privacy.open_download(current_viewer(), export_id, current_app.config)
    except NotFound as error:
        raise PageNotFound from error
    except ApiError:  # not ready, or expired: the page says which
        return redirect(url_for("pages.account_export", export_id=export_id), 303)
    return attachment(
        found.chunks, size=found.size, mimetype="application/zip", filename=found.filename
    )


def add_routes(pages: Blueprint) -> None:
    """The export's page and its download, on the pages blueprint (its languages, its
    session, its 404 page)."""
    pages.add_url_rule(
        "/<string(length=2):lang>/account/export/<uuid:export_id>",
        view_func=account_export,
        endpoint="account_export",
    )
    pages.add_url_rule(
        "/<string(length=2):lang>/account/export/<uuid:export_id>/download",
        view_func=account_export_download,
        endpoint="account_export_download",
    )
