"""How the matrix calls each operation: the state its answer depends on, which object of
the world each path parameter names, and a valid body or query (so that only the caller
and the state decide the answer). Keyed as the OpenAPI document names operations."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.factories import DEFAULT_PASSWORD

GPX = Path(__file__).parent.parent / "data" / "gpx" / "garmin_etrex.gpx"
_unique = itertools.count(1)

Body = dict[str, Any] | Callable[[Any, str], dict[str, Any]]


@dataclass(frozen=True)
class Call:
    state: str | None = None  # "note", "team" or None (one state)
    path: dict[str, str] = field(default_factory=dict)  # parameter -> world id name
    json: Body | None = None
    query: Body | None = None
    upload: str | None = None  # "gpx" or "jpeg": a multipart file part named `file`
    # A success changes the world for the next caller (deletes, answers, joins): the next
    # caller gets a new world. Other writes (creations, edits) leave it as it was.
    destructive: bool = False
    # A read whose answer lists this world object for some callers only: the matrix says
    # whether each caller's answer holds it ("200+") or not ("200-").
    shows: str | None = None


def email_of(caller: str) -> Callable[[Any, str], dict[str, Any]]:
    return lambda world, _caller: {"email": world.users[caller].email}


def fresh_registration(_world: Any, _caller: str) -> dict[str, Any]:
    number = next(_unique)
    return {
        "email": f"newcomer_{number}@example.com",
        "userName": f"newcomer_{number}",
        "password": DEFAULT_PASSWORD,
    }


def report(_world: Any, _caller: str) -> dict[str, Any]:
    from tests.reports import report_body

    return report_body()


def labels_of(world: Any) -> dict[str, Any]:
    """A label of the world's trackable, with its real codes (which the owner holds)."""
    item = {
        "trackableId": world.ids["trackable"],
        "secretCode": world.secrets["trackable"],
        "qrToken": world.secrets["trackable_qr"],
    }
    return {"layout": "avery-l7160", "items": [item]}


NOTE = {"title": "A title"}
SYNC_DEVICE = "5b0f3c52-9a8e-4f0e-8a43-8c1d2e7f6a10"
NEAR = {"latitude": 1, "longitude": 1, "radiusKm": 10}
ACCEPT = {"teamId": "invite_team", "membershipId": "invitation"}
APPROVE = {"teamId": "request_team", "membershipId": "request"}
MEMBER = {"membershipId": "owner_membership"}
OPEN = {"trackableId": "gate"}  # the trackable this client unlocked

# Path parameters not listed in a Call name these world objects.
DEFAULT_PATH = {
    "noteId": "note",
    "categoryId": "category",
    "teamId": "team",
    "inviteLinkId": "invite_link",
    "teamSlug": "team_slug",
    "inviteCode": "invite_code",
    "userName": "owner_name",
    "teamName": "team_name",
    "userId": "owner_id",
    "trackableId": "trackable",
    "trackableGroupId": "group",
    "commentId": "trackable_comment",
    "journeyStopId": "journey_stop",
    "contentReportId": "report",
    "contentImageId": "image",
    "variant": "=small",  # "=": the value itself
    "exportId": "account_export",
}
TEAM_PATH = {"noteId": "team_note", "categoryId": "team_category"}

# Besides a Call's own flag: every DELETE, and these changes of state, are destructive.
DESTRUCTIVE_SUFFIXES = (
    "/accept",
    "/refuse",
    "/approve",
    "/deny",
    "/promote-admin",
    "/join",
    "/memberships/request",
    "/memberships/invite",
    "/activate",
    "/secret/rotate",
    "{trackableId}/group",
    "{journeyStopId}/note",
)


def is_destructive(op: str, call: Call) -> bool:
    return call.destructive or op.startswith("DELETE ") or op.endswith(DESTRUCTIVE_SUFFIXES)


