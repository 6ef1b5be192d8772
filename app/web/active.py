"""The active landing of a client holding a trackable (its access-session cookie, an
account unlock, or managing it), `GET /{lang}/trackables/active/{trackableId}`:
activation, "log a find" (app.web.find), ending the session on this device.

The forms post to `.../active/{trackableId}/{find|activate|end}` and answer 303 to the
form's own section of the landing (post/redirect/get); a refused form is the landing again
with the API's status and its error in words, what was typed kept. The find form carries a
fresh `clientMutationId`, so a form sent twice writes once. Pages write with the session
cookie only: no code is ever typed into them.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flask import (
    Blueprint,
    current_app,
    flash,
    g,
    get_flashed_messages,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from werkzeug.wrappers import Response as BaseResponse

from app.auth import Viewer, build_viewer, current_viewer
from app.error_codes import Code
from app.errors import ApiError, TrackableError, ValidationFailed
from app.extensions import client_ip, db
from app.models.image import ImageTarget
from app.models.trackable import (
    COMMENT_BODY_MAX_LENGTH,
    COMMENT_NAME_MAX_LENGTH,
    TRACKABLE_NAME_MAX_LENGTH,
)
from app.services import images, trackables
from app.web.find import (
    forget_finder_name,
    log_find,
    remember_finder_name,
    remembered_finder_name,
)
from app.web.forms import ActivateForm, FindForm, file_size
from app.web.i18n import language_page
from app.web.page_common import PageNotFound, client_key, not_found_on_miss
from app.web.photos import Photo, photos_of

# The API's trackable error codes, in words (the API's own details are English only).
ERROR_WORDS: Mapping[str, Any] = {
    Code.TRACKABLE_ACCESS_CODE_REQUIRED: _l(
        "This device no longer holds this trackable. Scan its QR code or enter its secret "
        "code again, then try once more."
    ),
    Code.TRACKABLE_ACCESS_CODE_INVALID: _l("This code is not a secret code of this trackable."),
    Code.TRACKABLE_ACTIVATION_REQUIRED: _l(
        "This trackable has to be activated before it takes comments or journey stops."
    ),
    Code.TRACKABLE_ALREADY_ACTIVATED: _l("This trackable is already activated."),
    Code.TRACKABLE_REQUEST_REJECTED: _l(
        "This was refused: you may only activate for a team you are an active member of."
    ),
    Code.TRACKABLE_NOT_FOUND: _l("Trackable not found."),
    # The find form's id sent again with other words (the browser's Back, then an edit).
    Code.CLIENT_MUTATION_ID_REUSED: _l(
        "This form was sent before with other content, so nothing was saved now. Check "
        "it and send it again."
    ),
}
# Why a find's photo was refused, in words (the images service's codes); nothing of the
# find was saved then.
PHOTO_WORDS: Mapping[str, Any] = {
    Code.IMAGE_TRUNCATED: _l("This photo is broken or incomplete: choose another one."),
    Code.IMAGE_MEMORY_LIMIT: _l("This photo is too large to process: choose a smaller one."),
    Code.IMAGE_ASPECT_RATIO: _l("This photo is too long and narrow: choose another one."),
    Code.IMAGE_LIMIT_REACHED: _l("This entry holds as many photos as it may."),
    Code.FINDER_PHOTO_LIMIT_REACHED: _l(
        "Many photos were sent from here in a short time: send this one later."
    ),
    Code.IMAGE_DAILY_LIMIT_REACHED: _l(
        "Your account has sent many photos today: send this one later."
    ),
}
PHOTO_NOT_SAVED = _l(
    "Nothing was saved: check the photo, choose it again (or none), then send the form."
)
REFUSED = _l("This was refused. Reload the page and try again.")
SIGN_IN_TO_ACTIVATE = _l(
    "Sign in with your account to activate this trackable; then it takes comments and "
    "journey stops."
)
NAME_REQUIRED = _l("An activated trackable needs a name: enter one.")
EXPIRED = _l(
    "This form has expired or did not come from this page, so nothing was saved. Check "
    "it and send it again."
)
# The active landing's forms by endpoint: a refused CSRF token shows the landing again.
LANDING_FORMS = {
    "pages.post_find": "find",
    "pages.post_activation": "activate",
    "pages.end_session": "end",
}


@dataclass
class FormState:
    """What a refused form shows again: its values and its errors in words."""

    form: str = ""
    values: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    status: int = 200
    find_form: FindForm | None = None  # "log a find" as sent, with its errors


def _landing(trackable_id: uuid.UUID, state: FormState | None = None) -> Any:
    viewer = current_viewer()
    try:
        landing = trackables.active_landing(viewer, trackable_id, client_key())
        view = trackables.get_trackable(viewer, trackable_id)
    except TrackableError as error:
        not_found_on_miss(error)
        raise
    state = state or FormState()
    html = render_template(
        "pages/active.html",
        landing=landing,
        trackable=view,
        posted_photos=_posted_photos(viewer),
        signed_in=viewer.is_authenticated,
        state=state,
        sign_in_to_activate=SIGN_IN_TO_ACTIVATE,
        new_mutation_id=lambda: str(uuid.uuid4()),
        find_form=_find_form(state),
        limits={"body": COMMENT_BODY_MAX_LENGTH, "name": COMMENT_NAME_MAX_LENGTH},
        name_limit=TRACKABLE_NAME_MAX_LENGTH,
    )
    return html, state.status, {"Cache-Control": "no-store"}


def _posted_photos(viewer: Viewer) -> list[Photo]:
    """The photos of the entry a find just posted (its notice shows them)."""
    flashed = get_flashed_messages(True, ["find-comment", "find-stop", "find-photo"])
    posted: dict[str, str] = {str(pair[0]): str(pair[1]) for pair in flashed}
    if "find-photo" not in posted:
        return []
    if "find-comment" in posted:
        target, entry_id = ImageTarget.TRACKABLE_COMMENT, posted["find-comment"]
    else:
        target, entry_id = ImageTarget.JOURNEY_STOP, posted.get("find-stop", "")
    try:
        parent_id = uuid.UUID(entry_id)
    except ValueError:
        return []
    return photos_of(images.list_images(viewer, target, parent_id))


def _find_form(state: FormState) -> FindForm:
    """The "log a find" form: as sent when it was refused (what was typed kept), else
    empty but for the name of this visit's last find; either way with a fresh
    clientMutationId, since nothing of it was written."""
    form = state.find_form
    if form is None:
        form = FindForm(formdata=None)
        form.display_name.data = remembered_finder_name()
    form.client_mutation_id.data = str(uuid.uuid4())
    return form


def active_page(trackable_id: uuid.UUID) -> Any:
    return _landing(trackable_id)


def _back(trackable_id: uuid.UUID, anchor: str) -> BaseResponse:
    return redirect(url_for("pages.active_page", trackable_id=trackable_id, _anchor=anchor), 303)


def _refused(trackable_id: uuid.UUID, form: str, error: ApiError) -> Any:
    """The landing again with the service's refusal in words; when this client may no
    longer open the landing (its session ended), a page with the refusal alone. A hidden
    or unknown trackable is the 404 page."""
    db.session.rollback()
    if isinstance(error, TrackableError):
        not_found_on_miss(error)
    words = ERROR_WORDS.get(error.code or "")
    photo_words = _photo_words(error.code or "") if form == "find" else None
    if words is not None:
        message = str(words)
    elif photo_words is not None:
        message = str(PHOTO_NOT_SAVED)
    elif isinstance(error, ValidationFailed) and "name" in error.extra.get("errors", {}):
        message = str(NAME_REQUIRED)
    else:
        message = str(REFUSED)
    values = {key: str(value) for key, value in request.form.items() if key != "csrf_token"}
    find_form = FindForm() if form == "find" else None  # what was typed, again
    if find_form is not None and photo_words is not None:
        find_form.photo.errors = [photo_words]
    state = FormState(form, values, {"form": message}, error.status, find_form)
    try:
        html, status, headers = _landing(trackable_id, state)
    except PageNotFound:
        html = render_template("pages/error.html", message=message)
        return html, error.status, {"Cache-Control": "no-store"}
    retry = {"Retry-After": error.headers["Retry-After"]} if "Retry-After" in error.headers else {}
    return html, status, {**headers, **retry}


def _photo_words(code: str) -> str | None:
    """A refused photo's reason in words; None when the refusal is not about a photo."""
    if code == Code.IMAGE_REJECTED:  # format, bytes, pixels or broken: the limits in words
        config = current_app.config
        return _(
            "This photo could not be used: choose a JPEG, PNG, WebP, GIF or HEIC image of "
            "at most %(size)s and %(pixels)d megapixels.",
            size=file_size(int(config["IMAGE_MAX_BYTES"])),
            pixels=int(config["IMAGE_MAX_PIXELS"]) // 1_000_000,
        )
    words = PHOTO_WORDS.get(code)
    return None if words is None else str(words)


