"""The OpenAPI document's examples, in one place: one per body schema (keyed by its
component name), a few per operation where the schema's example would mislead, and a
problem-details example per status. app.api.documentation puts them into the document
when it is built; tests/test_openapi_docs.py validates each against its schema and fails
on a body without one.

One story runs through them (Ada's notes in Berlin, her team, a trackable that travels
via Zurich), so the ids agree across operations. Secret codes and QR tokens are masked,
as everywhere in the document.
"""

from __future__ import annotations

from typing import Any

from app.error_codes import Code
from app.errors import status_title

# --- the story's ids -------------------------------------------------------------------------

ADA_ID = "a9de0789-65a8-4375-942b-c45007818ad6"
KIM_ID = "8de5b2f3-80f8-4d87-aa6c-a9f169932a05"
CATEGORY_ID = "398196f6-497f-4de5-a59a-ad781699946f"
CHILD_CATEGORY_ID = "976449da-a012-4dfd-8f97-fc14fe268a3a"
NOTE_ID = "2cb04f79-4f6e-43a4-99d2-b1d203494dbd"
COMMENT_ID = "25b057a0-e91c-48d2-a679-89e4874dda5f"
TEAM_ID = "a02abd27-8be1-4b93-8997-9d8d6f664aa3"
TEAM_CATEGORY_ID = "5d0f7c1e-3b2a-4f69-8e4d-1c7b9a2e6f30"
TEAM_NOTE_ID = "e41a8c2d-6b3f-4d7e-9a15-0c8b2f6d4e97"
ADA_MEMBERSHIP_ID = "a7cc6ffb-83e0-419c-85b8-d4ac0998e30d"
KIM_MEMBERSHIP_ID = "22c25889-3fd5-4771-9c10-78f5bfaef640"
INVITE_LINK_ID = "fee25ea5-7560-40cf-920d-85165372590b"
TRACKABLE_ID = "211d4a82-ee59-4ccd-948d-90cf1532b2bf"
SECOND_TRACKABLE_ID = "287a5b00-701b-4d07-b78b-476210a2d919"
GROUP_ID = "2507f84b-5044-40e8-a602-a1b5fc2c8076"
STOP_ID = "a178e4be-2d4c-4d62-8a4c-25bd8c68c54e"
COORDINATE_ID = "c85971c8-e75b-5d10-a2bb-f5379068da75"
TRACKABLE_COMMENT_ID = "e9378ab3-2c5f-4bec-90a5-4861a93ad3d2"
IMAGE_ID = "6dc18b0b-d857-4f84-8c06-e4332b37e284"
REPORT_ID = "231a6325-e2c4-44d7-8c11-0f4eba8db81e"
MUTATION_ID = "5b0e3f7a-2c1d-4e8f-9a6b-7c5d3e1f2a4b"
PUBLIC_CODE = "LN-4K7Q2M"
MASKED_CODE = "LN********"  # a secret code, masked
MASKED_SCAN_URL = "https://notes.example.com/trackable/****************"
TICKET = "ERR-7K3M9Q2T"

# --- identity --------------------------------------------------------------------------------

IDENTITY = {
    "Register": {
        "email": "ada@example.com",
        "userName": "ada_walks",
        "password": "my-own-long-passphrase-7",
    },
    "Login": {"email": "ada@example.com", "password": "my-own-long-passphrase-7"},
    "Refresh": {"refreshToken": "y5BDqhq-QX6mWiJ-021nn4JdKqj-zIlQOrACWRK6Yku1weSpy2fn8miJ0"},
    "AccessToken": {
        "tokenType": "Bearer",
        "accessToken": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhOWRlMDc4OSJ9.SAftNq8QPN81",
        "expiresIn": 3600,
        "refreshToken": "2Xp7Kq9-mVb4TzL8wYc3Ns6Rd1Fg5Hj0Ue2Ia7Ob4Pc9Qd3Re8Sf1Tg6Uh5Vi0Wj",
    },
    "Email": {"email": "ada@example.com"},
    "ResetPassword": {
        "email": "ada@example.com",
        "resetCode": "eyJ1IjoiYTlkZTA3ODkiLCJwIjoicmVzZXQifQ.ZxK2vA.q8Vt3mLr0",
        "newPassword": "another-long-passphrase-8",
    },
    "Info": {
        "email": "ada@example.com",
        "isEmailConfirmed": True,
        "experienceMode": "latest_and_greatest",
        "mapSource": "openstreetmap",
    },
    "InfoUpdate": {"mapSource": "openstreetmap", "experienceMode": "latest_and_greatest"},
    "TwoFactor": {"enable": True, "twoFactorCode": "492031"},
    "TwoFactorStatus": {
        "sharedKey": "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP",
        "recoveryCodesLeft": 10,
        "recoveryCodes": ["7K3M9-Q2T4X", "B8N2P-4RX7Z", "C3V6W-9YH2K", "D4J8M-1NP5R"],
        "isTwoFactorEnabled": True,
        "isMachineRemembered": False,
    },
    "AccountDeletion": {
        "deletedAccount": True,
        "notesDeleted": 12,
        "categoriesDeleted": 3,
        "linkedProvidersDeleted": 0,
        "imagesDeleted": 2,
    },
}

# --- system ----------------------------------------------------------------------------------

