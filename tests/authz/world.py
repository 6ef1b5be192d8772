"""The authorization matrix's world: one object of each kind, and a caller of each kind.

Callers (`CALLERS`, each described there): anonymous, owner, stranger, member, admin,
former_admin, unlocked (anonymous, but this client unlocked the gating trackable) and
superadmin. States: a note's visibility (`Private`, `Public`, `Gated`: visible once its
attached trackable is unlocked) and a team's page visibility (`Public`, `MembersOnly`),
applied to the personal and team notes and to every team of the world.
"""

from __future__ import annotations

import io
import uuid
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from app.auth import issue_access_token
from app.extensions import db
from app.models.enums import NoteVisibility
from app.models.team import MembershipStatus, PageVisibility
from app.models.user import User
from tests.factories import (
    attach_trackable,
    codes_of,
    make_category,
    make_group,
    make_invite_link,
    make_membership,
    make_note,
    make_team,
    make_trackable,
    make_user,
    one_commit,
)
from tests.snapshots import kept

# `anonymous`; `owner` (made the object: the note's author, the category's, trackable's,
# group's, comment's, report's owner; the subject of a membership answer; a plain member of
# the team); `stranger` (signed in, nothing to do with it); `member` (a member of the team,
# not the author); `admin` (the team's admin); `former_admin` (was the team's admin, left,
# and made an invite link while admin); `unlocked` (anonymous, but this client unlocked the
# gating trackable with its secret code); `superadmin`.
CALLERS = (
    "anonymous",
    "owner",
    "stranger",
    "member",
    "admin",
    "former_admin",
    "unlocked",
    "superadmin",
)

NOTE_STATES = {
    "Private": NoteVisibility.PRIVATE,
    "Public": NoteVisibility.PUBLIC,
    "Gated": NoteVisibility.ONCE_TRACKABLE_ACCESSED,
}
TEAM_STATES = {"Public": PageVisibility.PUBLIC, "MembersOnly": PageVisibility.MEMBERS_ONLY}
STATE_KINDS = {"note": tuple(NOTE_STATES), "team": tuple(TEAM_STATES), None: ("-",)}