def _invalid(trackable_id: uuid.UUID, form: str, errors: dict[str, str]) -> Any:
    values = {key: str(value) for key, value in request.form.items() if key != "csrf_token"}
    return _landing(trackable_id, FormState(form, values, errors, 400))


def _credential() -> trackables.Credential:
    """Pages write with the session cookie only: no code is ever typed into them."""
    return trackables.Credential(
        access_code=None,
        guess_client=trackables.guess_key(client_ip(), current_app.config),
        config=current_app.config,
    )


# A comment, a journey stop typed in any usual notation or from the browser's geolocation, or both,
# with an optional "seen on" day and an optional photo.
def post_find(trackable_id: uuid.UUID) -> Any:
    form = FindForm()
    if not form.validate():
        return _landing(trackable_id, FormState("find", status=400, find_form=form))
    try:
        posted = log_find(current_viewer(), trackable_id, form, _credential(), client_ip())
    except ApiError as error:
        return _refused(trackable_id, "find", error)
    try:
        db.session.commit()
    except BaseException:
        if "photo" in posted:  # no row: its files go too
            images.discard_files(uuid.UUID(posted["photo"]))
        raise
    remember_finder_name(form)
    for kind, entry_id in posted.items():  # the notice and its links, by the form
        flash(entry_id, f"find-{kind}")
    return _back(trackable_id, "find")


