"""What a data export holds (GDPR art. 15 and 20), as data: each JSON file of the ZIP, the
parts it is made of (a table and which of its rows are the user's), and the reviewed lists
of what is left out, each with its reason. The archive writer (`archive`) and the README
inside the ZIP both read these tables, and tests/services/privacy/test_completeness.py
checks them against every table of the models: a column that refers to a user must be
exported here or be listed in `NOT_EXPORTED` with a reason.

A new kind of record is one `Part` in a file here (or a new `JsonFile`), and its secret
columns one line in `EXCLUDED`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, and_, select
from sqlalchemy.sql.elements import ColumnElement

from app.models.budget import BudgetSpend
from app.models.category import Category
from app.models.compliance import ContentReport
from app.models.event import AreaWatch, Event, Notification
from app.models.identity import EmailCode, RefreshToken, WebsiteSession
from app.models.image import ContentImage, ImageTarget
from app.models.note import Note, NoteComment
from app.models.notification_mail import NotificationDigest, NotificationMail, NotificationSettings
from app.models.sync import SyncDeparture
from app.models.team import Team, TeamInviteLink, TeamMembership
from app.models.trackable import (
    JourneyStop,
    Trackable,
    TrackableComment,
    TrackableGroup,
    TrackableGroupWatch,
    TrackableUnlock,
    TrackableWatch,
    note_trackables,
)
from app.models.user import User
from app.models.webhook import WebhookAttempt, WebhookDelivery, WebhookSubscription

Selection = Callable[[uuid.UUID], ColumnElement[bool]]


def table_of(model: Any) -> Table:
    table = model if isinstance(model, Table) else model.__table__
    if not isinstance(table, Table):
        raise TypeError(f"{model!r} is not a table or a mapped class of one")
    return table


# A part exports every column of its table except those in EXCLUDED (secrets and internals), unless
# it names its columns: a column added to an exported table is exported by default, and the
# completeness test makes a column whose name looks like a secret (hash, secret, token, ...) be
# reviewed: excluded, or listed in REVIEWED_NOT_SECRET. Its rows are those where one of its `by`
# columns names the user (a text column compares the id as text), or that `also` selects (rows of
# the user's rows: the teams of their memberships, the events of their inbox).
@dataclass(frozen=True)
class Part:
    """One list in a JSON file: rows of `table` that are the user's."""

    key: str  # the list's name in the file (camelCase)
    table: Table
    about: str
    by: tuple[str, ...] = ()  # columns naming the user
    also: Selection | None = None  # rows selected otherwise
    # Columns that `also` reads the user from (for the completeness check).
    refers: tuple[str, ...] = ()
    columns: tuple[str, ...] | None = None  # only these columns (default: all not EXCLUDED)


def part(key: str, model: Any, about: str, **options: Any) -> Part:
    return Part(key, table_of(model), about, **options)


@dataclass(frozen=True)
class JsonFile:
    name: str
    about: str
    parts: tuple[Part, ...]


# --- selections of rows that hang off the user's rows ---------------------------------------


def _in_my_notes(user_id: uuid.UUID) -> ColumnElement[bool]:
    return note_trackables.c.note_id.in_(select(Note.id).where(Note.owner_user_id == user_id))


def _teams_of_my_memberships(user_id: uuid.UUID) -> ColumnElement[bool]:
    return Team.id.in_(select(TeamMembership.team_id).where(TeamMembership.user_id == user_id))


def _my_profile_images(user_id: uuid.UUID) -> ColumnElement[bool]:
    return and_(
        ContentImage.target_type == int(ImageTarget.PROFILE), ContentImage.parent_id == user_id
    )


def _events_of_my_inbox(user_id: uuid.UUID) -> ColumnElement[bool]:
    return Event.id.in_(select(Notification.event_id).where(Notification.user_id == user_id))


def _my_webhook_ids(user_id: uuid.UUID) -> Any:
    return select(WebhookSubscription.id).where(WebhookSubscription.owner_user_id == user_id)


def _deliveries_of_my_webhooks(user_id: uuid.UUID) -> ColumnElement[bool]:
    return WebhookDelivery.subscription_id.in_(_my_webhook_ids(user_id))


