"""Notification mail, sent by the worker: one mail per notification in the user's language
(en, de), the daily digest at the digest hour (one per user, nothing when nothing is
new), no mail for `none` or an unconfirmed address, none for a user who lost access by
the time it is sent, none twice on a rerun, and a mail server down, then back."""

from __future__ import annotations

import email
import email.policy
import threading
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import delete, select

from app.extensions import db
from app.models.event import Notification
from app.models.job import Job, JobState
from app.models.notification_mail import MailState, NotificationDigest, NotificationMail
from app.models.trackable import TrackableUnlock, TrackableVisibility
from app.platform.jobs import Worker, enqueue
from app.platform.jobs import queue as queue_module
from app.platform.mail import outbox
from app.services.events import mail as mail_module
from app.services.events.mail import MAIL_DIGEST, MAIL_ONE, next_digest_time
from tests.api.identity.test_mail_backends import SmtpServer
from tests.factories import make_user, unlock_trackable
from tests.inboxes import World, watch
from tests.jobs import run_jobs
from tests.serving import free_port


def confirmed(user: Any) -> Any:
    user.is_email_confirmed = True
    db.session.commit()
    return user


def choose(api: Any, user: Any, **settings: str) -> None:
    response = api.as_user(user).put("/api/notifications/settings", json=settings)
    assert response.status_code == 200, response.get_json()


def comment(api: Any, world: World, body: str = "Found it", *, by: Any = None) -> None:
    url = f"/api/trackables/{world.trackable.id}/comments"
    response = api.as_user(by or world.author).post(url, json={"body": body})
    assert response.status_code == 201


def item(world: World) -> str:
    return f"{world.trackable.public_code} (Blue bug)"


def page(app: Any, world: World, language: str) -> str:
    return f"{app.config['PUBLIC_BASE_URL']}/{language}/trackables/{world.trackable.public_code}"


def mail_rows() -> list[NotificationMail]:
    db.session.expire_all()
    return list(db.session.scalars(select(NotificationMail)))


# --- one mail per notification -----------------------------------------------------------


def test_each_mail_says_what_happened_links_the_page_and_the_setting(app, api, world):
    watcher = confirmed(world.item_watcher)
    choose(api, watcher, mail="each")
    comment(api, world)
    run_jobs(app)
    (mail,) = outbox(app)
    text = f"A comment was written on {item(world)}."
    assert (mail.to, mail.subject) == (watcher.email, f"Location Notes: {text}")
    assert mail.text.startswith(f"{text}\n\nSee it here: {page(app, world, 'en')}\n")
    assert "You get one mail per notification" in mail.text
    assert f"{app.config['PUBLIC_BASE_URL']}/en/account/notifications\n" in mail.text


def test_each_mail_is_in_german_when_the_user_chose_german(app, api, world):
    watcher = confirmed(world.item_watcher)
    choose(api, watcher, mail="each", language="de")
    comment(api, world)
    run_jobs(app)
    (mail,) = outbox(app)
    text = f"Zu {item(world)} wurde ein Kommentar geschrieben."
    assert mail.subject == f"Location Notes: {text}"
    assert mail.text.startswith(f"{text}\n\nHier ansehen: {page(app, world, 'de')}\n")
    assert "Du bekommst eine Mail pro Benachrichtigung" in mail.text


def test_the_inbox_text_is_in_the_language_of_the_mail(app, api, world):
    watcher = confirmed(world.item_watcher)
    choose(api, watcher, mail="each", language="de")
    comment(api, world)
    run_jobs(app)
    (found,) = api.as_user(watcher).get("/api/notifications").get_json()
    (mail,) = outbox(app)
    assert found["text"] == f"Zu {item(world)} wurde ein Kommentar geschrieben."
    assert mail.subject == f"Location Notes: {found['text']}"


def test_no_mail_for_none(app, api, world):
    choose(api, confirmed(world.item_watcher), mail="none")
    comment(api, world)
    run_jobs(app)
    assert outbox(app) == []
    assert mail_rows() == []


def test_no_mail_to_an_unconfirmed_address(app, api, world):
    choose(api, world.item_watcher, mail="each")
    comment(api, world)
    run_jobs(app)
    assert outbox(app) == []
    assert mail_rows() == []


