"""The Flask class the factory makes: Flask, less two costs it pays on every request for
things that do not change between requests (bench/README.md, "The cost of a request").

- Flask checks, for every hook and view it calls, whether it is an `async def`; the
  answer is remembered per function (Flask documents `ensure_sync` as the method to
  override).
- The session interface built a new signing serializer (which serialises a test value
  to learn its kind) for every request; it is built once per key set.

And one addition: a view that fails in a way running it again may cure (a database
deadlock: `retry_when`, set by the factory) is run again, once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from flask import Flask
from flask.sessions import SecureCookieSessionInterface
from itsdangerous import URLSafeTimedSerializer

log = logging.getLogger(__name__)

MAX_REMEMBERED = 2048  # views and hooks are a few hundred


class SessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, with its serializer kept per secret key (and
    fallbacks): a serializer holds only its keys and settings."""

    def __init__(self) -> None:
        self._serializers: dict[tuple[Any, ...], URLSafeTimedSerializer | None] = {}

    def get_signing_serializer(self, app: Flask) -> URLSafeTimedSerializer | None:
        key = (app.secret_key, tuple(app.config.get("SECRET_KEY_FALLBACKS") or ()))
        if key not in self._serializers:
            self._serializers[key] = super().get_signing_serializer(app)
        return self._serializers[key]


class ServiceApp(Flask):
    session_interface = SessionInterface()
    # Set by the factory: whether a view's error may be cured by running it again, and
    # what to undo before (the session's transaction, the cached caller).
    retry_when: Callable[[BaseException], bool] | None = None
    before_retry: Callable[[], None] | None = None

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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sync: dict[Callable[..., Any], Callable[..., Any]] = {}

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        try:
            return self._sync[func]
        except KeyError:
            if len(self._sync) >= MAX_REMEMBERED:  # per-request callbacks are new each time
                self._sync.clear()
            made = self._sync[func] = super().ensure_sync(func)
            return made
        except TypeError:  # an unhashable callable: asked every time, as Flask does
            return super().ensure_sync(func)