@dataclass
class World:
    app: Flask
    users: dict[str, Any] = field(default_factory=dict)
    clients: dict[str, FlaskClient] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)
    page: PageVisibility = PageVisibility.PUBLIC
    # The Set-Cookie headers each caller's client was sent while the world was built.
    cookies: dict[str, list[str]] = field(default_factory=dict)

    def team_of_the_world(self) -> Any:
        """A team of the world: the admin and the member in it, the former admin gone,
        leaving an invite link made while admin."""
        users = self.users
        with one_commit():
            team = make_team(users["admin"], members=(users["member"],), page_visibility=self.page)
            former = make_membership(team, users["former_admin"], is_admin=True)
            make_invite_link(team, users["former_admin"])
            db.session.delete(former)
        return team

    def headers(self, caller: str) -> dict[str, str]:
        user = self.users.get(caller)
        return {"Authorization": f"Bearer {issue_access_token(user)}"} if user else {}

    def client(self, caller: str) -> FlaskClient:
        return self.clients[caller]

    def request(self, caller: str, method: str, url: str, **kwargs: Any) -> Any:
        headers = {**self.headers(caller), **kwargs.pop("headers", {})}
        response = self.clients[caller].open(url, method=method, headers=headers, **kwargs)
        response.get_data()
        response.close()
        return response

    # Objects made through the API only when an operation names them (they cost requests).

    def lazy(self, name: str) -> str:
        if name not in self.ids:
            getattr(self, f"_make_{name}")()
        return self.ids[name]

    def _make_invite_team(self) -> None:
        """Another team of the world, which invited the owner."""
        team = self.team_of_the_world()
        invitation = make_membership(team, self.users["owner"], status=MembershipStatus.INVITED)
        self.ids.update(invite_team=str(team.id), invitation=str(invitation.id))

    _make_invitation = _make_invite_team

    def _make_request_team(self) -> None:
        """Another team of the world, which the owner asked to join."""
        team = self.team_of_the_world()
        request = make_membership(team, self.users["owner"], status=MembershipStatus.REQUESTING)
        self.ids.update(request_team=str(team.id), request=str(request.id))

    _make_request = _make_request_team

    def _make_trackable_comment(self) -> None:
        response = self.request(
            "owner",
            "POST",
            f"/api/trackables/{self.ids['trackable']}/comments",
            json={"body": "Seen it"},
        )
        assert response.status_code == 201, response.get_data(as_text=True)
        self.ids["trackable_comment"] = response.get_json()["trackableCommentId"]

    def _make_journey_stop(self) -> None:
        response = self.request(
            "owner",
            "POST",
            f"/api/trackables/{self.ids['trackable']}/journey-stops",
            json={"latitude": 48.1, "longitude": 11.5},
        )
        assert response.status_code == 201, response.get_data(as_text=True)
        self.ids["journey_stop"] = response.get_json()["journeyStopId"]

    def _make_area_watch(self) -> None:
        response = self.request(
            "owner",
            "POST",
            "/api/watches/areas",
            json={"minLatitude": 47, "minLongitude": 8, "maxLatitude": 48, "maxLongitude": 9},
        )
        assert response.status_code == 201, response.get_data(as_text=True)
        self.ids["area_watch"] = response.get_json()["areaWatchId"]

    def _make_webhook(self) -> None:
        body = {"url": "https://hooks.example.org/world"}
        response = self.request("owner", "POST", "/api/webhooks", json=body)
        assert response.status_code == 201, response.get_data(as_text=True)
        self.ids["webhook"] = response.get_json()["webhookId"]

    def _make_webhook_delivery(self) -> None:
        """A settled delivery of the owner's webhook (a failed test message)."""
        from app.models.webhook import DeliveryState, WebhookDelivery

        url = f"/api/webhooks/{self.lazy('webhook')}/test"
        response = self.request("owner", "POST", url)
        assert response.status_code == 202, response.get_data(as_text=True)
        delivery_id = response.get_json()["deliveryId"]
        with self.app.app_context():
            delivery = db.session.get(WebhookDelivery, uuid.UUID(delivery_id))
            delivery.state = DeliveryState.FAILED
            db.session.commit()
        self.ids["webhook_delivery"] = delivery_id

    def _make_account_export(self) -> None:
        """The owner's data export, made by the worker (ready for download)."""
        from tests.jobs import run_jobs

        response = self.request("owner", "POST", "/api/account/export")
        assert response.status_code == 202, response.get_data(as_text=True)
        run_jobs(self.app)
        self.ids["account_export"] = response.get_json()["exportId"]

    def _make_report(self) -> None:
        from tests.reports import report_body

        response = self.request("owner", "POST", "/api/compliance/reports", json=report_body())
        assert response.status_code == 201, response.get_data(as_text=True)
        self.ids["report"] = response.get_json()["contentReportId"]

    def _make_image(self) -> None:
        response = self.request(
            "owner",
            "POST",
            f"/api/images/notes/{self.ids['note']}",
            data={"file": (io.BytesIO(tiny_jpeg()), "photo.jpg", "image/jpeg")},
            content_type="multipart/form-data",
        )
        assert response.status_code == 201, response.get_data(as_text=True)
        self.ids["image"] = response.get_json()["image"]["contentImageId"]


def tiny_jpeg() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (32, 24), (200, 30, 30)).save(buffer, "JPEG")
    return buffer.getvalue()


def build_world(app: Flask, state_kind: str | None, state: str) -> World:
    """A world in `state` as new: built the first time in this worker, its rows put back
    after (tests/snapshots.py)."""
    built = kept(f"authz {state_kind} {state}", lambda: _as_built(_build(app, state_kind, state)))
    return _again(app, built)