LOCALITY = {
    "resolved": True,
    "sourceKind": "Coordinates",
    "coordinateSourceProvider": "request",
    "localitySourceProvider": "geonames",
    "latitude": 52.52,
    "longitude": 13.405,
    "city": "Berlin",
    "stateOrProvince": "",
    "country": "Germany",
    "isApproximate": False,
    "accuracyRadiusKm": None,
    "failureReason": "",
}
SYSTEM = {
    "Status": {
        "status": "online",
        "utcNow": "2026-11-23T10:20:00.123Z",
        "androidMinimumCompatibleDisplayVersion": "1.4.0",
        "androidMinimumCompatibleVersionCode": "140",
        "androidCompatibilityMessage": "This version of the app is too old for sync and team "
        "management. Please update.",
        "androidBetaPageUrl": "/beta/android",
        "requestedExperienceMode": "latest_and_greatest",
        "effectiveExperienceMode": "latest_and_greatest",
        "usesSavedExperienceModePreference": True,
        "usesVisitorExperienceModePreferenceCookie": False,
        "thirdPartyBrowserCallsAllowed": True,
        "requestedMapSource": "openstreetmap",
        "preferredMapSource": "openstreetmap",
        "fallbackMapSource": "hosted_maps",
        "usesSavedMapPreference": True,
        "usesVisitorMapPreferenceCookie": False,
        "googleMapsAllowed": False,
        "googleMapsConfigured": False,
        "openStreetMapAllowed": True,
        "openStreetMapConfigured": True,
        "hostedMapsConfigured": True,
        "hostedMapsForcedByPrivacy": False,
        "hostedMapTileUrlTemplate": "/maps/tiles/{z}/{x}/{y}.png",
        "limits": {
            "publicListCap": 500,
            "pageSizeMax": 100,
            "nearbyDefaultRadiusKm": 5.0,
            "nearbyMaxRadiusKm": 500.0,
            "trackablesPerGroupMax": 100,
            "maxRequestBytes": 22020096,
            "maxFormParts": 1000,
            "maxFormFieldBytes": 500000,
            "imageMaxBytes": 20971520,
            "imageMaxPixels": 60000000,
            "imageMaxDecodeBytes": 671088640,
            "imageMaxAspectRatio": 50.0,
            "imagesPerParentMax": 400,
            "gpxMaxBytes": 10485760,
            "syncPushMaxNotes": 500,
            "syncPushMaxCategories": 500,
            "syncPushLinkBudgetSeconds": 10.0,
            "secretCodeGuesses": {
                "attempts": 10,
                "networkAttempts": 30,
                "accountAttempts": 10,
                "accountNetworkAttempts": 100,
                "windowMinutes": 10,
                "alarmMisses": 500,
            },
            "trackableCreations": {"attempts": 200, "windowMinutes": 60},
            "imageUploads": {"attempts": 200, "windowMinutes": 1440},
            "accountExports": {"attempts": 3, "windowMinutes": 1440},
            "webhookSends": {"attempts": 60, "windowMinutes": 60},
            "webhookSendsPerWebhook": {"attempts": 20, "windowMinutes": 60},
            "secretRotations": {"attempts": 10, "windowMinutes": 60},
            "finderPhotos": {
                "perEntry": 4,
                "perSession": 12,
                "perNetwork": 60,
                "windowMinutes": 1440,
            },
            "rateLimits": {
                "login": "20 per minute",
                "register": "10 per hour",
                "accountMail": "5 per 15 minutes",
                "compliance": "20 per hour",
                "trackableLabels": "30 per hour",
                "linkVerify": "30 per minute",
            },
            "reportDuplicateWindowMinutes": 60,
        },
        "serviceVersion": "0.2.0",
    },
    "BetaAndroid": {
        "displayVersion": "1.5.0-beta.2",
        "versionCode": "152",
        "minimumCompatibleDisplayVersion": "1.4.0",
        "minimumCompatibleVersionCode": "140",
        "releaseNotes": "Offline maps for saved areas; faster sync.",
        "downloadUrl": "https://notes.example.com/downloads/location-notes-1.5.0-beta.2.apk",
        "betaPageUrl": "/beta/android",
    },
    "Locality": LOCALITY,
    "IpLocation": {
        **LOCALITY,
        "sourceKind": "IpAddress",
        "coordinateSourceProvider": "maxmind",
        "latitude": 52.5244,
        "longitude": 13.4105,
        "isApproximate": True,
        "accuracyRadiusKm": 20.0,
        "clientIpAddress": "203.0.113.24",
        "lookupIpAddress": "203.0.113.24",
        "usedDevelopmentFallbackIp": False,
    },
    "LinkVerifyRequest": {"url": "example.com/walks/tempelhof"},
    "LinkVerification": {
        "normalizedUrl": "https://example.com/walks/tempelhof",
        "suggestedDescription": "Walking the old airfield",
        "supportUrl": "/help/external-links",
    },
}

# --- notes and categories --------------------------------------------------------------------

