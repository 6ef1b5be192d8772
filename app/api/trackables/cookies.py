"""The access-session cookie on the API side (decisions: Access sessions for secret codes):
reading this client's key and setting the cookie after a secret match. (The Viewer part
that adds this client's sessions is services.trackables.access_session_unlocks.)

The cookie holds only a signed random client id (services.trackables.AccessCookie); the
sessions themselves are rows on the server.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from flask import Response, after_this_request, current_app, request

from app.auth import current_viewer
from app.error_codes import Code
from app.errors import TrackableError
from app.extensions import client_ip, db
from app.services import trackables


def access_cookie() -> trackables.AccessCookie:
    return trackables.AccessCookie.from_config(current_app.config)


def current_client_key() -> str | None:
    """This client's session key, from a valid cookie; None without one."""
    return access_cookie().client_key(request.cookies)


def client_id_for_session() -> str:
    """This client's id from its cookie, or a new one (set by `keep_access_cookie`)."""
    return access_cookie().client_id(request.cookies) or trackables.new_client_id()


def guess_client() -> trackables.GuessClient:
    """This client's guess-budget keys (its address and network, hashed; a confirmed
    account's own)."""
    return trackables.guess_key(client_ip(), current_app.config, current_viewer().user)


def keep_access_cookie(client_id: str) -> None:
    """Set (or refresh) the access cookie on this request's response."""
    cookie = access_cookie()

    @after_this_request
    def set_cookie(response: Response) -> Response:
        response.set_cookie(cookie.name, cookie.sign(client_id), **cookie.options())
        return response


def no_store() -> None:
    """Answers about codes are never cached (a GET lookup carries the code in its URL)."""

    @after_this_request
    def add_header(response: Response) -> Response:
        response.headers["Cache-Control"] = "no-store"
        return response


@contextmanager
def keeping_counted_misses() -> Iterator[None]:
    """Around a write that may carry an `accessCode` or bring its own secret code: a code
    that is not the trackable's (403), or an own secret already in use (400), is refused
    yet its miss must stay counted, so it is committed before the refusal goes out
    (nothing else is written before the code is checked)."""
    try:
        yield
    except trackables.SecretCodeTaken:
        db.session.commit()
        raise
    except TrackableError as error:
        if error.code == Code.TRACKABLE_ACCESS_CODE_INVALID:
            db.session.commit()
        raise
