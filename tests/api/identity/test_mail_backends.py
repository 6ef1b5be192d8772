"""Mail goes through the configured backend: console (default), file, smtp (decisions:
Identity). Driven through POST /api/auth/forgotPassword."""

from __future__ import annotations

import email
import logging
import re
import threading
from typing import ClassVar

import pytest

from app.platform import mail as mail_module
from config import Config
from tests.factories import make_user


def forgot(api, address):
    response = api.post("/api/auth/forgotPassword", json={"email": address})
    assert response.status_code == 200
    return response


def test_console_is_the_default_backend():
    assert Config.MAIL_BACKEND == "console"


class TestConsole:
    @pytest.fixture
    def app_overrides(self):
        return {"MAIL_BACKEND": "console"}

    def test_console_backend_prints_a_code_that_works(self, api, capsys, caplog):
        user = make_user()
        caplog.set_level(logging.INFO, logger="app.platform.mail")
        forgot(api, user.email)
        printed = capsys.readouterr().err
        assert user.email in printed
        assert "Reset your password" in printed
        code = re.search(r"password:\s+(\S+)", printed)
        assert code, printed
        reset = api.post(
            "/api/auth/resetPassword",
            json={
                "email": user.email,
                "resetCode": code.group(1),
                "newPassword": "N3w-pass-phrase!",
            },
        )
        assert reset.status_code == 200, reset.get_data(as_text=True)
        logged = [
            record.getMessage() for record in caplog.records if record.name == "app.platform.mail"
        ]
        assert len(logged) == 1
        assert user.email in logged[0]
        assert code.group(1) not in logged[0]  # the log line names the mail, not its code


class TestFile:
    @pytest.fixture
    def app_overrides(self, tmp_path):
        return {"MAIL_BACKEND": "file", "MAIL_OUTBOX_DIR": tmp_path / "outbox"}

    def test_file_backend_writes_one_eml_per_message(self, api, tmp_path):
        user = make_user()
        forgot(api, user.email)
        forgot(api, "ghost@example.com")
        files = list((tmp_path / "outbox").glob("*.eml"))
        assert len(files) == 1
        message = email.message_from_bytes(files[0].read_bytes())
        assert message["To"] == user.email
        assert message["Subject"] == "Reset your password"
        assert message["From"] == Config.MAIL_FROM


class FakeSmtp:
    sent: ClassVar[list] = []
    logins: ClassVar[list] = []

    def __init__(self, host, port, timeout):
        self.address = (host, port)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def starttls(self):
        self.sent.append("starttls")

    def login(self, user, password):
        self.logins.append((user, password))

    def send_message(self, message):
        self.sent.append((self.address, message["To"], message["Subject"]))


def wait_for_delivery() -> None:
    for thread in threading.enumerate():
        if thread.name == "mail-smtp":
            thread.join(timeout=5)


class TestSmtp:
    @pytest.fixture
    def app_overrides(self):
        return {
            "MAIL_BACKEND": "smtp",
            "MAIL_SMTP_HOST": "mail.example.com",
            "MAIL_SMTP_PORT": 2525,
            "MAIL_SMTP_USER": "mailer",
            "MAIL_SMTP_PASSWORD": "mail-secret",
            "MAIL_SMTP_STARTTLS": True,
        }

    @pytest.fixture(autouse=True)
    def fake_smtp(self, monkeypatch):
        FakeSmtp.sent, FakeSmtp.logins = [], []
        monkeypatch.setattr(mail_module.smtplib, "SMTP", FakeSmtp)

    def test_smtp_backend_delivers_with_starttls_and_login(self, api):
        user = make_user()
        forgot(api, user.email)
        wait_for_delivery()
        assert FakeSmtp.sent == [
            "starttls",
            (("mail.example.com", 2525), user.email, "Reset your password"),
        ]
        assert FakeSmtp.logins == [("mailer", "mail-secret")]

    def test_smtp_backend_sends_nothing_for_an_unknown_email(self, api):
        forgot(api, "ghost@example.com")
        wait_for_delivery()
        assert FakeSmtp.sent == []

    def test_smtp_failure_is_logged_not_raised(self, api, monkeypatch, caplog):
        def refuse(*args, **kwargs):
            raise OSError("connection refused")

        monkeypatch.setattr(mail_module.smtplib, "SMTP", refuse)
        user = make_user()
        forgot(api, user.email)
        wait_for_delivery()
        assert any("could not deliver" in record.getMessage() for record in caplog.records)