NOTE_FIELDS = {
    "categoryId": CATEGORY_ID,
    "title": "Old oak by the gate",
    "body": "A hollow oak, big enough to sit in. Kids love it.",
    "contentLanguage": "en",
    "latitude": 52.4862,
    "longitude": 13.4036,
    "visibility": "Public",
    "commentPolicy": "LoggedInUsers",
    "externalLinkUrl": "https://example.com/walks/tempelhof",
    "externalLinkDescription": "Walking the old airfield",
}
NOTE = {
    "noteId": NOTE_ID,
    "ownerUserId": ADA_ID,
    "ownerUserName": "ada_walks",
    **NOTE_FIELDS,
    "isDeleted": False,
    "updatedUtc": "2026-11-23T09:41:07.512Z",
    "lastActivityUtc": "2026-11-23T10:02:44.090Z",
    "clientMutationId": MUTATION_ID,
    "teamId": None,
}
TEAM_NOTE = {
    **NOTE,
    "noteId": TEAM_NOTE_ID,
    "categoryId": TEAM_CATEGORY_ID,
    "title": "Meeting point: the water tower",
    "body": "We start here at 9 pm on Fridays.",
    "latitude": 52.5389,
    "longitude": 13.4186,
    "visibility": "Private",
    "commentPolicy": "TeamMembers",
    "externalLinkUrl": None,
    "externalLinkDescription": "",
    "clientMutationId": None,
    "teamId": TEAM_ID,
}
CATEGORY = {
    "categoryId": CATEGORY_ID,
    "name": "Walks",
    "contentLanguage": "en",
    "parentCategoryId": None,
}
CHILD_CATEGORY = {
    "categoryId": CHILD_CATEGORY_ID,
    "name": "Parks",
    "contentLanguage": "en",
    "parentCategoryId": CATEGORY_ID,
}
NOTES = {
    "Note": NOTE,
    "NoteCreate": {**NOTE_FIELDS, "clientMutationId": MUTATION_ID},
    "NoteMove": {"categoryId": CHILD_CATEGORY_ID, "latitude": 52.4866, "longitude": 13.4041},
    "StopNote": {
        "title": "Where the paddle rested",
        "body": "Found on the jetty, left at the boat house.",
        "categoryId": CATEGORY_ID,
        "visibility": "Public",
    },
    "Comment": {
        "commentId": COMMENT_ID,
        "noteId": NOTE_ID,
        "authorUserName": "kim_finds",
        "authorDisplayText": "Kim",
        "body": "Still standing in May, and the bench is back.",
        "createdUtc": "2026-11-23T10:02:44.090Z",
        "updatedUtc": "2026-11-23T10:02:44.090Z",
    },
    "CommentCreate": {"body": "Still standing in May, and the bench is back."},
    "GpxImportForm": {"file": "(the GPX file: walks.gpx)", "visibility": "Private"},
    "GpxImportReport": {
        "created": 1,
        "duplicates": 0,
        "skipped": 0,
        "rejected": 1,
        "waypoints": [
            {
                "index": 0,
                "name": "Bench by the pond",
                "outcome": "created",
                "noteId": "c4b7c66d-f9eb-4c73-a4e6-00ccedc1a1cf",
                "reason": "",
            },
            {
                "index": 1,
                "name": "Broken point",
                "outcome": "rejected",
                "noteId": None,
                "reason": "latitude is outside -90..90",
            },
        ],
    },
    "Category": CATEGORY,
    "CategoryCreate": {"name": "Parks", "contentLanguage": "en", "parentCategoryId": CATEGORY_ID},
    "CategoryMove": {"name": "City parks", "parentCategoryId": CATEGORY_ID},
    "CategoryNode": {**CHILD_CATEGORY, "childCategoryCount": 0},
    "CategorySection": {
        "contentLanguage": "en",
        "rootCategories": [{**CATEGORY, "childCategoryCount": 1}],
    },
    "CategoryTreeNode": {
        **CATEGORY,
        "childCategoryCount": 1,
        "children": [{**CHILD_CATEGORY, "childCategoryCount": 0, "children": []}],
    },
}

# --- teams -----------------------------------------------------------------------------------

TEAM_SETTINGS = {
    "title": "Night Walkers Berlin",
    "description": "We walk the city after dark, every Friday.",
    "joinPolicy": "RequestsAllowed",
    "pageVisibility": "Public",
    "defaultNoteVisibility": "Private",
    "contentLanguage": "en",
    "externalLinkUrl": "https://example.com/night-walkers",
    "externalLinkDescription": "Our walks",
}
MEMBERSHIP = {
    "membershipId": KIM_MEMBERSHIP_ID,
    "teamId": TEAM_ID,
    "userName": "kim_finds",
    "status": "Member",
    "isAdmin": False,
    "createdUtc": "2026-11-20T18:30:12.004Z",
    "updatedUtc": "2026-11-21T08:02:51.377Z",
}
TEAMS = {
    "Team": {
        "teamId": TEAM_ID,
        "name": "Night Walkers",
        "teamSlug": "night-walkers",
        **TEAM_SETTINGS,
        "memberCount": 2,
        "createdUtc": "2026-11-20T18:25:40.318Z",
        "updatedUtc": "2026-11-20T18:25:40.318Z",
        "lastActivityUtc": "2026-11-23T09:12:05.661Z",
        "membershipId": ADA_MEMBERSHIP_ID,
        "membershipStatus": "Member",
        "role": "Admin",
    },
    "TeamCreate": {"name": "Night Walkers", **TEAM_SETTINGS},
    "TeamSettings": {"name": "Night Walkers", "joinPolicy": "InviteOnly"},
    "InviteLink": {
        "inviteLinkId": INVITE_LINK_ID,
        "teamId": TEAM_ID,
        "teamName": "Night Walkers",
        "teamSlug": "night-walkers",
        "code": "yqa4kj" + "*" * 20,  # an invite code is a credential: masked
        "createdByDisplayName": "Ada L.",
        "createdByCurrentUser": True,
        "inviterIsCurrentlyAdmin": True,
        "isSingleUse": False,
        "createdUtc": "2026-11-21T07:59:30.842Z",
    },
    "InviteLinkCreate": {"isSingleUse": True},
    "JoinResult": {"teamSlug": "night-walkers", "membershipStatus": "RequestingMembership"},
    "Invite": {"userName": "kim_finds"},
    "Membership": MEMBERSHIP,
}

# --- trackables ------------------------------------------------------------------------------

