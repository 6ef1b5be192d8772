"""The mail that says an export is ready (job `privacy.export_ready_mail`, asked for by
the export's job when it is done), in the language of the account's notification mail
settings. It links to the export's page on the website, which asks the reader to sign
in and serves the file to the account's owner only: the link alone opens nothing.

As all mail here it goes only to a confirmed address, is sent by a worker, and is
tried again for a day when the mail server refuses.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from flask_babel import force_locale
from flask_babel import gettext as _

from app.auth import Viewer
from app.extensions import db
from app.models.base import utcnow
from app.models.privacy import AccountExport, ExportState
from app.models.user import User
from app.platform.jobs import JobKind, Task
from app.platform.mail import Mail, deliver
from app.services import events
from app.services.privacy.exports import READY_MAIL, state_at


def export_page_url(config: Mapping[str, Any], language: str, export_id: uuid.UUID) -> str:
    """The export's page on the website (absolute, under PUBLIC_BASE_URL)."""
    base = str(config["PUBLIC_BASE_URL"]).rstrip("/")
    return f"{base}/{language}/account/export/{export_id}"


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def ready_mail(user: User, export: AccountExport, language: str, config: Mapping[str, Any]) -> Mail:
    expires = export.expires_utc or utcnow()
    with force_locale(language):
        text = "\n".join(
            [
                _("The copy of your Location Notes data that you asked for is ready."),
                "",
                _("Download it here (sign in with your account first):"),
                export_page_url(config, language, export.id),
                "",
                _(
                    "The download works until %(time)s, only for you, signed in. After that, "
                    "ask for a new export in the app.",
                    time=_when(expires),
                ),
                "",
                _(
                    "If you did not ask for this, someone may be signed in as you: change "
                    "your password and end all sessions in the app."
                ),
            ]
        )
        return Mail(to=user.email, subject=_("Your Location Notes data export is ready"), text=text)


def send_ready_mail(task: Task) -> None:
    """The job: mail the owner of a done export, while it may still be downloaded."""
    export = db.session.get(AccountExport, uuid.UUID(task.payload["exportId"]))
    if export is None or state_at(export, utcnow()) is not ExportState.DONE:
        return
    user = db.session.get(User, export.user_id)
    if user is None or not user.is_email_confirmed:
        return
    language = events.get_mail_settings(Viewer(user)).language
    deliver(ready_mail(user, export, language, task.config))


# As the other mail: a mail server down for hours still gets it (a day of tries).
MAIL_KIND = JobKind(
    READY_MAIL, send_ready_mail, max_attempts=30, max_age=timedelta(days=1), lane="exports"
)