def _attempts_of_my_webhooks(user_id: uuid.UUID) -> ColumnElement[bool]:
    deliveries = select(WebhookDelivery.id).where(
        WebhookDelivery.subscription_id.in_(_my_webhook_ids(user_id))
    )
    return WebhookAttempt.delivery_id.in_(deliveries)


# --- the files ------------------------------------------------------------------------------

_TARGET_TYPES = ", ".join(f"{target.value} {target.name.lower()}" for target in ImageTarget)

FILES: tuple[JsonFile, ...] = (
    JsonFile(
        "account.json",
        "The account: its settings, the email codes still waiting to be used, and the uses "
        "of the per-account limits that still count.",
        (
            part("account", User, "The account itself (one record).", by=("id",)),
            part(
                "pendingEmailCodes",
                EmailCode,
                "Confirmation, email change and password reset codes mailed and not yet "
                "used: to which address, what for, until when (never the code).",
                by=("user_id",),
            ),
            part(
                "limitUses",
                BudgetSpend,
                "Uses of the per-account limits (images uploaded a day, trackables made "
                "an hour, secret codes rotated or missed, exports asked for) within their "
                "windows.",
                by=("subject",),
            ),
        ),
    ),
    JsonFile(
        "sessions.json",
        "Where the account is signed in: one record per refresh token issued by a sign-in "
        "in the app (which device, when it signed in, when the token was made, used, ends or "
        "was revoked), and one per browser signed in on the website.",
        (
            part("sessions", RefreshToken, "Sign-in sessions (refresh tokens).", by=("user_id",)),
            part(
                "websiteSessions",
                WebsiteSession,
                "Browsers signed in on the website: which device, since when, last used when "
                "(noted at most every five minutes).",
                by=("user_id",),
            ),
        ),
    ),
    JsonFile(
        "notes.json",
        "Every note the account wrote, personal and in teams, deleted ones included "
        "(`isDeleted`: kept so that synced devices learn of the deletion), and which "
        "trackables are attached to them.",
        (
            part("notes", Note, "The notes.", by=("owner_user_id",)),
            part(
                "attachedTrackables",
                note_trackables,
                "Which trackable is attached to which of these notes, since when.",
                also=_in_my_notes,
            ),
        ),
    ),
    JsonFile(
        "note_comments.json",
        "Comments the account wrote on note pages.",
        (part("comments", NoteComment, "The comments.", by=("author_user_id",)),),
    ),
    JsonFile(
        "categories.json",
        "The account's personal categories (its folder tree of notes), deleted ones included.",
        (part("categories", Category, "The categories.", by=("owner_user_id",)),),
    ),
    JsonFile(
        "teams.json",
        "The account's standing in teams (memberships, requests, invitations), those "
        "teams, the invite links it made or used, and when its access to a team changed.",
        (
            part(
                "memberships",
                TeamMembership,
                "Memberships, requests, invitations.",
                by=("user_id",),
            ),
            part(
                "teams",
                Team,
                "The teams those memberships are in.",
                also=_teams_of_my_memberships,
            ),
            part(
                "inviteLinks",
                TeamInviteLink,
                "Invite links the account made, or joined a team by (never the link's code).",
                by=("created_by_user_id", "used_by_user_id"),
            ),
            part(
                "teamAccessChanges",
                SyncDeparture,
                "When the account's access to a team began or ended, as synced devices are told.",
                by=("user_id",),
            ),
        ),
    ),
    JsonFile(
        "trackables.json",
        "Trackables the account made or activated, its trackable groups, and the "
        "trackables it unlocked with a secret code or QR link (never a code).",
        (
            part(
                "trackables",
                Trackable,
                "Trackables made (`createdByUserId`) or activated and owned (`ownerUserId`).",
                by=("owner_user_id", "created_by_user_id"),
            ),
            part("groups", TrackableGroup, "Trackable groups.", by=("owner_user_id",)),
            part("unlocks", TrackableUnlock, "Trackables unlocked.", by=("user_id",)),
        ),
    ),
    JsonFile(
        "trackable_comments.json",
        "Comments the account wrote on trackables.",
        (part("comments", TrackableComment, "The comments.", by=("author_user_id",)),),
    ),
    JsonFile(
        "journey_stops.json",
        "Journey stops the account recorded (where a trackable was), as saved.",
        (part("journeyStops", JourneyStop, "The stops.", by=("created_by_user_id",)),),
    ),
    JsonFile(
        "images.json",
        "Images the account uploaded, and its profile images: the parent each belongs to "
        f"(`targetType` {_TARGET_TYPES}; `targetKind` names it), the sizes kept "
        "(`variants`, each with its website address) and, in `file`, where the largest "
        "kept size is in this ZIP (null when the images' total was over the export's "
        "cap; the addresses still work).",
        (
            part(
                "images",
                ContentImage,
                "The images.",
                by=("uploaded_by_user_id",),
                also=_my_profile_images,
                refers=("parent_id",),
            ),
        ),
    ),
    JsonFile(
        "watches.json",
        "What the account watches: trackables, trackable groups and map areas.",
        (
            part("trackableWatches", TrackableWatch, "Watched trackables.", by=("user_id",)),
            part("groupWatches", TrackableGroupWatch, "Watched groups.", by=("user_id",)),
            part("areaWatches", AreaWatch, "Watched map areas.", by=("user_id",)),
        ),
    ),
    JsonFile(
        "reports.json",
        "Content reports, support requests and error reports the account sent, with "
        "their outcome; and, for a moderator, the reports it decided.",
        (
            part("reports", ContentReport, "Reports sent.", by=("reporter_user_id",)),
            part(
                "reviewed",
                ContentReport,
                "Reports this account reviewed as a moderator: the decision only (the "
                "reports are other people's).",
                by=("reviewer_user_id",),
                columns=(
                    "id",
                    "status",
                    "resolution_text",
                    "reviewer_display_name",
                    "reviewed_utc",
                ),
            ),
        ),
    ),
    JsonFile(
        "notifications.json",
        "The inbox, the events it tells of and those the account caused, the "
        "notification mail settings, and the mail sent or waiting.",
        (
            part("inbox", Notification, "Inbox entries (read or not).", by=("user_id",)),
            part(
                "events",
                Event,
                "Events of the inbox, and those the account caused (`actorUserId`).",
                by=("actor_user_id",),
                also=_events_of_my_inbox,
            ),
            part("settings", NotificationSettings, "Mail settings.", by=("user_id",)),
            part("mail", NotificationMail, "Notification mail sent or waiting.", by=("user_id",)),
            part("digest", NotificationDigest, "The next daily digest.", by=("user_id",)),
        ),
    ),
    JsonFile(
        "webhooks.json",
        "The account's webhooks (personal, and its team ones), their deliveries and every "
        "try, as kept (30 days); never a signing secret.",
        (
            part("webhooks", WebhookSubscription, "Webhook subscriptions.", by=("owner_user_id",)),
            part(
                "deliveries",
                WebhookDelivery,
                "Deliveries of those webhooks.",
                also=_deliveries_of_my_webhooks,
            ),
            part(
                "attempts",
                WebhookAttempt,
                "Tries of those deliveries.",
                also=_attempts_of_my_webhooks,
            ),
        ),
    ),
)