GROUP_REF = {
    "trackableGroupId": GROUP_ID,
    "name": "Lake District Paddles",
    "slug": "lake_district_paddles",
}
TRACKABLE = {
    "trackableId": TRACKABLE_ID,
    "publicCode": PUBLIC_CODE,
    "name": "Red kayak paddle",
    "description": "Found it at the lake? Take it on to the next one.",
    "statusMessage": "Heading north",
    "visibility": "AlwaysVisibleToEveryone",
    "isActivated": True,
    "activatedUtc": "2026-11-22T14:03:11.311Z",
    "createdUtc": "2026-11-22T13:58:45.244Z",
    "lastActivityUtc": "2026-11-23T08:47:37.427Z",
    "group": GROUP_REF,
    "ownerUserName": "ada_walks",
    "teamId": None,
    "teamName": None,
    "externalLinkUrl": "https://example.com/story?trackableCode=LN-4K7Q2M",
    "externalLinkDescription": "The paddle's story",
    "externalLinkAppendPublicTrackableCode": True,
    "canManage": True,
    "journeyStatistics": {
        "distanceKm": 58.214,
        "stopCount": 3,
        "countries": ["CH", "DE"],
        "firstStopUtc": "2026-11-22T14:03:11.311Z",
        "lastStopUtc": "2026-11-23T08:47:37.427Z",
        "firstSeenOn": "2026-11-22",
        "lastSeenOn": "2026-11-23",
    },
}
STOP = {
    "journeyStopId": STOP_ID,
    "trackableId": TRACKABLE_ID,
    "coordinateId": COORDINATE_ID,
    "latitude": 47.3769,
    "longitude": 8.5417,
    "precision": "exact",
    "associatedUtc": "2026-11-23T08:47:37.427Z",
    "observedUtc": "2026-11-23T08:30:00.000Z",
    "isLocationOnly": False,
    "isAnonymous": False,
    "canDelete": True,
    "canConvertToNote": False,
    "locationLabel": "Zürich, Switzerland",
    "creatorDisplayText": "Kim",
    "creatorProfileUserName": "kim_finds",
    "currentNotesAtCoordinate": [
        {
            "noteId": NOTE_ID,
            "title": "Boat house jetty",
            "contentLanguage": "en",
            "thumbnailUrl": f"/Images/Thumbnail/{IMAGE_ID}-64.jpg",
            "isContentOmitted": False,
        }
    ],
}
ACTIVE_SESSION = {
    "trackableId": TRACKABLE_ID,
    "publicCode": PUBLIC_CODE,
    "name": "Red kayak paddle",
    "isActivated": True,
    "statusMessage": "Heading north",
    "unlockedUtc": "2026-11-23T08:45:02.292Z",
}
TRACKABLE_COMMENT = {
    "trackableCommentId": TRACKABLE_COMMENT_ID,
    "trackableId": TRACKABLE_ID,
    "body": "Found it on a bench by the lake.",
    "isAnonymous": False,
    "authorDisplayText": "Kim",
    "authorProfileUserName": "kim_finds",
    "createdUtc": "2026-11-23T08:49:37.394Z",
    "editedUtc": None,
    "observedUtc": "2026-11-23T08:30:00.000Z",
    "canEdit": True,
    "canDelete": True,
}
TRACKABLES = {
    "Trackable": TRACKABLE,
    "MyTrackable": {**TRACKABLE, "relation": "Activated"},
    "NoteTrackable": {
        "trackableId": TRACKABLE_ID,
        "publicCode": PUBLIC_CODE,
        "name": "Red kayak paddle",
        "lastActivityUtc": "2026-11-23T08:47:37.427Z",
        "attachedUtc": "2026-11-23T08:50:12.670Z",
    },
    "AttachTrackables": {"selectedActiveTrackableIds": [TRACKABLE_ID]},
    "TrackableActivate": {
        "name": "Red kayak paddle",
        "description": "Found it at the lake? Take it on to the next one.",
        "statusMessage": "Heading north",
        "teamId": None,
        "initialJourneyStopLatitude": 47.3769,
        "initialJourneyStopLongitude": 8.5417,
    },
    "TrackableActivated": {
        "trackableId": TRACKABLE_ID,
        "publicCode": PUBLIC_CODE,
        "name": "Red kayak paddle",
        "description": "Found it at the lake? Take it on to the next one.",
        "statusMessage": "Heading north",
        "ownerUserId": ADA_ID,
        "teamId": None,
        "trackableGroupId": GROUP_ID,
        "isActivated": True,
        "activatedUtc": "2026-11-22T14:03:11.311Z",
        "lastActivityUtc": "2026-11-22T14:03:11.319Z",
        "externalLinkUrl": None,
        "externalLinkDescription": "",
        "externalLinkAppendPublicTrackableCode": False,
        "initialJourneyStopId": STOP_ID,
    },
    "TrackableGroupAttach": {"trackableGroupId": GROUP_ID},
    "TrackableGroupMembership": {"trackableId": TRACKABLE_ID, "group": GROUP_REF},
    "TrackableWatchState": {"watching": True, "changed": True},
    "MyTrackableWatches": {"trackables": [TRACKABLE_ID], "groups": [GROUP_ID]},
    "ActiveSession": ACTIVE_SESSION,
    "ActiveLanding": {
        "trackableId": SECOND_TRACKABLE_ID,
        "publicCode": "LN-95HENK",
        "name": "Summer Hike 2026",
        "description": "",
        "isActivated": False,
        "activationRequired": True,
        "isGrouped": True,
        "group": {**GROUP_REF, "name": "Summer Hike 2026", "slug": "summer_hike_2026"},
        "activationContexts": [
            {"kind": "Personal"},
            {"kind": "Team", "teamId": TEAM_ID, "teamName": "Night Walkers"},
        ],
        "groupItems": [
            {
                "trackableId": SECOND_TRACKABLE_ID,
                "publicCode": "LN-95HENK",
                "name": "Summer Hike 2026",
                "isActivated": False,
            }
        ],
        "statusMessage": "",
    },
    "StatusMessage": {"statusMessage": "Found it at the trailhead, taking it north."},
    "TrackableComment": TRACKABLE_COMMENT,
    "TrackableCommentCreate": {
        "body": "Found it on a bench by the lake.",
        "displayName": "Kim",
        "clientMutationId": MUTATION_ID,
        "observedUtc": "2026-11-23T08:30:00.000Z",
    },
    "TrackableCommentEdit": {"body": "Found it on a bench by the lake, next to the kiosk."},
    "JourneyStop": STOP,
    "JourneyStopCreate": {
        "latitude": 47.3769,
        "longitude": 8.5417,
        "displayName": "Kim",
        "clientMutationId": MUTATION_ID,
        "observedUtc": "2026-11-23T08:30:00.000Z",
    },
    "TrackableGroupCreated": {
        "trackableGroupId": GROUP_ID,
        "name": "Summer Hike 2026",
        "slug": "summer_hike_2026",
        "description": "Ten bugs for the summer trail.",
        "defaultTrackableTitle": "Summer hike bug",
        "defaultTrackableDescription": "Take me to the next hut.",
        "defaultExternalLinkUrl": "https://example.com/summer",
        "defaultExternalLinkDescription": "The trail",
        "defaultExternalLinkAppendPublicTrackableCode": False,
        "defaultStatusMessage": "Waiting at the start",
        "visibility": "AlwaysVisibleToEveryone",
        "teamId": None,
        "trackableCount": 1,
        "createdUtc": "2026-11-22T13:58:45.244Z",
        "lastActivityUtc": "2026-11-22T13:58:45.244Z",
        "items": [
            {
                "trackableId": SECOND_TRACKABLE_ID,
                "publicCode": "LN-95HENK",
                "secretCode": MASKED_CODE,
                "scanUrl": MASKED_SCAN_URL,
                "qrPayload": MASKED_SCAN_URL,
                "name": "Summer hike bug",
            }
        ],
    },
    "TrackableLabels": {
        "layout": "avery-l7160",
        "paper": "a4",
        "text": "Found me? Scan the code and send me on.",
        "language": "en",
        "skipLabels": 0,
        "items": [
            {"trackableId": TRACKABLE_ID, "secretCode": MASKED_CODE, "scanUrl": MASKED_SCAN_URL},
            {
                "trackableId": SECOND_TRACKABLE_ID,
                "secretCode": MASKED_CODE,
                "qrToken": "*" * 16,
                "text": "Summer hike bug 2 of 10",
            },
        ],
    },
}
LABELS_REFUSED = {
    "403": {
        "type": "about:blank",
        "title": "Forbidden",
        "status": 403,
        "detail": "Item 1: the code does not belong to this trackable. Nothing was printed.",
        "code": Code.TRACKABLE_ACCESS_CODE_INVALID,
        "refusedItems": [
            {"index": 1, "code": Code.TRACKABLE_ACCESS_CODE_INVALID, "fields": ["qrToken"]}
        ],
    },
    "404": {
        "type": "about:blank",
        "title": "Not Found",
        "status": 404,
        "detail": "Item 0: no trackable you can see has this id; item 1: the code does not "
        "belong to this trackable. Nothing was printed.",
        "code": Code.TRACKABLE_NOT_FOUND,
        "refusedItems": [
            {"index": 0, "code": Code.TRACKABLE_NOT_FOUND, "fields": []},
            {"index": 1, "code": Code.TRACKABLE_ACCESS_CODE_INVALID, "fields": ["secretCode"]},
        ],
    },
}

