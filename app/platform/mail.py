"""Outgoing mail through the configured backend (decisions: Identity).

`MAIL_BACKEND`: `console` (default: prints the whole message; refused in production),
`file` (one `.eml` per message in `MAIL_OUTBOX_DIR`), `smtp`, and `memory` for tests (a
list at `app.extensions["mail_outbox"]`). Delivery is synchronous and raises when it
fails: it runs in a worker's job (app.platform.jobs), never in a request, and a failed
delivery is the job's failure, tried again later.
"""

from __future__ import annotations

import logging
import smtplib
import sys
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from email.policy import EmailPolicy
from pathlib import Path
from typing import Any

from flask import Flask, current_app

log = logging.getLogger(__name__)

BACKENDS = ("console", "file", "smtp", "memory")


@dataclass(frozen=True)
class Mail:
    """A plain-text message to one recipient, with any extra header fields (name, value)."""

    to: str
    subject: str
    text: str
    headers: tuple[tuple[str, str], ...] = ()


class _Policy(EmailPolicy):
    """The standard policy, except that header fields made of URLs in angle brackets
    (RFC 2369, List-Unsubscribe) stay on one line: folding such a field would insert
    whitespace or encoded words into the URL, which mail clients cannot read."""

    ONE_LINE = frozenset({"list-unsubscribe", "list-unsubscribe-post"})

    def fold(self, name: str, value: str) -> str:
        if name.lower() in self.ONE_LINE:
            return f"{name}: {value}{self.linesep}"
        return super().fold(name, value)

    def fold_binary(self, name: str, value: str) -> bytes:
        if name.lower() in self.ONE_LINE:
            return f"{name}: {value}{self.linesep}".encode("ascii")
        return super().fold_binary(name, value)


POLICY = _Policy()


def build_message(mail: Mail, sender: str) -> EmailMessage:
    message = EmailMessage(policy=POLICY)
    message["From"] = sender
    message["To"] = mail.to
    message["Subject"] = mail.subject
    message["Date"] = datetime.now(UTC).strftime("%a, %d %b %Y %H:%M:%S +0000")
    message["Message-ID"] = f"<{uuid.uuid4().hex}@location-notes>"
    for name, value in mail.headers:
        message[name] = value
    message.set_content(mail.text)
    return message


def outbox(app: Flask) -> list[Mail]:
    """The memory backend's messages (tests read them here)."""
    return app.extensions.setdefault("mail_outbox", [])


def deliver(mail: Mail) -> None:
    """Send `mail` now through the configured backend; an SMTP failure raises (OSError or
    smtplib.SMTPException) for the job to try again."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    config = app.config
    backend = config["MAIL_BACKEND"]
    if backend == "memory":
        outbox(app).append(mail)
        return
    message = build_message(mail, config["MAIL_FROM"])
    if backend == "file":
        write_eml(message, Path(config["MAIL_OUTBOX_DIR"]))
        return
    if backend == "smtp":
        deliver_smtp(message, config)
        # The address is personal data: the log names its domain only (the mail's job, and
        # its attempts, are in the jobs table for the operator who must find one).
        log.info("mail delivered to an address at %s: %s", mail.to.rpartition("@")[2], mail.subject)
        return
    if backend != "console":
        log.warning("unknown MAIL_BACKEND %r, printing the message instead", backend)
    print_to_console(mail)


def print_to_console(mail: Mail) -> None:
    """The console backend: the whole message on stderr, links and codes included, so a
    newcomer can confirm an account from the terminal. It is written past the logs on
    purpose (they redact codes), and production refuses this backend (app.platform.startup_checks),
    so no production instance ever prints a code."""
    log.info("mail to %s: %s (printed whole on the console)", mail.to, mail.subject)
    rule = "-" * 72
    fields = "".join(f"{name}: {value}\n" for name, value in mail.headers)
    sys.stderr.write(
        f"{rule}\nmail to {mail.to}\nSubject: {mail.subject}\n{fields}\n{mail.text}\n{rule}\n"
    )
    sys.stderr.flush()


def write_eml(message: EmailMessage, folder: Path) -> Path:
    """One `.eml` per message, whole or not at all: written under a hidden name, then
    renamed, so a reader watching the folder (a person's tool, the tests' generated-client
    flow, which polls it while the worker sends) never opens half a message."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    name = f"{stamp}-{uuid.uuid4().hex[:8]}.eml"
    partial = folder / f".{name}.partial"
    partial.write_bytes(message.as_bytes())
    return partial.replace(folder / name)


def deliver_smtp(message: EmailMessage, config: Mapping[str, Any]) -> None:
    """Hand one message to the SMTP server; refused, unreachable or rejected raises."""
    with smtplib.SMTP(config["MAIL_SMTP_HOST"], int(config["MAIL_SMTP_PORT"]), timeout=30) as smtp:
        if config["MAIL_SMTP_STARTTLS"]:
            smtp.starttls()
        if config["MAIL_SMTP_USER"]:
            smtp.login(config["MAIL_SMTP_USER"], config["MAIL_SMTP_PASSWORD"])
        smtp.send_message(message)