CALLS: dict[str, Call] = {
    # system, links, identity: no object, so one state
    "GET /api/system/status": Call(),
    "GET /api/system/beta-android": Call(),
    "GET /api/system/ip-location": Call(),
    "GET /api/system/coordinate-locality": Call(query={"latitude": 48.1, "longitude": 11.5}),
    "POST /api/external-links/verify": Call(json={"url": "http://127.0.0.1/"}),
    "POST /api/auth/register": Call(json=fresh_registration),
    "POST /api/auth/login": Call(
        json=lambda w, c: {"email": w.users["owner"].email, "password": DEFAULT_PASSWORD}
    ),
    "POST /api/auth/refresh": Call(json={"refreshToken": "not-a-refresh-token"}),
    "GET /api/auth/confirmEmail": Call(
        query=lambda w, c: {"userId": w.ids["owner_id"], "code": "nope"}
    ),
    "POST /api/auth/resendConfirmationEmail": Call(json=email_of("owner")),
    "POST /api/auth/forgotPassword": Call(json=email_of("owner")),
    "POST /api/auth/resetPassword": Call(
        json=lambda w, c: {
            "email": w.users["owner"].email,
            "resetCode": "nope",
            "newPassword": DEFAULT_PASSWORD,
        }
    ),
    "GET /api/auth/manage/info": Call(),
    "POST /api/auth/manage/info": Call(json={"mapSource": "openstreetmap"}),
    "POST /api/auth/manage/2fa": Call(json={}),
    "DELETE /api/account": Call(),
    # personal notes and discovery
    # sync
    "POST /api/sync/push": Call(json={"deviceId": SYNC_DEVICE, "notes": [], "categories": []}),
    "POST /api/sync/pull": Call(
        "note",
        shows="note",
        json={
            "publicArea": {"minLatitude": 0, "minLongitude": 0, "maxLatitude": 2, "maxLongitude": 2}
        },
    ),
    "GET /api/notes/mine": Call(shows="note"),
    "POST /api/notes/mine": Call(json=NOTE),
    "POST /api/notes/mine/{noteId}/move": Call("note", json={"title": "Moved"}),
    "DELETE /api/notes/mine/{noteId}": Call("note"),
    "GET /api/notes/public/bounds": Call(
        "note",
        shows="note",
        query={"minLatitude": 0, "minLongitude": 0, "maxLatitude": 2, "maxLongitude": 2},
    ),
    "GET /api/notes/public/nearby": Call("note", query=NEAR, shows="note"),
    # The world's notes are titled "Note <n>" (tests.factories.make_note).
    "GET /api/notes/public/search": Call("note", query={"q": "note"}, shows="note"),
    "GET /api/public/profiles/{userName}/notes/nearby": Call("note", query=NEAR, shows="note"),
    "GET /api/public/teams/{teamName}/notes/nearby": Call("team", query=NEAR, shows="team_note"),
    "GET /api/public/notes/{noteId}": Call("note"),
    "GET /api/public/notes/{noteId}/comments": Call("note"),
    "POST /api/public/notes/{noteId}/comments": Call("note", json={"body": "Nice"}),
    "GET /api/public/notes/{noteId}/trackables": Call("note"),
    "POST /api/public/notes/{noteId}/trackables": Call(
        "note", json=lambda w, c: {"trackableSecretCodes": w.secrets["trackable"]}, destructive=True
    ),
    "GET /api/notes/mine/gpx": Call(),
    "POST /api/notes/mine/gpx": Call(upload="gpx"),
    # personal categories
    "GET /api/categories/mine": Call(),
    "POST /api/categories/mine": Call(json={"name": "Walks"}),
    "GET /api/categories/mine/tree": Call(),
    "GET /api/categories/mine/tree/sections": Call(),
    "GET /api/categories/mine/tree/children": Call(),
    "POST /api/categories/mine/{categoryId}/move": Call(json={"name": "Renamed"}),
    "DELETE /api/categories/mine/{categoryId}": Call(path={"categoryId": "empty_category"}),
    # teams
    "GET /api/teams": Call(shows="team"),
    "POST /api/teams": Call(json=lambda w, c: {"name": f"New team {next(_unique)}"}),
    "PUT /api/teams/{teamId}/settings": Call("team", json={"title": "New title"}),
    "DELETE /api/teams/{teamId}": Call("team"),
    "GET /api/teams/{teamId}/invite-links": Call("team"),
    "POST /api/teams/{teamId}/invite-links": Call("team", json={}),
    "DELETE /api/teams/{teamId}/invite-links/{inviteLinkId}": Call("team"),
    "POST /api/teams/invite-links/{teamSlug}/{inviteCode}/join": Call("team"),
    "GET /api/teams/{teamId}/memberships": Call("team"),
    "POST /api/teams/{teamId}/memberships/request": Call("team"),
    "POST /api/teams/{teamId}/memberships/invite": Call(
        "team", json=lambda w, c: {"userName": w.users["stranger"].user_name}
    ),
    "POST /api/teams/{teamId}/memberships/{membershipId}/accept": Call("team", path=ACCEPT),
    "POST /api/teams/{teamId}/memberships/{membershipId}/refuse": Call("team", path=ACCEPT),
    "POST /api/teams/{teamId}/memberships/{membershipId}/approve": Call("team", path=APPROVE),
    "POST /api/teams/{teamId}/memberships/{membershipId}/deny": Call("team", path=APPROVE),
    "POST /api/teams/{teamId}/memberships/{membershipId}/promote-admin": Call("team", path=MEMBER),
    "DELETE /api/teams/{teamId}/memberships/{membershipId}": Call("team", path=MEMBER),
    # team notes and categories
    "GET /api/teams/{teamId}/notes": Call("team", shows="team_note"),
    "POST /api/teams/{teamId}/notes": Call("team", json=NOTE),
    "POST /api/teams/{teamId}/notes/{noteId}/move": Call("team", json={"title": "Moved"}),
    "DELETE /api/teams/{teamId}/notes/{noteId}": Call("team"),
    "DELETE /api/teams/{teamId}/notes/{noteId}/delete": Call("team"),
    "GET /api/teams/{teamId}/notes/gpx": Call("team"),
    "POST /api/teams/{teamId}/notes/gpx": Call("team", upload="gpx"),
    "GET /api/teams/{teamId}/categories": Call("team"),
    "POST /api/teams/{teamId}/categories": Call("team", json={"name": "Walks"}),
    "GET /api/teams/{teamId}/categories/tree": Call("team"),
    "GET /api/teams/{teamId}/categories/tree/sections": Call("team"),
    "GET /api/teams/{teamId}/categories/tree/children": Call("team"),
    "POST /api/teams/{teamId}/categories/{categoryId}/move": Call("team", json={"name": "Renamed"}),
    "DELETE /api/teams/{teamId}/categories/{categoryId}": Call(
        "team", path={"categoryId": "empty_team_category"}
    ),
    # trackables
    "POST /api/trackables/{trackableId}/activate": Call(
        path={"trackableId": "unactivated"}, json={"name": "Mine now"}
    ),
    "DELETE /api/trackables/{trackableId}/group": Call(),
    "POST /api/trackables/{trackableId}/group": Call(
        json=lambda w, c: {"trackableGroupId": w.ids["group"]}
    ),
    "POST /api/trackables/{trackableId}/watch": Call(),
    "DELETE /api/trackables/{trackableId}/watch": Call(),
    "POST /api/trackables/groups/{trackableGroupId}/watch": Call(),
    "DELETE /api/trackables/groups/{trackableGroupId}/watch": Call(),
    "GET /api/trackables/watches": Call(),
    "GET /api/notifications": Call(),
    "POST /api/account/export": Call(),
    "GET /api/account/export/{exportId}": Call(),
    "GET /api/account/export/{exportId}/download": Call(),
    "GET /api/notifications/unread-count": Call(),
    # another user's id is ignored, never refused: every signed-in caller gets 204
    "POST /api/notifications/read": Call(json={"upTo": "4f1c9e2a-7b3d-4c58-9e06-2a8d5b7c1f34"}),
    "POST /api/watches/areas": Call(
        json={"minLatitude": 47, "minLongitude": 8, "maxLatitude": 48, "maxLongitude": 9}
    ),
    "GET /api/watches/areas": Call(shows="area_watch"),
    "DELETE /api/watches/areas/{areaWatchId}": Call(
        path={"areaWatchId": "area_watch"}, destructive=True
    ),
    "GET /api/notifications/settings": Call(),
    "PUT /api/notifications/settings": Call(json={"mail": "each"}),
    # webhooks: the owner's own; no one else may see it (404), super-admins included
    "POST /api/webhooks": Call(json={"url": "https://hooks.example.org/new"}),
    "GET /api/webhooks": Call(),
    "GET /api/webhooks/{webhookId}": Call(path={"webhookId": "webhook"}),
    "PATCH /api/webhooks/{webhookId}": Call(
        path={"webhookId": "webhook"}, json={"isEnabled": True}
    ),
    "DELETE /api/webhooks/{webhookId}": Call(path={"webhookId": "webhook"}, destructive=True),
    "GET /api/webhooks/{webhookId}/deliveries": Call(path={"webhookId": "webhook"}),
    "POST /api/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver": Call(
        path={"webhookId": "webhook", "deliveryId": "webhook_delivery"}, destructive=True
    ),
    "POST /api/webhooks/{webhookId}/test": Call(path={"webhookId": "webhook"}),
    "POST /api/webhooks/{webhookId}/secret/rotate": Call(path={"webhookId": "webhook"}),
    "POST /api/trackables/lookup": Call(json=lambda w, c: {"code": w.secrets["trackable"]}),
    "GET /api/trackables/lookup": Call(query=lambda w, c: {"code": w.secrets["trackable"]}),
    "GET /api/trackables/active": Call(shows="gate"),
    "GET /api/trackables/active/{trackableId}": Call(path=OPEN),
    "DELETE /api/trackables/active/{trackableId}": Call(path=OPEN),
    "POST /api/trackables/active/{trackableId}/message": Call(
        path=OPEN, json={"statusMessage": "Moving on"}
    ),
    "GET /api/trackables/public": Call(),
    "GET /api/trackables/mine": Call(shows="trackable"),
    "GET /api/trackables/{trackableId}": Call(),
    "GET /api/trackables/{trackableId}/comments": Call(),
    "POST /api/trackables/{trackableId}/comments": Call(json={"body": "Seen it"}),
    "PUT /api/trackables/{trackableId}/comments/{commentId}": Call(json={"body": "Edited"}),
    "DELETE /api/trackables/{trackableId}/comments/{commentId}": Call(),
    "POST /api/trackables": Call(json={"name": "New trackable"}),
    "POST /api/trackables/groups": Call(
        json=lambda w, c: {"name": f"New group {next(_unique)}", "trackableCount": 1}
    ),
    "POST /api/trackables/{trackableId}/secret/rotate": Call(json={}),
    "POST /api/trackables/labels": Call(json=lambda w, c: labels_of(w)),
    "GET /api/trackables/{trackableId}/journey": Call(),
    "GET /api/trackables/{trackableId}/journey.gpx": Call(),
    "GET /api/trackables/{trackableId}/journey.geojson": Call(),
    "POST /api/trackables/{trackableId}/journey-stops": Call(json={"latitude": 1, "longitude": 1}),
    "DELETE /api/trackables/{trackableId}/journey-stops/{journeyStopId}": Call(),
    "POST /api/trackables/{trackableId}/journey-stops/{journeyStopId}/note": Call(json=NOTE),
    # compliance
    "POST /api/compliance/reports": Call(json=report),
    "GET /api/compliance/reports": Call(shows="report"),
    "POST /api/compliance/errors": Call(json={"userExplanation": "It broke"}),
    "GET /api/compliance/reports/mine": Call(shows="report"),
    "GET /api/compliance/reports/{contentReportId}": Call(),
    "PUT /api/compliance/reports/{contentReportId}": Call(
        json={"status": 2, "resolutionText": "Removed."}
    ),
    # images
    "GET /api/images/profiles/{userId}": Call(),
    "GET /api/images/notes/{noteId}": Call("note", shows="image"),
    "POST /api/images/notes/{noteId}": Call("note", upload="jpeg"),
    "GET /api/images/teams/{teamId}": Call("team"),
    "POST /api/images/teams/{teamId}": Call("team", upload="jpeg"),
    "GET /api/images/trackables/{trackableId}": Call(),
    "POST /api/images/trackables/{trackableId}": Call(upload="jpeg"),
    "GET /api/images/trackable-groups/{trackableGroupId}": Call(),
    "POST /api/images/trackable-groups/{trackableGroupId}": Call(upload="jpeg"),
    "GET /api/images/trackable-comments/{commentId}": Call(),
    "POST /api/images/trackable-comments/{commentId}": Call(upload="jpeg"),
    "GET /api/images/journey-stops/{journeyStopId}": Call(),
    "POST /api/images/journey-stops/{journeyStopId}": Call(upload="jpeg"),
    "GET /api/images/{contentImageId}/{variant}": Call("note"),
    "POST /api/images/profiles": Call(upload="jpeg"),
    "DELETE /api/images/{contentImageId}": Call("note"),
}