# --- images and compliance -------------------------------------------------------------------


def image(target_type: int, parent_field: str, parent_id: str) -> dict[str, Any]:
    """An image record of one parent (targetType: 0 profile, 1 note, 2 team, 3 trackable,
    4 trackable group, 5 trackable comment, 6 journey stop)."""
    return {
        "contentImageId": IMAGE_ID,
        "targetType": target_type,
        parent_field: parent_id,
        "originalWidth": 4032,
        "originalHeight": 3024,
        "createdUtc": "2026-11-23T09:45:15.984Z",
        **{
            f"{name.lower()}Url": f"/Images/{name}/{IMAGE_ID}-{size}.jpg"
            for name, size in (("Thumbnail", 64), ("Small", 306), ("Medium", 612), ("Large", 1024))
        },
    }


REPORT = {
    "contentReportId": REPORT_ID,
    "reporterUserId": KIM_ID,
    "pageType": 2,
    "pageTypeLabel": "Note page",
    "contentType": 5,
    "contentTypeLabel": "Title and content",
    "status": 0,
    "statusLabel": "Reported",
    "pageTitle": "Old oak by the gate",
    "pageUrl": f"/api/public/notes/{NOTE_ID}",
    "pageReference": NOTE_ID,
    "contentLabel": "Note text",
    "contentReference": "",
    "contentPreview": "Buy cheap watches at ...",
    "reportTitle": "Spam",
    "reportExplanation": "An advert, not a note.",
    "resolutionText": "",
    "reporterDisplayName": "Kim",
    "reviewerDisplayName": None,
    "createdUtc": "2026-11-23T10:05:15.836Z",
    "reviewedUtc": None,
    "ticketNumber": None,
}
COMPLIANCE = {
    "Image": image(1, "noteId", NOTE_ID),
    "ImageEnvelope": {"image": image(1, "noteId", NOTE_ID)},
    "ImageUploadForm": {"file": "(the image file: oak.jpg)"},
    "ReportCreate": {
        "pageType": 2,
        "contentType": 5,
        "pageTitle": "Old oak by the gate",
        "pageUrl": f"/api/public/notes/{NOTE_ID}",
        "pageReference": NOTE_ID,
        "contentLabel": "Note text",
        "contentPreview": "Buy cheap watches at ...",
        "reportTitle": "Spam",
        "reportExplanation": "An advert, not a note.",
    },
    "ContentReport": REPORT,
    "ReportReview": {"status": 2, "resolutionText": "Removed the advert and warned its owner."},
    "ErrorReport": {
        "ticketNumber": TICKET,
        "userExplanation": "I saved a note and the app showed an error.",
        "trackInSupportTickets": True,
        "clientContext": {"appVersion": "1.4.2", "os": "Android 15"},
        "pageMarkerType": "App screen",
        "pageMarker": "NoteEditor",
        "requestCulture": "en-US",
        "requestUrl": "/api/notes/mine",
        "httpMethod": "POST",
        "responseStatusCode": 500,
    },
    "ErrorReportResult": {
        "ticketNumber": TICKET,
        "usedExistingTicket": True,
        "explanationSaved": True,
        "trackedInSupportTickets": True,
        "trackedContentReportId": "9b2e4f10-6c3a-4d8e-b1f2-0a9c8d7e6f5a",
    },
}

