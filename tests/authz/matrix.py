"""The authorization matrix, as data: what each kind of caller gets from every operation.

Per operation of the OpenAPI document and per object state its answer depends on (`-`:
none; states: tests/authz/world.py), a row holds the answers of, in this order:
    anonymous  owner  stranger  member  admin  former_admin  unlocked  superadmin
`200+` / `200-`: a listing that holds (or lacks) the world's object (requests.py, `shows`).
Contract "Status codes" and decisions: 401 where a bearer token is needed; 404 for what the
caller may not see; 403 for what they see but may not do (a `Public` team's workspace,
someone else's public note); super-admins moderate reports but get no other access.
tests/authz/test_matrix.py calls every cell and compares.
"""

from __future__ import annotations

MATRIX: dict[str, dict[str, str]] = {
    "GET /api/system/status": {"-": "200 200 200 200 200 200 200 200"},
    "GET /api/system/beta-android": {"-": "200 200 200 200 200 200 200 200"},
    "GET /api/system/ip-location": {"-": "200 200 200 200 200 200 200 200"},
    "GET /api/system/coordinate-locality": {"-": "200 200 200 200 200 200 200 200"},
    "POST /api/external-links/verify": {"-": "401 400 400 400 400 400 401 400"},
    "POST /api/auth/register": {"-": "200 200 200 200 200 200 200 200"},
    "POST /api/auth/login": {"-": "200 200 200 200 200 200 200 200"},
    "POST /api/auth/refresh": {"-": "401 401 401 401 401 401 401 401"},
    "GET /api/auth/confirmEmail": {"-": "400 400 400 400 400 400 400 400"},
    "POST /api/auth/resendConfirmationEmail": {"-": "200 200 200 200 200 200 200 200"},
    "POST /api/auth/forgotPassword": {"-": "200 200 200 200 200 200 200 200"},
    "POST /api/auth/resetPassword": {"-": "400 400 400 400 400 400 400 400"},
    "GET /api/auth/manage/info": {"-": "401 200 200 200 200 200 401 200"},
    "POST /api/auth/manage/info": {"-": "401 200 200 200 200 200 401 200"},
    "POST /api/auth/manage/2fa": {"-": "401 200 200 200 200 200 401 200"},
    "DELETE /api/account": {"-": "401 200 200 200 200 200 401 200"},
    # data exports: the account's own; everyone else 404, super-admins included
    "POST /api/account/export": {"-": "401 202 202 202 202 202 401 202"},
    "GET /api/account/export/{exportId}": {"-": "401 200 404 404 404 404 401 404"},
    "GET /api/account/export/{exportId}/download": {"-": "401 200 404 404 404 404 401 404"},
    # Sync: a pull lists the world's note for whoever may see it (`userNotes` for its owner,
    # `publicNotes` for everyone when its area is asked for and the note is public); what a
    # push may change is decided per record (a `forbidden` conflict, never a status), so its
    # row is the bearer rule and its per-record cases are in tests/api/sync/test_push.py.
    "POST /api/sync/push": {"-": "401 200 200 200 200 200 401 200"},
    "POST /api/sync/pull": {
        "Private": "401 200+ 200- 200- 200- 200- 401 200-",
        "Public": "401 200+ 200+ 200+ 200+ 200+ 401 200+",
        "Gated": "401 200+ 200- 200- 200- 200- 401 200-",
    },
    "GET /api/notes/mine": {"-": "401 200+ 200- 200- 200- 200- 401 200-"},
    "POST /api/notes/mine": {"-": "401 201 201 201 201 201 401 201"},
    "POST /api/notes/mine/{noteId}/move": {
        "Private": "401 200 404 404 404 404 401 404",
        "Public": "401 200 403 403 403 403 401 403",
        "Gated": "401 200 404 404 404 404 401 404",
    },
    "DELETE /api/notes/mine/{noteId}": {
        "Private": "401 204 404 404 404 404 401 404",
        "Public": "401 204 403 403 403 403 401 403",
        "Gated": "401 204 404 404 404 404 401 404",
    },
    "GET /api/notes/public/bounds": {
        "Private": "200- 200- 200- 200- 200- 200- 200- 200-",
        "Public": "200+ 200+ 200+ 200+ 200+ 200+ 200+ 200+",
        "Gated": "200- 200- 200- 200- 200- 200- 200- 200-",
    },
    "GET /api/notes/public/nearby": {
        "Private": "200- 200- 200- 200- 200- 200- 200- 200-",
        "Public": "200+ 200+ 200+ 200+ 200+ 200+ 200+ 200+",
        "Gated": "200- 200- 200- 200- 200- 200- 200- 200-",
    },
    "GET /api/notes/public/search": {
        "Private": "200- 200- 200- 200- 200- 200- 200- 200-",
        "Public": "200+ 200+ 200+ 200+ 200+ 200+ 200+ 200+",
        "Gated": "200- 200- 200- 200- 200- 200- 200- 200-",
    },
    "GET /api/public/profiles/{userName}/notes/nearby": {
        "Private": "200- 200+ 200- 200- 200- 200- 200- 200-",
        "Public": "200+ 200+ 200+ 200+ 200+ 200+ 200+ 200+",
        "Gated": "200- 200+ 200- 200- 200- 200- 200+ 200-",
    },
    "GET /api/public/teams/{teamName}/notes/nearby": {
        "Public": "200+ 200+ 200+ 200+ 200+ 200+ 200+ 200+",
        "MembersOnly": "404 200+ 404 200+ 200+ 404 404 404",
    },
    "GET /api/public/notes/{noteId}": {
        "Private": "404 200 404 404 404 404 404 404",
        "Public": "200 200 200 200 200 200 200 200",
        "Gated": "404 200 404 404 404 404 200 404",
    },
    "GET /api/public/notes/{noteId}/comments": {
        "Private": "404 200 404 404 404 404 404 404",
        "Public": "200 200 200 200 200 200 200 200",
        "Gated": "404 200 404 404 404 404 200 404",
    },
    "POST /api/public/notes/{noteId}/comments": {
        "Private": "401 201 404 404 404 404 401 404",
        "Public": "401 201 201 201 201 201 401 201",
        "Gated": "401 201 404 404 404 404 401 404",
    },
    "GET /api/public/notes/{noteId}/trackables": {
        "Private": "404 200 404 404 404 404 404 404",
        "Public": "200 200 200 200 200 200 200 200",
        "Gated": "404 200 404 404 404 404 200 404",
    },
    "POST /api/public/notes/{noteId}/trackables": {
        "Private": "401 204 404 404 404 404 401 404",
        "Public": "401 204 403 403 403 403 401 403",
        "Gated": "401 204 404 404 404 404 401 404",
    },
    "GET /api/notes/mine/gpx": {"-": "401 200 200 200 200 200 401 200"},
    "POST /api/notes/mine/gpx": {"-": "401 200 200 200 200 200 401 200"},
    "GET /api/categories/mine": {"-": "401 200 200 200 200 200 401 200"},
    "POST /api/categories/mine": {"-": "401 201 201 201 201 201 401 201"},
    "GET /api/categories/mine/tree": {"-": "401 200 200 200 200 200 401 200"},
    "GET /api/categories/mine/tree/sections": {"-": "401 200 200 200 200 200 401 200"},
    "GET /api/categories/mine/tree/children": {"-": "401 200 200 200 200 200 401 200"},
    "POST /api/categories/mine/{categoryId}/move": {"-": "401 200 404 404 404 404 401 404"},
    "DELETE /api/categories/mine/{categoryId}": {"-": "401 204 404 404 404 404 401 404"},
    "GET /api/teams": {"-": "401 200+ 200- 200+ 200+ 200- 401 200-"},
    "POST /api/teams": {"-": "401 201 201 201 201 201 401 201"},
    "PUT /api/teams/{teamId}/settings": {
        "Public": "401 403 403 403 200 403 401 403",
        "MembersOnly": "401 403 404 403 200 404 401 404",
    },
    "DELETE /api/teams/{teamId}": {
        "Public": "401 403 403 403 204 403 401 403",
        "MembersOnly": "401 403 404 403 204 404 401 404",
    },
    "GET /api/teams/{teamId}/invite-links": {
        "Public": "401 403 403 403 200 403 401 403",
        "MembersOnly": "401 403 404 403 200 404 401 404",
    },
    "POST /api/teams/{teamId}/invite-links": {
        "Public": "401 403 403 403 201 403 401 403",
        "MembersOnly": "401 403 404 403 201 404 401 404",
    },
    "DELETE /api/teams/{teamId}/invite-links/{inviteLinkId}": {
        "Public": "401 403 403 403 204 403 401 403",
        "MembersOnly": "401 403 404 403 204 404 401 404",
    },
    "POST /api/teams/invite-links/{teamSlug}/{inviteCode}/join": {
        "Public": "401 200 200 200 200 200 401 200",
        "MembersOnly": "401 200 200 200 200 200 401 200",
    },
    "GET /api/teams/{teamId}/memberships": {
        "Public": "401 200 403 200 200 403 401 403",
        "MembersOnly": "401 200 404 200 200 404 401 404",
    },
    "POST /api/teams/{teamId}/memberships/request": {
        "Public": "401 409 200 409 409 200 401 200",
        "MembersOnly": "401 409 404 409 409 404 401 404",
    },
    "POST /api/teams/{teamId}/memberships/invite": {
        "Public": "401 403 403 403 200 403 401 403",
        "MembersOnly": "401 403 404 403 200 404 401 404",
    },
    "POST /api/teams/{teamId}/memberships/{membershipId}/accept": {
        "Public": "401 200 404 404 403 404 401 404",
        "MembersOnly": "401 200 404 404 403 404 401 404",
    },
    "POST /api/teams/{teamId}/memberships/{membershipId}/refuse": {
        "Public": "401 200 404 404 403 404 401 404",
        "MembersOnly": "401 200 404 404 403 404 401 404",
    },
    "POST /api/teams/{teamId}/memberships/{membershipId}/approve": {
        "Public": "401 403 404 404 200 404 401 404",
        "MembersOnly": "401 403 404 404 200 404 401 404",
    },
    "POST /api/teams/{teamId}/memberships/{membershipId}/deny": {
        "Public": "401 403 404 404 200 404 401 404",
        "MembersOnly": "401 403 404 404 200 404 401 404",
    },
    "POST /api/teams/{teamId}/memberships/{membershipId}/promote-admin": {
        "Public": "401 403 404 403 200 404 401 404",
        "MembersOnly": "401 403 404 403 200 404 401 404",
    },
    "DELETE /api/teams/{teamId}/memberships/{membershipId}": {
        "Public": "401 204 404 403 204 404 401 404",
        "MembersOnly": "401 204 404 403 204 404 401 404",
    },
    "GET /api/teams/{teamId}/notes": {
        "Public": "401 200+ 403 200+ 200+ 403 401 403",
        "MembersOnly": "401 200+ 404 200+ 200+ 404 401 404",
    },
    "POST /api/teams/{teamId}/notes": {
        "Public": "401 201 403 201 201 403 401 403",
        "MembersOnly": "401 201 404 201 201 404 401 404",
    },
    "POST /api/teams/{teamId}/notes/{noteId}/move": {
        "Public": "401 200 403 403 200 403 401 403",
        "MembersOnly": "401 200 404 403 200 404 401 404",
    },
    "DELETE /api/teams/{teamId}/notes/{noteId}": {
        "Public": "401 204 403 403 204 403 401 403",
        "MembersOnly": "401 204 404 403 204 404 401 404",
    },
    "DELETE /api/teams/{teamId}/notes/{noteId}/delete": {
        "Public": "401 204 403 403 204 403 401 403",
        "MembersOnly": "401 204 404 403 204 404 401 404",
    },
    "GET /api/teams/{teamId}/notes/gpx": {
        "Public": "401 200 403 200 200 403 401 403",
        "MembersOnly": "401 200 404 200 200 404 401 404",
    },
    "POST /api/teams/{teamId}/notes/gpx": {
        "Public": "401 200 403 200 200 403 401 403",
        "MembersOnly": "401 200 404 200 200 404 401 404",
    },
    "GET /api/teams/{teamId}/categories": {
        "Public": "401 200 403 200 200 403 401 403",
        "MembersOnly": "401 200 404 200 200 404 401 404",
    },
    "POST /api/teams/{teamId}/categories": {
        "Public": "401 201 403 201 201 403 401 403",
        "MembersOnly": "401 201 404 201 201 404 401 404",
    },
    "GET /api/teams/{teamId}/categories/tree": {
        "Public": "401 200 403 200 200 403 401 403",
        "MembersOnly": "401 200 404 200 200 404 401 404",
    },
    "GET /api/teams/{teamId}/categories/tree/sections": {
        "Public": "401 200 403 200 200 403 401 403",
        "MembersOnly": "401 200 404 200 200 404 401 404",
    },
    "GET /api/teams/{teamId}/categories/tree/children": {
        "Public": "401 200 403 200 200 403 401 403",
        "MembersOnly": "401 200 404 200 200 404 401 404",
    },
    "POST /api/teams/{teamId}/categories/{categoryId}/move": {
        "Public": "401 200 403 200 200 403 401 403",
        "MembersOnly": "401 200 404 200 200 404 401 404",
    },
    "DELETE /api/teams/{teamId}/categories/{categoryId}": {
        "Public": "401 204 403 204 204 403 401 403",
        "MembersOnly": "401 204 404 204 204 404 401 404",
    },
    "POST /api/trackables/{trackableId}/activate": {"-": "401 200 404 404 404 404 401 404"},
    "DELETE /api/trackables/{trackableId}/group": {"-": "401 400 400 400 400 400 401 400"},
    "POST /api/trackables/{trackableId}/group": {"-": "401 200 404 404 404 404 401 404"},
    "POST /api/trackables/{trackableId}/watch": {"-": "401 200 200 200 200 200 401 200"},
    "DELETE /api/trackables/{trackableId}/watch": {"-": "401 200 200 200 200 200 401 200"},
    "POST /api/trackables/groups/{trackableGroupId}/watch": {
        "-": "401 200 404 404 404 404 401 404",
    },
    "DELETE /api/trackables/groups/{trackableGroupId}/watch": {
        "-": "401 200 404 404 404 404 401 404",
    },
    "GET /api/trackables/watches": {"-": "401 200 200 200 200 200 401 200"},
    "GET /api/notifications": {"-": "401 200 200 200 200 200 401 200"},
    "GET /api/notifications/unread-count": {"-": "401 200 200 200 200 200 401 200"},
    "POST /api/notifications/read": {"-": "401 204 204 204 204 204 401 204"},
    # An area watch is its creator's alone: another caller's delete is 404 (tests/api/
    # notifications/test_area_watch_routes.py has the rest).
    "POST /api/watches/areas": {"-": "401 201 201 201 201 201 401 201"},
    "GET /api/watches/areas": {"-": "401 200+ 200- 200- 200- 200- 401 200-"},
    "DELETE /api/watches/areas/{areaWatchId}": {"-": "401 204 404 404 404 404 401 404"},
    "GET /api/notifications/settings": {"-": "401 200 200 200 200 200 401 200"},
    "PUT /api/notifications/settings": {"-": "401 200 200 200 200 200 401 200"},
    "POST /api/webhooks": {"-": "401 201 201 201 201 201 401 201"},
    "GET /api/webhooks": {"-": "401 200 200 200 200 200 401 200"},
    "GET /api/webhooks/{webhookId}": {"-": "401 200 404 404 404 404 401 404"},
    "PATCH /api/webhooks/{webhookId}": {"-": "401 200 404 404 404 404 401 404"},
    "DELETE /api/webhooks/{webhookId}": {"-": "401 204 404 404 404 404 401 404"},
    "GET /api/webhooks/{webhookId}/deliveries": {"-": "401 200 404 404 404 404 401 404"},
    "POST /api/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver": {
        "-": "401 202 404 404 404 404 401 404"
    },
    "POST /api/webhooks/{webhookId}/test": {"-": "401 202 404 404 404 404 401 404"},
    "POST /api/webhooks/{webhookId}/secret/rotate": {"-": "401 200 404 404 404 404 401 404"},
    "POST /api/trackables/lookup": {"-": "200 200 200 200 200 200 200 200"},
    "GET /api/trackables/lookup": {"-": "200 200 200 200 200 200 200 200"},
    "GET /api/trackables/active": {"-": "200- 200- 200- 200- 200- 200- 200+ 200-"},
    "GET /api/trackables/active/{trackableId}": {"-": "404 200 404 404 404 404 200 404"},
    "DELETE /api/trackables/active/{trackableId}": {"-": "204 204 204 204 204 204 204 204"},
    "POST /api/trackables/active/{trackableId}/message": {"-": "404 404 404 404 404 404 200 404"},
    "GET /api/trackables/public": {"-": "200 200 200 200 200 200 200 200"},
    "GET /api/trackables/mine": {"-": "401 200+ 200- 200- 200- 200- 401 200-"},
    "GET /api/trackables/{trackableId}": {"-": "200 200 200 200 200 200 200 200"},
    "GET /api/trackables/{trackableId}/comments": {"-": "200 200 200 200 200 200 200 200"},
    "POST /api/trackables/{trackableId}/comments": {"-": "403 201 201 201 201 201 403 201"},
    "PUT /api/trackables/{trackableId}/comments/{commentId}": {
        "-": "401 200 403 403 403 403 401 403",
    },
    "DELETE /api/trackables/{trackableId}/comments/{commentId}": {
        "-": "401 204 403 403 403 403 401 403",
    },
    "POST /api/trackables": {"-": "401 201 201 201 201 201 401 201"},
    "POST /api/trackables/groups": {"-": "401 201 201 201 201 201 401 201"},
    "POST /api/trackables/{trackableId}/secret/rotate": {"-": "401 200 403 403 403 403 401 403"},
    "POST /api/trackables/labels": {"-": "401 200 403 403 403 403 401 403"},
    "GET /api/trackables/{trackableId}/journey": {"-": "200 200 200 200 200 200 200 200"},
    "GET /api/trackables/{trackableId}/journey.gpx": {"-": "200 200 200 200 200 200 200 200"},
    "GET /api/trackables/{trackableId}/journey.geojson": {"-": "200 200 200 200 200 200 200 200"},
    "POST /api/trackables/{trackableId}/journey-stops": {"-": "403 201 201 201 201 201 403 201"},
    "DELETE /api/trackables/{trackableId}/journey-stops/{journeyStopId}": {
        "-": "401 204 403 403 403 403 401 403",
    },
    "POST /api/trackables/{trackableId}/journey-stops/{journeyStopId}/note": {
        "-": "401 201 403 403 403 403 401 403",
    },
    "POST /api/compliance/reports": {"-": "201 201 201 201 201 201 201 201"},
    "GET /api/compliance/reports": {"-": "401 403 403 403 403 403 401 200+"},
    "POST /api/compliance/errors": {"-": "200 200 200 200 200 200 200 200"},
    "GET /api/compliance/reports/mine": {"-": "401 200+ 200- 200- 200- 200- 401 200-"},
    "GET /api/compliance/reports/{contentReportId}": {"-": "401 200 404 404 404 404 401 200"},
    "PUT /api/compliance/reports/{contentReportId}": {"-": "401 403 403 403 403 403 401 200"},
    "GET /api/images/profiles/{userId}": {"-": "200 200 200 200 200 200 200 200"},
    "GET /api/images/notes/{noteId}": {
        "Private": "200- 200+ 200- 200- 200- 200- 200- 200-",
        "Public": "200+ 200+ 200+ 200+ 200+ 200+ 200+ 200+",
        "Gated": "200- 200+ 200- 200- 200- 200- 200+ 200-",
    },
    "POST /api/images/notes/{noteId}": {
        "Private": "401 201 404 404 404 404 401 404",
        "Public": "401 201 403 403 403 403 401 403",
        "Gated": "401 201 404 404 404 404 401 404",
    },
    "GET /api/images/teams/{teamId}": {
        "Public": "200 200 200 200 200 200 200 200",
        "MembersOnly": "200 200 200 200 200 200 200 200",
    },
    "POST /api/images/teams/{teamId}": {
        "Public": "401 403 403 403 201 403 401 403",
        "MembersOnly": "401 403 404 403 201 404 401 404",
    },
    "GET /api/images/trackables/{trackableId}": {"-": "200 200 200 200 200 200 200 200"},
    "POST /api/images/trackables/{trackableId}": {"-": "401 201 403 403 403 403 401 403"},
    "GET /api/images/trackable-groups/{trackableGroupId}": {"-": "200 200 200 200 200 200 200 200"},
    "POST /api/images/trackable-groups/{trackableGroupId}": {
        "-": "401 201 404 404 404 404 401 404",
    },
    # A finder's photo: only the entry's writer adds one (here the owner wrote, signed in);
    # an anonymous caller is refused by permission (403), not asked for a token.
    "GET /api/images/trackable-comments/{commentId}": {"-": "200 200 200 200 200 200 200 200"},
    "POST /api/images/trackable-comments/{commentId}": {"-": "403 201 403 403 403 403 403 403"},
    "GET /api/images/journey-stops/{journeyStopId}": {"-": "200 200 200 200 200 200 200 200"},
    "POST /api/images/journey-stops/{journeyStopId}": {"-": "403 201 403 403 403 403 403 403"},
    "GET /api/images/{contentImageId}/{variant}": {
        "Private": "404 200 404 404 404 404 404 404",
        "Public": "200 200 200 200 200 200 200 200",
        "Gated": "404 200 404 404 404 404 200 404",
    },
    "POST /api/images/profiles": {"-": "401 201 201 201 201 201 401 201"},
    "DELETE /api/images/{contentImageId}": {
        "Private": "401 204 404 404 404 404 401 404",
        "Public": "401 204 403 403 403 403 401 403",
        "Gated": "401 204 404 404 404 404 401 404",
    },
}
