"""The Flask class of the factory (app.platform.application): what it remembers between requests
does not change what a request gets."""

from __future__ import annotations

import pytest
from flask import Flask, session
from itsdangerous import BadSignature

from app.platform.application import ServiceApp
from tests.conftest import make_test_app


def test_the_session_serializer_follows_the_secret_key():
    first, second = ServiceApp("a"), ServiceApp("b")
    first.secret_key, second.secret_key = "k" * 32, "m" * 32
    interface = first.session_interface
    one = interface.get_signing_serializer(first)
    assert interface.get_signing_serializer(first) is one
    other = interface.get_signing_serializer(second)
    assert other is not one
    signed = one.dumps({"x": 1})
    assert one.loads(signed) == {"x": 1}
    with pytest.raises(BadSignature):
        other.loads(signed)


def test_a_signed_session_cookie_round_trips(database_url, tmp_path):
    app = make_test_app(database_url, tmp_path)  # its own: a route is added to it

    @app.get("/_session_probe/<value>")
    def probe(value: str) -> str:
        before = session.get("probe", "")
        session["probe"] = value
        return before

    client = app.test_client()
    assert client.get("/_session_probe/one").get_data(as_text=True) == ""
    assert client.get("/_session_probe/two").get_data(as_text=True) == "one"


def test_the_sync_answer_for_a_hook_is_kept_and_hooks_still_run():
    app = ServiceApp(__name__)
    calls = []

    @app.before_request
    def counted() -> None:
        calls.append(1)

    @app.get("/")
    def index() -> str:
        return "ok"

    assert app.ensure_sync(counted) is counted
    client = app.test_client()
    for _ in range(3):
        assert client.get("/").get_data(as_text=True) == "ok"
    assert len(calls) == 3
    assert app._sync_callables[counted] is counted  # asked once, then kept


def test_a_coroutine_hook_is_still_refused_or_wrapped_as_flask_does():
    app = ServiceApp(__name__)

    async def later() -> None:
        return None

    try:
        Flask(__name__).ensure_sync(later)
    except RuntimeError:  # Flask without its async extra refuses it: so must this app
        with pytest.raises(RuntimeError):
            app.ensure_sync(later)
        assert later not in app.__dict__.get("_sync_callables", {})
        return
    wrapped = app.ensure_sync(later)
    assert wrapped is not later  # run through Flask's async adapter, not called bare
    assert app.ensure_sync(later) is wrapped
