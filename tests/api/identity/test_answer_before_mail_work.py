"""forgotPassword and resendConfirmationEmail answer before the work that depends on
whether the address is registered (a code stored, a message sent), so their timing tells
nobody who has an account (hardening: enumeration)."""

from __future__ import annotations

import logging

import pytest

from app.extensions import db
from app.models.identity import EmailCode
from app.platform.mail import outbox
from tests.factories import count_rows as count
from tests.factories import make_user

ROUTES = ["/api/auth/forgotPassword", "/api/auth/resendConfirmationEmail"]


@pytest.fixture
def unconfirmed(app):
    return make_user(email="walker@example.com", is_email_confirmed=False)


@pytest.mark.parametrize("route", ROUTES)
def test_the_answer_goes_out_before_the_code_is_stored_or_mailed(app, client, unconfirmed, route):
    response = client.post(route, json={"email": "walker@example.com"})
    assert response.status_code == 200
    assert response.get_data() == b""
    db.session.expire_all()
    assert count(EmailCode) == 0
    assert outbox(app) == []
    response.close()  # what the server does once the answer is sent
    assert count(EmailCode) == 1
    assert [mail.to for mail in outbox(app)] == ["walker@example.com"]


@pytest.mark.parametrize("route", ROUTES)
def test_an_unknown_address_gets_the_same_answer_and_nothing_is_stored(
    app, client, unconfirmed, route
):
    known = client.post(route, json={"email": "walker@example.com"})
    unknown = client.post(route, json={"email": "nobody@example.com"})
    for response in (known, unknown):
        response.close()
    assert (unknown.status_code, unknown.headers.get("Content-Length")) == (
        known.status_code,
        known.headers.get("Content-Length"),
    )
    assert unknown.get_data() == known.get_data()
    assert [mail.to for mail in outbox(app)] == ["walker@example.com"]


def test_a_mail_failure_after_the_answer_is_logged_and_the_code_stays_usable(
    app, client, unconfirmed, monkeypatch, caplog
):
    def failing_send(mail):
        raise OSError("mail server down")

    monkeypatch.setattr("app.api.identity.routes.send", failing_send)
    response = client.post("/api/auth/forgotPassword", json={"email": "walker@example.com"})
    assert response.status_code == 200
    with caplog.at_level(logging.ERROR, logger="app"):
        response.close()
    assert "account mail work after the answer failed" in caplog.text
    db.session.expire_all()
    assert count(EmailCode) == 1  # the code was committed; only the mail failed
