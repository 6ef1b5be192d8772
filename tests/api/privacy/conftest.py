"""Fixtures of the data export tests: an account with some of every kind of record the
service keeps (made through the API where it makes them, so that secrets are made as the
service makes them), the secrets it holds, and helpers to start, run and open an export."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.identity import EmailCode, RecoveryCode, RefreshToken
from app.models.trackable import TrackableCode
from app.models.user import User
from app.models.webhook import WebhookSubscription
from app.platform.mail import outbox
from tests.api.identity.helpers import totp
from tests.factories import (
    DEFAULT_PASSWORD,
    codes_of,
    login,
    make_comment,
    make_group,
    make_invite_link,
    make_note,
    make_team,
    make_trackable,
    make_user,
    unlock_trackable,
)
from tests.jobs import run_jobs
from tests.reports import report_body
from tests.uploads import upload

EXPORT_URL = "/api/account/export"


@dataclass
class Account:
    """The account, what it made (ids by kind), and every secret the service holds of it."""

    user: User
    ids: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)
    others: list[str] = field(default_factory=list)  # other people's text: never exported


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.get_data(as_text=True)
    return response.get_json(silent=True)


def make_rich_account(app: Any, api: Any) -> Account:
    ada = make_user("ada_exports", display_name="Ada E.", is_email_confirmed=True)
    kim = make_user("kim_other", display_name="Kim O.", is_email_confirmed=True)
    account = Account(ada)
    me, them = api.as_user(ada), api.as_user(kim)

    # identity: a session, two-factor with recovery codes, a pending reset code
    tokens = login(api, ada)
    account.secrets["refresh token"] = tokens["refreshToken"]
    key = ok(me.post("/api/auth/manage/2fa", json={}))["sharedKey"]
    enabled = ok(me.post("/api/auth/manage/2fa", json={"enable": True, "twoFactorCode": totp(key)}))
    account.secrets["2fa key"] = key
    for number, code in enumerate(enabled["recoveryCodes"]):
        account.secrets[f"recovery code {number}"] = code
    ok(api.post("/api/auth/forgotPassword", json={"email": ada.email}))
    run_jobs(app)
    (reset,) = [mail for mail in outbox(app) if mail.subject == "Reset your password"]
    account.secrets["reset code"] = reset.text.split("\n\n")[1].strip()

    # notes, categories, comments
    note = make_note(ada, title="Old oak by the gate", latitude=52.48, longitude=13.40)
    gone = make_note(ada, title="A deleted thought", is_deleted=True)
    comment = make_comment(note, ada, body="My own comment on my oak")
    account.ids.update(note=str(note.id), deleted_note=str(gone.id), note_comment=str(comment.id))
    foreign = make_note(kim, title="Kim's secret garden")
    account.others.append(foreign.title)

    # teams: a team, an invite link
    team = make_team(ada, name="Night Hikers", members=(kim,))
    link = make_invite_link(team, ada)
    account.ids.update(team=str(team.id), invite_link=str(link.id))
    account.secrets["invite code"] = link.code

    # trackables: one owned (with its codes), a group, an unlock of someone else's
    trackable = make_trackable(ada, name="Red kayak paddle")
    secret, token = codes_of(trackable)
    account.secrets.update({"trackable secret": secret, "qr token": token})
    group = make_group(ada, name="Paddles")
    foreign_trackable = make_trackable(kim, name="Kim's compass")
    unlock_trackable(ada, foreign_trackable)
    account.ids.update(
        trackable=str(trackable.id), group=str(group.id), unlocked=str(foreign_trackable.id)
    )
    ok(me.post(f"/api/trackables/{foreign_trackable.id}/watch"))
    ok(me.post(f"/api/trackables/groups/{group.id}/watch"))
    area = {"minLatitude": 47, "minLongitude": 8, "maxLatitude": 48, "maxLongitude": 9}
    account.ids["area_watch"] = ok(me.post("/api/watches/areas", json=area), 201)["areaWatchId"]
    url = f"/api/trackables/{trackable.id}"
    written = ok(me.post(f"{url}/comments", json={"body": "Launched at the lake"}), 201)
    account.ids["trackable_comment"] = written["trackableCommentId"]
    stop = ok(me.post(f"{url}/journey-stops", json={"latitude": 47.37, "longitude": 8.54}), 201)
    account.ids["journey_stop"] = stop["journeyStopId"]
    # Kim comments on Ada's trackable: Ada's inbox hears of it
    ok(them.post(f"{url}/comments", json={"body": "Kim found it at the pier"}), 201)
    account.others.append("Kim found it at the pier")

    # an image on the note, a report, mail settings
    image = ok(upload(me, f"/api/images/notes/{note.id}"), 201)["image"]
    account.ids["image"] = image["contentImageId"]
    account.ids["report"] = ok(me.post("/api/compliance/reports", json=report_body()), 201)[
        "contentReportId"
    ]
    ok(me.put("/api/notifications/settings", json={"mail": "each"}))
    run_jobs(app)  # the fan-out: Ada's inbox; her notification mail

    # a webhook last (its deliveries would go out with the jobs above)
    created = ok(me.post("/api/webhooks", json={"url": "https://hooks.example.org/ada"}), 201)
    account.ids["webhook"] = created["webhookId"]
    account.secrets["webhook secret"] = created["secret"]

    # the stored secrets, as stored
    user = db.session.get(User, ada.id)
    account.secrets.update(
        {
            "password hash": user.password_hash,
            "security stamp": user.security_stamp,
            "password": DEFAULT_PASSWORD,
        }
    )
    stored = {
        "token hash": select(RefreshToken.token_hash).where(RefreshToken.user_id == ada.id),
        "recovery hash": select(RecoveryCode.code_hash).where(RecoveryCode.user_id == ada.id),
        "email code hash": select(EmailCode.nonce_hash).where(EmailCode.user_id == ada.id),
        "code hash": select(TrackableCode.code_hash).where(
            TrackableCode.trackable_id == trackable.id
        ),
        "webhook secret stored": select(WebhookSubscription.secret_encrypted).where(
            WebhookSubscription.owner_user_id == ada.id
        ),
    }
    for name, query in stored.items():
        values = list(db.session.scalars(query))
        assert values, name
        for number, value in enumerate(values):
            account.secrets[f"{name} {number}"] = value
    return account


@pytest.fixture
def rich(app, api) -> Account:
    return make_rich_account(app, api)


def start(client: Any) -> dict[str, Any]:
    return ok(client.post(EXPORT_URL), 202)


def export_ready(app: Any, client: Any) -> dict[str, Any]:
    """Ask for an export as `client`, let the worker make it; its record."""
    started = start(client)
    run_jobs(app)
    record = ok(client.get(f"{EXPORT_URL}/{started['exportId']}"))
    assert record["state"] == "done", record
    return record


def open_zip(response: Any) -> zipfile.ZipFile:
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "application/zip"
    return zipfile.ZipFile(io.BytesIO(response.data))