GPX_FILE = "notes.gpx"
GPX_ABOUT = (
    "The account's notes that have coordinates (not deleted), as GPX 1.1 waypoints, for "
    "map and GPS software; `notes.json` has every field."
)
IMAGES_FOLDER = "images"
IMAGES_ABOUT = (
    "The image files: the largest size kept of each (`Large`, 1024 pixels on the longest "
    "side; the original upload is not kept), named as on the website. `images.json` says "
    "which image each file is."
)

# --- left out, and why ----------------------------------------------------------------------

# Columns never exported, whichever part reads their table: secrets first.
EXCLUDED: dict[str, str] = {
    "users.password_hash": "The password's Argon2id hash: a secret that could be attacked offline.",
    "users.security_stamp": "A secret each sign-in carries; it is replaced whenever the "
    "password changes or all sessions end.",
    "users.two_factor_shared_key": "The two-factor (TOTP) key: whoever holds it makes valid "
    "sign-in codes. `isTwoFactorEnabled` says whether it is on.",
    "refresh_tokens.token_hash": "The hash of a refresh token, a secret that keeps a "
    "session signed in.",
    "refresh_tokens.security_stamp": "The account's secret stamp at the time (see the account's).",
    "website_sessions.token_hash": "The hash of the id a signed-in browser's cookie holds, "
    "a secret that keeps it signed in.",
    "website_sessions.security_stamp": "The account's secret stamp at sign-in (see the account's).",
    "recovery_codes.code_hash": "Two-factor recovery codes, kept only as keyed hashes: secrets.",
    "email_codes.nonce_hash": "The hash of a mailed code's secret part.",
    "trackable_codes.code_hash": "Keyed hashes of trackables' secret codes and QR tokens: "
    "secrets (the public code is in trackables.json).",
    "team_invite_links.code": "A working invite: whoever holds the code may join the team. "
    "The team's admins see the codes in the app.",
    "webhook_subscriptions.secret_encrypted": "The webhook's signing secret (kept "
    "encrypted): whoever holds it can forge deliveries.",
    "webhook_subscriptions.previous_secret_encrypted": "The previous signing secret, "
    "during a rotation.",
    "content_reports.client_key": "A keyed hash of the sender's network address (or "
    "account id), used to spot repeated reports; it reveals nothing this export does not.",
    "content_reports.fingerprint": "A hash of which server failure an error report is "
    "about, to group identical failures.",
    "content_reports.error_details": "What failed inside the service (error type, stack "
    "trace): diagnostics about the service, not about the account.",
    "content_reports.review_url": "The moderators' link to the reported content.",
    "content_reports.reviewer_user_id": "The moderator's account id: another person's. "
    "Their display name at the time is exported.",
    "journey_stops.client_payload_hash": "A fingerprint of the request that wrote the stop "
    "(to recognise a retry); the stop's fields are exported.",
    "trackable_comments.client_payload_hash": "A fingerprint of the request that wrote the "
    "comment (to recognise a retry); the comment's fields are exported.",
}

