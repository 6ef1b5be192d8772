"""Attaching trackables to a note (contract: Public note pages, "Attaching requires the note
owner or a team admin, requires an existing short secret code match or an active
session"; Note attachment and visibility; decisions: "Attaching by a code...";
docs/contract/trackables.md, Trackable activity).

The note must be one the caller may open (404) and manage (403). Every trackable is checked
before anything is written. Attaching goes through the notes area (`notes.attach_trackable`),
which keeps the note's discovery flag in step (policies.notes). Each newly attached
trackable gets a journey stop at the note's point, if it has one; attaching one already
attached changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from app.auth import Viewer
from app.error_codes import Code
from app.errors import TrackableError
from app.extensions import db
from app.models.note import Note
from app.models.trackable import CodeKind, Trackable
from app.policies import notes as note_policy
from app.policies import trackables as policy
from app.services import events, notes
from app.services.trackables.codes.formats import CodeSettings
from app.services.trackables.codes.guesses import check_budget, count_miss
from app.services.trackables.codes.lookup import resolve
from app.services.trackables.codes.possession import Credential
from app.services.trackables.journey.recording import record_stop


def attach_to_note(
    viewer: Viewer,
    note_id: uuid.UUID,
    *,
    credential: Credential,
    selected_active_trackable_ids: Sequence[uuid.UUID] = (),
) -> list[Trackable]:
    """Attach the named trackables to the note, each with a stop at its point (see the
    module docstring); returns them."""
    note = note_policy.get_visible(viewer, note_id)
    note_policy.require_manage(viewer, note)
    found: list[Trackable] = []
    if credential.access_code:
        found.append(_by_code(credential))
    found.extend(_selected(viewer, trackable_id) for trackable_id in selected_active_trackable_ids)
    for trackable in found:
        if not trackable.is_activated:
            raise TrackableError(
                Code.TRACKABLE_ACTIVATION_REQUIRED, "This trackable has to be activated first."
            )
    for trackable in dict.fromkeys(found):
        _attach(viewer, note, trackable)
    db.session.flush()
    return found


# trackableSecretCodes: its short secret or QR token; a public code or a code that matches nothing
# is 403 trackable_access_code_invalid and counts against the guess budget. An unactivated one is
# 400 trackable_activation_required.
def _by_code(credential: Credential) -> Trackable:
    config = credential.config
    check_budget(credential.guess_client, config)
    match = resolve(CodeSettings.from_config(config), credential.access_code or "")
    if match is None or match[1] is CodeKind.PUBLIC:
        count_miss(credential.guess_client, config)
        raise TrackableError(
            Code.TRACKABLE_ACCESS_CODE_INVALID,
            "This is not a trackable's secret code: a public code does not attach.",
        )
    return match[0]


# selectedActiveTrackableIds: the caller needs an active session for it, an account unlock, or to
# manage it (else 403 trackable_access_code_required; 404 trackable_not_found for one they may not
# see).
def _selected(viewer: Viewer, trackable_id: uuid.UUID) -> Trackable:
    trackable = policy.get_visible(viewer, trackable_id)
    if not (policy.holds_session(viewer, trackable) or policy.can_manage(viewer, trackable)):
        raise TrackableError(
            Code.TRACKABLE_ACCESS_CODE_REQUIRED,
            "Open this trackable with its secret code first, or send the code.",
        )
    return trackable


def _attach(viewer: Viewer, note: Note, trackable: Trackable) -> None:
    if trackable.id in note.trackable_ids:
        return
    notes.attach_trackable(note, trackable)
    events.record(
        events.EventType.ATTACHED_TO_NOTE, trackable, actor_id=viewer.user_id, note_id=note.id
    )
    if note.latitude is None or note.longitude is None:
        return
    user = viewer.account
    record_stop(
        trackable,
        latitude=note.latitude,
        longitude=note.longitude,
        created_by=user,
        display_name=user.display_text,
        is_anonymous=False,
        note_id=note.id,
    )
