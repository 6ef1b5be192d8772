"""The Flask class the factory makes: Flask, less a cost it pays on every request for a
thing that does not change between requests (bench/README.md, "The cost of a request").

It keeps the session's signing serializer per key set, and `ensure_sync`'s answer per
function, both through the methods Flask documents for this. Its request class says which
form limit a multipart body broke. And a view that fails in a way running it again may cure
(a database deadlock: `retry_when`, set by the factory) is run again, once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from flask import Flask, Request
from flask.sessions import SecureCookieSessionInterface
from itsdangerous import URLSafeTimedSerializer
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.formparser import MultiPartParser
from werkzeug.sansio.multipart import MultipartDecoder

from app.errors import FormLimitExceeded

log = logging.getLogger(__name__)

SYNC_CALLABLES_KEPT = 4096
# Where werkzeug checks a multipart text part against the form memory size.
TEXT_PART_CHECKS = {(MultipartDecoder, "receive_data"), (MultiPartParser, "parse")}


class SessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, with its serializer kept per secret key (and
    fallbacks): a serializer holds only its keys and settings."""

    def __init__(self) -> None:
        self._serializers: dict[tuple[Any, ...], URLSafeTimedSerializer | None] = {}

    # Flask would build a new serializer (which serialises a test value to learn its kind) for every
    # request.
    def get_signing_serializer(self, app: Flask) -> URLSafeTimedSerializer | None:
        key = (app.secret_key, tuple(app.config.get("SECRET_KEY_FALLBACKS") or ()))
        if key not in self._serializers:
            self._serializers[key] = super().get_signing_serializer(app)
        return self._serializers[key]


class ServiceRequest(Request):
    """Flask's request, whose 413 for a multipart form names the limit it broke."""

    # werkzeug answers "too large" for too many parts and for a big text field alike.
    def _load_form_data(self) -> None:
        try:
            super()._load_form_data()
        except RequestEntityTooLarge as error:
            raise self._form_limit(error) from error

    def _form_limit(self, error: RequestEntityTooLarge) -> RequestEntityTooLarge:
        # werkzeug raises the same bare exception for the body's size, the number of parts
        # and a text part's size; where it was raised tells them apart.
        frame = _innermost_frame(error)
        where = (type(frame.f_locals.get("self")), frame.f_code.co_name) if frame else None
        if where == (MultipartDecoder, "next_event") and self.max_form_parts is not None:
            return FormLimitExceeded(
                f"The form has more than {self.max_form_parts} parts; "
                f"send at most {self.max_form_parts}."
            )
        if where in TEXT_PART_CHECKS and self.max_form_memory_size is not None:
            return FormLimitExceeded(
                f"A text field of the form is larger than {self.max_form_memory_size} bytes."
            )
        return error


def _innermost_frame(error: BaseException) -> Any:
    trace = error.__traceback__
    if trace is None:
        return None
    while trace.tb_next is not None:
        trace = trace.tb_next
    return trace.tb_frame


class ServiceApp(Flask):
    session_interface = SessionInterface()
    request_class = ServiceRequest
    # Set by the factory: whether a view's error may be cured by running it again, and
    # what to undo before (the session's transaction, the cached caller).
    retry_when: Callable[[BaseException], bool] | None = None
    before_retry: Callable[[], None] | None = None

    # Flask asks this of every hook and view it runs (about 15 a request here), and it inspects the
    # function's code each time to tell a coroutine.
    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        known = self.__dict__.setdefault("_sync_callables", {})
        found = known.get(func)
        if found is None:
            found = super().ensure_sync(func)
            if len(known) < SYNC_CALLABLES_KEPT:  # hooks and views: a fixed set
                known[func] = found
        return found

    def dispatch_request(self) -> Any:
        try:
            return super().dispatch_request()
        except Exception as error:
            if self.retry_when is None or not self.retry_when(error):
                raise
            log.warning("running the request again after: %s", error)
            if self.before_retry is not None:
                self.before_retry()
        return super().dispatch_request()