def test_no_mail_for_a_user_who_lost_access_before_it_was_sent(app, api, world):
    world.trackable.visibility = TrackableVisibility.ONCE_ACCESSED
    db.session.commit()
    keeps, loses = confirmed(make_user("kai")), confirmed(make_user("lou"))
    for user in (keeps, loses):
        unlock_trackable(user, world.trackable)
        watch(user, trackable=world.trackable)
        choose(api, user, mail="each")
    comment(api, world, by=world.owner)  # the author may no longer see it either
    worker = Worker(app, name="tests")
    assert worker.run_due(limit=2) == 2  # the fan-out (both hear of it), then their mail queued
    assert {row.user_id for row in mail_rows()} == {keeps.id, loses.id}
    db.session.execute(delete(TrackableUnlock).where(TrackableUnlock.user_id == loses.id))
    db.session.commit()
    run_jobs(app)
    assert [mail.to for mail in outbox(app)] == [keeps.email]
    states = {row.user_id: row.state for row in mail_rows()}
    assert states == {keeps.id: MailState.SENT, loses.id: MailState.SKIPPED}


def test_a_mail_job_run_twice_mails_once(app, api, world):
    choose(api, confirmed(world.item_watcher), mail="each")
    comment(api, world)
    run_jobs(app)
    (row,) = mail_rows()
    enqueue(MAIL_ONE, {"notificationId": str(row.notification_id)})
    enqueue(
        "events.fan_out",
        {"eventId": str(db.session.get(Notification, row.notification_id).event_id)},
    )
    db.session.commit()
    assert run_jobs(app) == 2
    assert len(outbox(app)) == 1


# --- the daily digest --------------------------------------------------------------------

START = datetime(2030, 3, 4, 5, 30, tzinfo=UTC)  # before the digest hour (07:00 by default)


@pytest.fixture
def clock(monkeypatch):
    """The time the listener schedules by, the queue enqueues by, and the worker runs by."""
    now = [START]
    for module in (mail_module, queue_module):
        monkeypatch.setattr(module, "utcnow", lambda: now[0])
    return now


def work(app: Any, clock: list[datetime]) -> int:
    return run_jobs(app, clock=lambda: clock[0])


def digest_jobs() -> list[Job]:
    db.session.expire_all()
    return list(
        db.session.scalars(select(Job).where(Job.kind == MAIL_DIGEST, Job.state == JobState.QUEUED))
    )


def test_the_digest_waits_for_the_digest_hour_and_lists_what_is_new(app, api, world, clock):
    watcher = confirmed(world.item_watcher)
    comment(api, world, "First")
    work(app, clock)
    clock[0] = START + timedelta(minutes=30)
    comment(api, world, "Second")
    work(app, clock)
    assert outbox(app) == []
    (job,) = digest_jobs()  # one digest for both
    assert job.run_after_utc == datetime(2030, 3, 4, 7, 0, tzinfo=UTC)
    clock[0] = job.run_after_utc + timedelta(seconds=1)
    work(app, clock)
    (mail,) = outbox(app)
    assert (mail.to, mail.subject) == (watcher.email, "Location Notes: 2 new notifications")
    lines = mail.text.splitlines()
    assert lines[0] == "What happened since your last digest:"
    listed = [line for line in lines if line.startswith("- ")]
    assert len(listed) == 2
    assert all(line.endswith(f"A comment was written on {item(world)}.") for line in listed)
    assert lines.count(f"  {page(app, world, 'en')}") == 2
    assert "You get one digest a day" in mail.text


def test_after_a_digest_the_next_one_is_the_next_day(app, api, world, clock):
    confirmed(world.item_watcher)
    comment(api, world)
    clock[0] = datetime(2030, 3, 4, 7, 0, 1, tzinfo=UTC)
    work(app, clock)  # the fan-out runs late: the digest is due at once... tomorrow
    (job,) = digest_jobs()
    assert job.run_after_utc == datetime(2030, 3, 5, 7, 0, tzinfo=UTC)
    clock[0] = job.run_after_utc
    work(app, clock)
    assert len(outbox(app)) == 1
    clock[0] += timedelta(hours=1)
    comment(api, world, "Again")
    work(app, clock)
    assert len(outbox(app)) == 1
    (job,) = digest_jobs()
    assert job.run_after_utc == datetime(2030, 3, 6, 7, 0, tzinfo=UTC)
    clock[0] = job.run_after_utc
    work(app, clock)
    assert [mail.subject for mail in outbox(app)][1] == "Location Notes: 1 new notification"


def test_the_digest_in_german(app, api, world, clock):
    choose(api, confirmed(world.item_watcher), language="de")
    comment(api, world)
    work(app, clock)
    clock[0] = datetime(2030, 3, 4, 7, 0, tzinfo=UTC)
    work(app, clock)
    (mail,) = outbox(app)
    assert mail.subject == "Location Notes: 1 neue Benachrichtigung"
    assert mail.text.startswith("Das ist seit deiner letzten Zusammenfassung passiert:\n")
    assert f"Zu {item(world)} wurde ein Kommentar geschrieben." in mail.text
    assert page(app, world, "de") in mail.text


