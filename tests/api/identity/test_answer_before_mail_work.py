"""forgotPassword and resendConfirmationEmail only enqueue a job, whether or not the address
is registered: the work that depends on it (a code stored, a message sent) is the
worker's, so the answer's timing tells nobody who has an account (hardening:
enumeration), and a mail server that is down delays the mail instead of losing it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.extensions import db
from app.models.base import utcnow
from app.models.identity import EmailCode
from app.models.job import Job, JobState
from app.platform.mail import outbox
from tests.factories import count_rows as count
from tests.factories import make_user
from tests.jobs import run_jobs

ROUTES = ["/api/auth/forgotPassword", "/api/auth/resendConfirmationEmail"]


@pytest.fixture
def unconfirmed(app):
    return make_user(email="walker@example.com", is_email_confirmed=False)


@pytest.mark.parametrize("route", ROUTES)
def test_the_answer_stores_a_job_and_the_worker_stores_the_code_and_mails(
    app, api, unconfirmed, route
):
    response = api.post(route, json={"email": "walker@example.com"})
    assert response.status_code == 200
    assert response.get_data() == b""
    assert (count(EmailCode), outbox(app)) == (0, [])
    assert count(Job, Job.state == JobState.QUEUED) == 1
    assert run_jobs(app) == 1
    assert count(EmailCode) == 1
    assert [mail.to for mail in outbox(app)] == ["walker@example.com"]
    assert count(Job, Job.state == JobState.DONE) == 1


@pytest.mark.parametrize("route", ROUTES)
def test_an_unknown_address_gets_the_same_answer_and_the_same_work_and_no_mail(
    app, api, unconfirmed, route
):
    known = api.post(route, json={"email": "walker@example.com"})
    unknown = api.post(route, json={"email": "nobody@example.com"})
    assert (unknown.status_code, unknown.headers.get("Content-Length")) == (
        known.status_code,
        known.headers.get("Content-Length"),
    )
    assert unknown.get_data() == known.get_data()
    assert count(Job) == 2  # one row each: the request does not look the address up
    assert run_jobs(app) == 2
    assert [mail.to for mail in outbox(app)] == ["walker@example.com"]
    assert count(EmailCode) == 1


def test_a_mail_failure_stores_no_code_and_the_job_tries_again_later(
    app, api, unconfirmed, monkeypatch
):
    def mail_server_down(mail):
        raise OSError("mail server down")

    monkeypatch.setattr("app.services.identity.account_mail.deliver", mail_server_down)
    assert api.post("/api/auth/forgotPassword", json={"email": "walker@example.com"}).status_code
    assert run_jobs(app) == 1
    db.session.expire_all()
    job = db.session.query(Job).one()
    assert (job.state, job.attempts, count(EmailCode)) == (JobState.QUEUED, 1, 0)
    assert "mail server down" in job.last_error
    assert job.run_after_utc > utcnow()
    assert run_jobs(app) == 0  # not before its back-off
    monkeypatch.undo()
    later = job.run_after_utc + timedelta(seconds=1)
    assert run_jobs(app, clock=lambda: later) == 1
    assert [mail.to for mail in outbox(app)] == ["walker@example.com"]
    assert count(EmailCode) == 1


def test_mail_asked_for_an_account_deleted_before_the_worker_ran_is_not_sent(app, api, unconfirmed):
    api.post("/api/auth/forgotPassword", json={"email": "walker@example.com"})
    assert api.as_user(unconfirmed).delete("/api/account").status_code == 200
    assert run_jobs(app) == 1
    assert (outbox(app), count(EmailCode)) == ([], 0)
    assert count(Job, Job.state == JobState.DONE) == 1
