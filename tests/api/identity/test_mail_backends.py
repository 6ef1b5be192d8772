"""Mail goes through the configured backend: console (default), file, smtp (decisions:
Identity), sent by the worker's job. Driven through POST /api/auth/forgotPassword and
/api/auth/register, the due jobs run in-process (tests/jobs.py)."""

from __future__ import annotations

import email
import email.policy
import logging
import re
import socketserver
import threading
from datetime import timedelta
from typing import ClassVar
from urllib.parse import urlsplit

import pytest

from app.extensions import db
from app.models.job import Job, JobState
from app.platform import mail as mail_module
from config import Config
from tests.api.identity.helpers import register
from tests.factories import make_user
from tests.jobs import run_jobs
from tests.serving import free_port


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
        assert user.email not in capsys.readouterr().err  # the worker prints it, not the request
        run_jobs(api.client.application)
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

    def test_file_backend_writes_one_eml_per_message(self, app, api, tmp_path):
        user = make_user()
        forgot(api, user.email)
        forgot(api, "ghost@example.com")
        assert run_jobs(app) == 2
        files = list((tmp_path / "outbox").glob("*.eml"))
        assert len(files) == 1
        message = email.message_from_bytes(files[0].read_bytes())
        assert message["To"] == user.email
        assert message["Subject"] == "Reset your password"
        assert message["From"] == Config.MAIL_FROM

    def test_the_worker_writes_the_confirmation_mail_of_a_registration(self, app, api, tmp_path):
        assert register(api, "ada@example.com", "ada_walks").status_code == 200
        assert not (tmp_path / "outbox").exists()  # the request only enqueued it
        assert run_jobs(app) == 1
        (eml,) = (tmp_path / "outbox").glob("*.eml")
        message = email.message_from_bytes(eml.read_bytes(), policy=email.policy.default)
        assert (message["To"], message["Subject"]) == ("ada@example.com", "Confirm your email")
        response = api.get(confirm_path(message.get_content()))
        assert response.status_code == 200, response.get_data(as_text=True)


def confirm_path(text: str) -> str:
    match = re.search(r"https?://\S+/api/auth/confirmEmail\?\S+", text)
    assert match, text
    parts = urlsplit(match.group(0))
    return f"{parts.path}?{parts.query}"


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

    def test_smtp_backend_delivers_with_starttls_and_login(self, app, api, caplog):
        user = make_user()
        forgot(api, user.email)
        assert FakeSmtp.sent == []  # the request only enqueued it
        with caplog.at_level("INFO", logger="app"):
            run_jobs(app)
        assert "delivered to an address at example.com" in caplog.text
        assert user.email not in caplog.text  # personal data stays out of the log
        assert FakeSmtp.sent == [
            "starttls",
            (("mail.example.com", 2525), user.email, "Reset your password"),
        ]
        assert FakeSmtp.logins == [("mailer", "mail-secret")]

    def test_smtp_backend_sends_nothing_for_an_unknown_email(self, app, api):
        forgot(api, "ghost@example.com")
        assert run_jobs(app) == 1
        assert FakeSmtp.sent == []

    def test_an_smtp_failure_is_logged_and_the_job_waits_for_a_retry(
        self, app, api, monkeypatch, caplog
    ):
        def refuse(*args, **kwargs):
            raise OSError("connection refused")

        monkeypatch.setattr(mail_module.smtplib, "SMTP", refuse)
        user = make_user()
        forgot(api, user.email)
        with caplog.at_level("INFO", logger="app"):
            run_jobs(app)
        assert any("connection refused" in record.getMessage() for record in caplog.records)
        assert user.email not in caplog.text
        job = db.session.query(Job).one()
        assert (job.state, job.attempts) == (JobState.QUEUED, 1)
        assert not [thread for thread in threading.enumerate() if "mail" in thread.name]


class SmtpServer(socketserver.ThreadingTCPServer):
    """Just enough SMTP for smtplib on 127.0.0.1:`port`; keeps each message's bytes."""

    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, port: int) -> None:
        self.messages: list[bytes] = []
        super().__init__(("127.0.0.1", port), SmtpSession)


class SmtpSession(socketserver.StreamRequestHandler):
    def reply(self, line: str) -> None:
        self.wfile.write(f"{line}\r\n".encode())

    def handle(self) -> None:
        self.reply("220 test ESMTP")
        while line := self.rfile.readline():
            command = line.decode("ascii", "replace").strip().upper()
            if command.startswith(("EHLO", "HELO", "MAIL", "RCPT", "RSET", "NOOP")):
                self.reply("250 OK")
            elif command == "DATA":
                self.reply("354 end with a dot")
                lines = []
                while (data := self.rfile.readline()) not in (b".\r\n", b""):
                    lines.append(data)
                self.server.messages.append(b"".join(lines))  # type: ignore[attr-defined]
                self.reply("250 queued")
            elif command == "QUIT":
                self.reply("221 bye")
                return
            else:
                self.reply("502 not here")


SMTP_PORT = free_port()  # nothing listens there until the test starts its server


class TestSmtpServerDown:
    @pytest.fixture
    def app_overrides(self):
        return {"MAIL_BACKEND": "smtp", "MAIL_SMTP_HOST": "127.0.0.1", "MAIL_SMTP_PORT": SMTP_PORT}

    def test_a_refused_confirmation_mail_is_sent_once_the_server_is_back(self, app, api):
        assert register(api, "ada@example.com", "ada_walks").status_code == 200
        assert run_jobs(app) == 1  # refused: the port is closed
        job = db.session.query(Job).one()
        assert (job.state, job.attempts) == (JobState.QUEUED, 1)
        assert "ConnectionRefusedError" in job.last_error
        server = SmtpServer(SMTP_PORT)
        threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
        try:
            assert run_jobs(app) == 0  # the back-off is not over
            assert server.messages == []
            later = job.run_after_utc + timedelta(seconds=1)
            assert run_jobs(app, clock=lambda: later) == 1
        finally:
            server.shutdown()
            server.server_close()
        (raw,) = server.messages
        message = email.message_from_bytes(raw, policy=email.policy.default)
        assert (message["To"], message["Subject"]) == ("ada@example.com", "Confirm your email")
        assert api.get(confirm_path(message.get_content())).status_code == 200
        db.session.expire_all()
        assert db.session.get(Job, job.id).state is JobState.DONE


def test_the_file_backend_shows_a_message_only_whole(tmp_path, monkeypatch):
    """A reader of `*.eml` never opens half a message: the bytes go under a hidden name
    first and the `.eml` appears by a rename."""
    from email.message import EmailMessage
    from pathlib import Path

    from app.platform.mail import write_eml

    message = EmailMessage()
    message["To"] = "ada@example.com"
    message.set_content("https://example.com/api/auth/confirmEmail?code=" + "x" * 5000)
    seen_while_writing: list[list[str]] = []
    real_write = Path.write_bytes

    def write_and_look(self: Path, data: bytes) -> int:
        written = real_write(self, data)
        seen_while_writing.append(sorted(p.name for p in tmp_path.glob("*.eml")))
        return written

    monkeypatch.setattr(Path, "write_bytes", write_and_look)
    path = write_eml(message, tmp_path)
    assert seen_while_writing == [[]]  # the bytes were all there before any .eml was
    assert [p.name for p in tmp_path.iterdir()] == [path.name]
    assert path.read_bytes() == message.as_bytes()