# --- problems --------------------------------------------------------------------------------

# `code` values: codes of the registry (app.error_codes); a test checks each is there.
PROBLEMS: dict[int, dict[str, Any]] = {
    400: {
        "detail": "Invalid value for: latitude, title.",
        "code": Code.VALIDATION_FAILED,
        "errors": {
            "title": ["Missing data for required field."],
            "latitude": ["Must be greater than or equal to -90 and less than or equal to 90."],
        },
    },
    401: {
        "detail": "A bearer access token is required.",
        "code": Code.AUTHENTICATION_REQUIRED,
    },
    403: {
        "detail": "Only the note's owner or a team admin may do this.",
        "code": Code.FORBIDDEN,
    },
    404: {"detail": "Note not found.", "code": Code.NOT_FOUND},
    405: {
        "detail": "GET is not allowed on /api/images/6dc18b0b-d857-4f84-8c06-e4332b37e284.",
        "code": Code.METHOD_NOT_ALLOWED,
    },
    409: {
        "detail": "kim_finds is already a member of this team.",
        "code": Code.CONFLICT,
    },
    413: {
        "detail": "The request body is larger than this server accepts (22020096 bytes).",
        "code": Code.PAYLOAD_TOO_LARGE,
    },
    414: {
        "detail": "The request line (method, path and query) is longer than this server accepts.",
        "code": Code.URI_TOO_LONG,
    },
    415: {
        "detail": "Send the request body as application/json.",
        "code": Code.UNSUPPORTED_MEDIA_TYPE,
    },
    429: {
        "detail": "20 per 1 minute",
        "code": Code.RATE_LIMITED,
    },
    431: {
        "detail": "The request's headers are more or larger than this server accepts.",
        "code": Code.REQUEST_HEADERS_TOO_LARGE,
    },
    500: {
        "detail": "Something went wrong on our side. Quote the ticket number when you "
        "contact support.",
        "code": Code.INTERNAL_ERROR,
        "ticketNumber": TICKET,
    },
    503: {
        "detail": "The database is not reachable right now. Try again shortly.",
        "code": Code.DATABASE_UNAVAILABLE,
    },
}


def problem(status: int) -> dict[str, Any]:
    """A problem-details example for `status` (a generic one where none is written)."""
    fields = PROBLEMS.get(status, {"detail": "The request failed."})
    return {"type": "about:blank", "title": status_title(status), "status": status, **fields}


def coded_problem(status: int, code: str, detail: str, **extra: Any) -> dict[str, Any]:
    """A problem-details example of one registry `code`, for a route's own response."""
    example = {"type": "about:blank", "title": status_title(status), "status": status}
    example["detail"] = detail
    return {**example, "code": code, **extra}


# --- the inbox -------------------------------------------------------------------------------

NOTIFICATION_ID = "4f1c9e2a-7b3d-4c58-9e06-2a8d5b7c1f34"

NOTIFICATIONS = {
    "Notification": {
        "notificationId": NOTIFICATION_ID,
        "eventType": "trackable.journey_stop.added",
        "createdUtc": "2026-11-23T09:15:00.000Z",
        "readUtc": None,
        "trackableId": TRACKABLE_ID,
        "groupId": GROUP_ID,
        "noteId": None,
        "teamId": None,
        "text": f"{PUBLIC_CODE} (Red kayak paddle) has a new journey stop.",
    },
    "UnreadCount": {"unreadCount": 3},
    "MarkRead": {"upTo": NOTIFICATION_ID},
    "NotificationSettings": {"mail": "daily", "language": "de"},
    "NotificationSettingsUpdate": {"mail": "each"},
    "AreaWatch": {
        "areaWatchId": "5e7d1c93-2b4a-4f68-9d0e-3c8b6a1f2e47",
        "minLatitude": 47.3,
        "minLongitude": 8.4,
        "maxLatitude": 47.5,
        "maxLongitude": 8.7,
        "contentLanguage": "de",
        "createdUtc": "2026-11-28T10:00:00.000Z",
    },
    "AreaWatchCreate": {
        "minLatitude": 47.3,
        "minLongitude": 8.4,
        "maxLatitude": 47.5,
        "maxLongitude": 8.7,
        "contentLanguage": "de",
    },
}


# --- webhooks --------------------------------------------------------------------------------

WEBHOOK_ID = "0d6f4b3e-5a1c-4e7b-9c2d-8f3a6b1e7c45"
DELIVERY_ID = "7c2e9a41-3b5d-4f86-a1e0-6d9b2c8f4a17"
EVENT_ID = "b3a8d1f2-6c4e-4a97-8e25-1f7c9d0b3e68"

WEBHOOK_SENT_AT = "2026-11-28T10:05:00.000Z"
WEBHOOK_TRACKABLE_DATA = {
    "eventId": EVENT_ID,
    "trackableId": TRACKABLE_ID,
    "publicCode": PUBLIC_CODE,
    "name": "Red kayak paddle",
    "groupId": GROUP_ID,
}
WEBHOOK_TEAM_DATA = {"eventId": EVENT_ID, "teamId": TEAM_ID, "teamName": "Night Walkers"}