def _as_built(world: World) -> World:
    """What the snapshot keeps besides rows: the world's keys and codes, its users as their
    ids (row objects outlive no session) and the cookies its clients were sent."""
    ids = {caller: user.id for caller, user in world.users.items()}
    return World(
        app=world.app,
        users=ids,
        ids=dict(world.ids),
        secrets=dict(world.secrets),
        page=world.page,
        cookies={caller: list(headers) for caller, headers in world.cookies.items()},
    )


def _again(app: Flask, built: World) -> World:
    """A world of the rows just put back: its users read again, new clients carrying the
    cookies the first clients were sent."""
    world = World(
        app,
        users={caller: db.session.get(User, user_id) for caller, user_id in built.users.items()},
        ids=dict(built.ids),
        secrets=dict(built.secrets),
        page=built.page,
    )
    for caller in CALLERS:
        client = world.clients[caller] = app.test_client()
        for header in built.cookies.get(caller, ()):
            for name, morsel in SimpleCookie(header).items():
                client.set_cookie(name, morsel.value, path=morsel["path"] or "/")
    return world


def _build(app: Flask, state_kind: str | None, state: str) -> World:
    note_visibility = NOTE_STATES[state] if state_kind == "note" else NoteVisibility.PUBLIC
    page = TEAM_STATES[state] if state_kind == "team" else PageVisibility.PUBLIC
    world = World(app, page=page)
    users = world.users
    with one_commit():
        for caller in ("owner", "stranger", "member", "admin", "former_admin"):
            users[caller] = make_user()
        users["superadmin"] = make_user(is_superadmin=True)
        owner = users["owner"]
        team = world.team_of_the_world()
        owner_membership = make_membership(team, owner)
        link = make_invite_link(team, users["admin"])
        category = make_category(owner)
        note = make_note(
            owner, category=category, visibility=note_visibility, latitude=1, longitude=1
        )
        team_category = make_category(team_id=team.id)
        team_note = make_note(
            owner,
            team_id=team.id,
            category=team_category,
            visibility=note_visibility,
            latitude=1,
            longitude=1,
        )
        gate = make_trackable(owner)
        if note_visibility == NoteVisibility.ONCE_TRACKABLE_ACCESSED:
            attach_trackable(note, gate)
            attach_trackable(team_note, gate)
        trackable = make_trackable(owner)
        unactivated = make_trackable(None)
        group = make_group(owner)
        empty_category = make_category(owner)
        empty_team_category = make_category(team_id=team.id)
        # Read before the world is committed: the commit expires every row, and each read
        # after it would load its row again.
        world.secrets.update(
            gate=codes_of(gate)[0],
            trackable=codes_of(trackable)[0],
            trackable_qr=codes_of(trackable)[1],
            unactivated=codes_of(unactivated)[0],
        )
        world.ids.update(
            note=str(note.id),
            category=str(category.id),
            team=str(team.id),
            team_name=team.name,
            team_slug=team.slug,
            team_category=str(team_category.id),
            team_note=str(team_note.id),
            owner_membership=str(owner_membership.id),
            empty_category=str(empty_category.id),
            empty_team_category=str(empty_team_category.id),
            invite_link=str(link.id),
            invite_code=link.code,
            owner_name=owner.user_name,
            owner_id=str(owner.id),
            trackable=str(trackable.id),
            unactivated=str(unactivated.id),
            gate=str(gate.id),
            group=str(group.id),
        )
    # This client unlocks the gate with its secret code; the owner, signed in, unlocks the
    # unactivated trackable (which lets them activate it).
    for caller in CALLERS:
        world.clients[caller] = app.test_client()
    for caller, code in (("unlocked", "gate"), ("owner", "unactivated")):
        response = world.request(
            caller, "POST", "/api/trackables/lookup", json={"code": world.secrets[code]}
        )
        assert response.status_code == 200, response.get_data(as_text=True)
        world.cookies.setdefault(caller, []).extend(response.headers.getlist("Set-Cookie"))
    return world