# Columns that refer to a user but whose rows are not exported, and why.
NOT_EXPORTED: dict[str, str] = {
    "recovery_codes.user_id": "Two-factor recovery codes are kept only as keyed hashes, "
    "which are secrets; account.json says whether two-factor sign-in is on.",
    "account_exports.user_id": "The records of the exports themselves (this one "
    "included): GET /api/account/export/{exportId} shows each while it is kept.",
    "content_reports.client_key": "A report's sender as a key (`user:` and the account id "
    "for a signed-in one): the reports are found by `reporterUserId`, and the key is left "
    "out (above).",
    "jobs.payload": "The queue of background work (mail, webhook deliveries, this export), "
    "which names accounts by id while the work waits and for a day after it is done.",
    "login_failures.email_hash": "Failed sign-ins counted per address (a keyed hash of it, "
    "whether or not an account has it) for the five-minute lockout.",
    "rate_limit_counters.key": "Requests counted per network address or email in the "
    "current window of a rate limit (a SHA-256 of the key), kept until the window ends.",
}

# Columns of exported tables whose names look like a secret's, reviewed: not secrets.
REVIEWED_NOT_SECRET: dict[str, str] = {
    "trackables.public_code": "The public code printed on the item, shown to everyone.",
    "trackables.has_custom_secret": "Whether the owner chose the secret code; not the code itself.",
    "trackables.external_link_append_public_code": "Whether the public code is added to "
    "the trackable's link; a flag.",
    "trackable_groups.default_external_link_append_public_code": "The same flag, as the "
    "group's default for its items.",
    "webhook_attempts.status_code": "The HTTP status the webhook's endpoint answered.",
    "journey_stops.country_code": "The ISO country the stop lies in (from its snapped position).",
    "webhook_subscriptions.previous_secret_expires_utc": "Until when the previous secret "
    "signed too: a time, not the secret.",
}


def camel(name: str) -> str:
    """`owner_user_id` -> `ownerUserId` (the API's spelling of field names)."""
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def exported_columns(part: Part) -> list[str]:
    """The columns `part` writes: its own list, or every column not EXCLUDED."""
    table = part.table
    if part.columns is not None:
        return list(part.columns)
    return [
        column.name for column in table.columns if f"{table.name}.{column.name}" not in EXCLUDED
    ]


def file_names() -> list[str]:
    """Every file name of an export, in the order they are written."""
    return [each.name for each in FILES] + [GPX_FILE, "README.md"]