WEBHOOK = {
    "webhookId": WEBHOOK_ID,
    "url": "https://hooks.example.org/location-notes",
    "eventTypes": ["trackable.journey_stop.added", "trackable.comment.written"],
    "isEnabled": True,
    "teamId": None,
    "createdUtc": "2026-11-28T10:00:00.000Z",
    "updatedUtc": "2026-11-28T10:00:00.000Z",
    "failingSinceUtc": None,
    "disabledReason": None,
    "previousSecretExpiresUtc": None,
    "pausedUntilUtc": None,
}

WEBHOOKS = {
    "Webhook": WEBHOOK,
    "WebhookCreated": {**WEBHOOK, "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
    "WebhookCreate": {
        "url": "https://hooks.example.org/location-notes",
        "eventTypes": ["trackable.journey_stop.added", "trackable.comment.written"],
    },
    "WebhookUpdate": {"isEnabled": True},
    "WebhookDelivery": {
        "deliveryId": DELIVERY_ID,
        "eventType": "trackable.journey_stop.added",
        "eventId": EVENT_ID,
        "state": "succeeded",
        "createdUtc": "2026-11-28T10:05:00.000Z",
        "attemptCount": 2,
        "attempts": [
            {
                "attemptedUtc": "2026-11-28T10:05:01.000Z",
                "succeeded": False,
                "statusCode": 503,
                "latencyMs": 41,
                "responseExcerpt": "Service Unavailable",
                "error": "The endpoint answered HTTP 503.",
            },
            {
                "attemptedUtc": "2026-11-28T10:05:40.000Z",
                "succeeded": True,
                "statusCode": 204,
                "latencyMs": 18,
                "responseExcerpt": "",
                "error": None,
            },
        ],
    },
    # The `data` of each kind of delivery (the document's `webhooks`), by its schema's name.
    "WebhookTrackableData": WEBHOOK_TRACKABLE_DATA,
    "WebhookTrackableCommentData": {**WEBHOOK_TRACKABLE_DATA, "commentId": TRACKABLE_COMMENT_ID},
    "WebhookJourneyStopData": {**WEBHOOK_TRACKABLE_DATA, "stopId": STOP_ID},
    "WebhookTrackableNoteData": {**WEBHOOK_TRACKABLE_DATA, "noteId": NOTE_ID},
    "WebhookGroupItemData": WEBHOOK_TRACKABLE_DATA,
    "WebhookTeamNoteData": {**WEBHOOK_TEAM_DATA, "noteId": TEAM_NOTE_ID},
    "WebhookMembershipData": {**WEBHOOK_TEAM_DATA, "membershipId": KIM_MEMBERSHIP_ID},
    "WebhookNotePublishedData": {
        "eventId": EVENT_ID,
        "noteId": NOTE_ID,
        "contentLanguage": "en-US",
    },
    "WebhookTestData": {"webhookId": WEBHOOK_ID},
}


# --- data export -----------------------------------------------------------------------------

EXPORT_ID = "3b8f2c71-5d0e-4a69-9c14-7e2a6d8b0f53"

PRIVACY = {
    "AccountExport": {
        "exportId": EXPORT_ID,
        "state": "done",
        "createdUtc": "2026-12-02T08:00:00.000Z",
        "finishedUtc": "2026-12-02T08:00:41.512Z",
        "expiresUtc": "2026-12-03T08:00:41.512Z",
        "sizeBytes": 4821377,
        "downloadUrl": f"/api/account/export/{EXPORT_ID}/download",
    },
}


COMPONENTS = {
    "ReusedTagProblem": {
        "type": "about:blank",
        "title": "Conflict",
        "status": 409,
        "detail": "This clientMutationId was already used for a different request.",
        "code": Code.CLIENT_MUTATION_ID_REUSED,
        "originalId": TRACKABLE_COMMENT_ID,
    },
    "LinkProblem": {
        "type": "about:blank",
        "title": "Bad Request",
        "status": 400,
        "detail": "The destination answered HTTP 404.",
        "code": Code.LINK_VERIFICATION_FAILED,
        "supportUrl": "/help/external-links",
        "upstreamStatusCode": 404,
    },
}

# Every body schema's example, by the schema's component name.
SCHEMAS: dict[str, Any] = {
    **IDENTITY,
    **SYSTEM,
    **NOTES,
    **TEAMS,
    **TRACKABLES,
    **COMPLIANCE,
    **NOTIFICATIONS,
    **WEBHOOKS,
    **PRIVACY,
    **COMPONENTS,
}

GPX = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<gpx xmlns="http://www.topografix.com/GPX/1/1" version="1.1" '
    'creator="Location Notes Service">\n'
    '  <wpt lat="52.4862" lon="13.4036">\n'
    "    <name>Old oak by the gate</name>\n"
    "    <desc>A hollow oak, big enough to sit in. Kids love it.</desc>\n"
    "  </wpt>\n"
    "</gpx>\n"
)