def test_nothing_is_sent_when_everything_was_read(app, api, world, clock):
    watcher = confirmed(world.item_watcher)
    comment(api, world)
    work(app, clock)
    response = api.as_user(watcher).post(
        "/api/notifications/read", json={"upTo": str(mail_rows()[0].notification_id)}
    )
    assert response.status_code == 204
    clock[0] = datetime(2030, 3, 4, 7, 0, tzinfo=UTC)
    work(app, clock)
    assert outbox(app) == []
    assert [row.state for row in mail_rows()] == [MailState.SKIPPED]
    assert db.session.scalars(select(NotificationDigest)).all() == []


def test_only_the_digest_job_the_digest_names_sends_it(app, api, world, clock):
    confirmed(world.item_watcher)
    comment(api, world)
    work(app, clock)
    (job,) = digest_jobs()
    enqueue(MAIL_DIGEST, {"userId": str(world.item_watcher.id)})  # due now: not the one
    db.session.commit()
    assert work(app, clock) == 1
    assert outbox(app) == []
    clock[0] = job.run_after_utc
    assert work(app, clock) == 1
    assert len(outbox(app)) == 1


def test_a_digest_whose_job_was_lost_is_scheduled_again(app, api, world, clock):
    watcher = confirmed(world.item_watcher)
    lost = NotificationDigest(
        user_id=watcher.id, due_utc=START - timedelta(days=3), job_id=uuid.uuid4()
    )
    db.session.add(lost)
    db.session.commit()
    comment(api, world)
    work(app, clock)
    (job,) = digest_jobs()
    assert job.run_after_utc == datetime(2030, 3, 4, 7, 0, tzinfo=UTC)
    clock[0] = job.run_after_utc
    work(app, clock)
    assert len(outbox(app)) == 1


def test_switching_to_none_drops_the_waiting_digest(app, api, world, clock):
    watcher = confirmed(world.item_watcher)
    comment(api, world)
    work(app, clock)
    choose(api, watcher, mail="none")
    clock[0] = datetime(2030, 3, 4, 7, 0, tzinfo=UTC)
    work(app, clock)
    assert outbox(app) == []
    assert [row.state for row in mail_rows()] == [MailState.SKIPPED]


@pytest.mark.parametrize(
    ("now", "due"),
    [
        (datetime(2030, 3, 4, 6, 59, 59, tzinfo=UTC), datetime(2030, 3, 4, 7, tzinfo=UTC)),
        (datetime(2030, 3, 4, 7, tzinfo=UTC), datetime(2030, 3, 5, 7, tzinfo=UTC)),
        (datetime(2030, 12, 31, 23, tzinfo=UTC), datetime(2031, 1, 1, 7, tzinfo=UTC)),
    ],
)
def test_the_next_digest_time_is_the_first_digest_hour_after_now(now, due):
    assert next_digest_time(now, 7) == due


# --- a mail server down, then back -------------------------------------------------------

SMTP_PORT = free_port()  # nothing listens there until the test starts its server


class TestSmtpDown:
    @pytest.fixture
    def app_overrides(self):
        return {"MAIL_BACKEND": "smtp", "MAIL_SMTP_HOST": "127.0.0.1", "MAIL_SMTP_PORT": SMTP_PORT}

    def test_a_refused_mail_is_sent_once_the_server_is_back(self, app, api, world):
        watcher = confirmed(world.item_watcher)
        choose(api, watcher, mail="each", language="de")
        comment(api, world)
        run_jobs(app)  # the fan-out, then the mail: refused
        job = db.session.scalars(select(Job).where(Job.kind == MAIL_ONE)).one()
        assert (job.state, job.attempts) == (JobState.QUEUED, 1)
        assert "ConnectionRefusedError" in job.last_error
        assert [row.state for row in mail_rows()] == [MailState.QUEUED]
        server = SmtpServer(SMTP_PORT)
        threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
        try:
            assert run_jobs(app) == 0  # the back-off is not over
            later = job.run_after_utc + timedelta(seconds=1)
            assert run_jobs(app, clock=lambda: later) == 1
        finally:
            server.shutdown()
            server.server_close()
        (raw,) = server.messages
        message = email.message_from_bytes(raw, policy=email.policy.default)
        assert message["To"] == watcher.email
        assert message["Subject"].strip().startswith("Location Notes: Zu ")
        assert [row.state for row in mail_rows()] == [MailState.SENT]