# Signed in: personally or for a team.
def post_activation(trackable_id: uuid.UUID) -> Any:
    viewer = current_viewer()
    if not viewer.is_authenticated:
        state = FormState("activate", {}, {"form": str(SIGN_IN_TO_ACTIVATE)}, 401)
        return _landing(trackable_id, state)
    form = ActivateForm()
    if not form.validate():
        errors = {name: str(messages[0]) for name, messages in form.errors.items()}
        return _invalid(trackable_id, "activate", errors)
    try:
        trackables.activate(viewer, trackable_id, name=form.name.data or "", team_id=form.team_id)
    except ApiError as error:
        return _refused(trackable_id, "activate", error)
    db.session.commit()
    flash(_("The trackable is activated."))
    return _back(trackable_id, "top")


def end_session(trackable_id: uuid.UUID) -> Any:
    trackables.end_active(client_key(), trackable_id)
    db.session.commit()
    forget_finder_name()
    public_code = _public_code(trackable_id)
    if public_code is None:
        language_page("pages.home")
        public_page = None
    else:  # the page "session ended" is, in another language: the item's public page
        language_page("pages.public_page", public_code=public_code)
        public_page = url_for("pages.public_page", public_code=public_code)
    html = render_template("pages/ended.html", public_page=public_page)
    return html, 200, {"Cache-Control": "no-store"}


def _public_code(trackable_id: uuid.UUID) -> str | None:
    """The code of the item's public page, where this browser may still open it without
    the session that just ended (a viewer read afresh); None when it may not."""
    viewer = build_viewer(current_viewer().user)
    settings = trackables.CodeSettings.from_config(current_app.config)
    try:
        public_code = trackables.get_trackable(viewer, trackable_id).public_code
        trackables.find_by_public_code(viewer, public_code, settings)
    except TrackableError:
        return None
    return public_code


def after_refused_token(trackable_id: uuid.UUID, form: str) -> Any:
    """A landing form whose CSRF token was refused: the landing again, what was typed
    kept (its forms hold no secret) and a fresh token, so a new browser session or a
    page left open does not lose a comment. PageNotFound when this browser no longer
    holds the trackable."""
    # A token made earlier in this app context is not this session's: make a new one.
    g.pop(current_app.config["WTF_CSRF_FIELD_NAME"], None)
    values = {key: str(value) for key, value in request.form.items() if key != "csrf_token"}
    find_form = FindForm() if form == "find" else None
    state = FormState(form, values, {"form": str(EXPIRED)}, 400, find_form)
    return _landing(trackable_id, state)


def add_routes(pages: Blueprint) -> None:
    base = "/<string(length=2):lang>/trackables/active/<uuid:trackable_id>"
    pages.add_url_rule(base, view_func=active_page)
    pages.add_url_rule(f"{base}/find", view_func=post_find, methods=["POST"])
    pages.add_url_rule(f"{base}/activate", view_func=post_activation, methods=["POST"])
    pages.add_url_rule(f"{base}/end", view_func=end_session, methods=["POST"])