JOURNEY_GPX = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<gpx xmlns="http://www.topografix.com/GPX/1/1" version="1.1" '
    'creator="Location Notes Service">\n'
    "  <metadata><name>Red kayak paddle</name></metadata>\n"
    "  <trk>\n"
    "    <name>Red kayak paddle</name>\n"
    "    <trkseg>\n"
    '      <trkpt lat="47.3769" lon="8.5417">\n'
    "        <time>2026-11-22T14:03:11.311Z</time>\n"
    "        <name>Zürich, Switzerland</name>\n"
    "        <desc>Kim</desc>\n"
    "      </trkpt>\n"
    '      <trkpt lat="47.6" lon="9.5">\n'
    "        <time>2026-11-23T08:47:37.427Z</time>\n"
    "        <name>Friedrichshafen, Germany</name>\n"
    "        <desc>Anonymous finder (precision: about10km)</desc>\n"
    "      </trkpt>\n"
    "    </trkseg>\n"
    "  </trk>\n"
    "</gpx>\n"
)
JOURNEY_GEOJSON = {
    "type": "FeatureCollection",
    "features": [
        {
            "type": "Feature",
            "geometry": {"type": "LineString", "coordinates": [[8.5417, 47.3769], [9.5, 47.6]]},
            "properties": {
                "trackableId": TRACKABLE_ID,
                "publicCode": PUBLIC_CODE,
                "name": "Red kayak paddle",
                "distanceKm": 76.883,
                "stopCount": 2,
                "countries": ["CH", "DE"],
            },
        },
        {
            "type": "Feature",
            "id": STOP_ID,
            "geometry": {"type": "Point", "coordinates": [8.5417, 47.3769]},
            "properties": {
                "journeyStopId": STOP_ID,
                "coordinateId": COORDINATE_ID,
                "associatedUtc": "2026-11-22T14:03:11.311Z",
                "observedUtc": None,
                "precision": "exact",
                "locationLabel": "Zürich, Switzerland",
                "countryCode": "CH",
                "isLocationOnly": True,
                "isAnonymous": False,
                "creatorDisplayText": "Kim",
            },
        },
    ],
}


def _membership(status: str, **fields: Any) -> dict[str, Any]:
    return {**MEMBERSHIP, "status": status, **fields}


# Where an operation's body differs from its schema's example: "METHOD /path" -> status
# ("request" for the request body) -> example.
OPERATIONS: dict[str, dict[str, Any]] = {
    "GET /api/notes/mine/gpx": {"200": GPX},
    "POST /api/account/export": {
        "202": {
            **PRIVACY["AccountExport"],
            "state": "queued",
            "finishedUtc": None,
            "expiresUtc": None,
            "sizeBytes": None,
            "downloadUrl": None,
        }
    },
    "GET /api/teams/{teamId}/notes/gpx": {"200": GPX},
    "GET /api/trackables/{trackableId}/journey.gpx": {"200": JOURNEY_GPX},
    "GET /api/trackables/{trackableId}/journey.geojson": {"200": JOURNEY_GEOJSON},
    "GET /api/teams/{teamId}/notes": {"200": [TEAM_NOTE]},
    "POST /api/teams/{teamId}/notes": {"201": TEAM_NOTE},
    "POST /api/teams/{teamId}/notes/{noteId}/move": {"200": TEAM_NOTE},
    "GET /api/notes/public/nearby": {"200": [NOTE]},
    "POST /api/teams/{teamId}/memberships/request": {
        "200": _membership("RequestingMembership", updatedUtc=MEMBERSHIP["createdUtc"])
    },
    "POST /api/teams/{teamId}/memberships/invite": {
        "200": _membership("Invited", updatedUtc=MEMBERSHIP["createdUtc"])
    },
    "POST /api/teams/{teamId}/memberships/{membershipId}/refuse": {"200": _membership("Refused")},
    "POST /api/teams/{teamId}/memberships/{membershipId}/deny": {"200": _membership("Denied")},
    "POST /api/teams/{teamId}/memberships/{membershipId}/promote-admin": {
        "200": _membership("Member", isAdmin=True)
    },
    "GET /api/teams/{teamId}/memberships": {
        "200": [
            _membership(
                "Member", membershipId=ADA_MEMBERSHIP_ID, userName="ada_walks", isAdmin=True
            ),
            MEMBERSHIP,
        ]
    },
    "DELETE /api/trackables/{trackableId}/watch": {"200": {"watching": False, "changed": True}},
    "DELETE /api/trackables/groups/{trackableGroupId}/watch": {
        "200": {"watching": False, "changed": True}
    },
    "DELETE /api/trackables/{trackableId}/group": {
        "200": {"trackableId": TRACKABLE_ID, "group": None}
    },
    "POST /api/compliance/reports": {"200": {**REPORT, "reportExplanation": ""}},
    "PUT /api/compliance/reports/{contentReportId}": {
        "200": {
            **REPORT,
            "status": 2,
            "statusLabel": "Resolved",
            "resolutionText": "Removed the advert and warned its owner.",
            "reviewerDisplayName": "Support team",
            "reviewedUtc": "2026-11-23T11:30:00.000Z",
        }
    },
    "POST /api/images/profiles": {"201": {"image": image(0, "userId", ADA_ID)}},
    "GET /api/images/profiles/{userId}": {"200": [image(0, "userId", ADA_ID)]},
    "POST /api/images/teams/{teamId}": {"201": {"image": image(2, "teamId", TEAM_ID)}},
    "GET /api/images/teams/{teamId}": {"200": [image(2, "teamId", TEAM_ID)]},
    "POST /api/images/trackables/{trackableId}": {
        "201": {"image": image(3, "trackableId", TRACKABLE_ID)}
    },
    "GET /api/images/trackables/{trackableId}": {"200": [image(3, "trackableId", TRACKABLE_ID)]},
    "POST /api/images/trackable-groups/{trackableGroupId}": {
        "201": {"image": image(4, "trackableGroupId", GROUP_ID)}
    },
    "GET /api/images/trackable-groups/{trackableGroupId}": {
        "200": [image(4, "trackableGroupId", GROUP_ID)]
    },
    "POST /api/trackables/labels": LABELS_REFUSED,
    "POST /api/images/trackable-comments/{commentId}": {
        "201": {"image": image(5, "trackableCommentId", TRACKABLE_COMMENT_ID)}
    },
    "GET /api/images/trackable-comments/{commentId}": {
        "200": [image(5, "trackableCommentId", TRACKABLE_COMMENT_ID)]
    },
    "POST /api/images/journey-stops/{journeyStopId}": {
        "201": {"image": image(6, "journeyStopId", STOP_ID)}
    },
    "GET /api/images/journey-stops/{journeyStopId}": {"200": [image(6, "journeyStopId", STOP_ID)]},
}
