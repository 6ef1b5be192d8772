"""Who may write a comment or a journey stop (contract: Trackables: comments and journey,
rule 1; Trackable activation; decisions: Trackable codes; docs/contract/trackables.md,
Trackable activity).

`writable` settles rule 1; only after it is an unactivated item refused, so who does not
hold it learns nothing about its state. The offline-safe parts of those writes (retries,
the seen-on time) are journey.retries.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.auth import Viewer
from app.error_codes import Code
from app.errors import TrackableError
from app.extensions import db
from app.models.trackable import CodeKind, Trackable
from app.policies import trackables as policy
from app.services.trackables.codes.formats import CodeSettings
from app.services.trackables.codes.guesses import GuessClient, check_budget, count_miss
from app.services.trackables.codes.lookup import resolve
from app.services.trackables.codes.sessions import record_unlock


@dataclass(frozen=True)
class Credential:
    """What an anonymous writer may present besides its session: the code it sent (or
    None), the guess-budget keys of its address, and the app's settings."""

    access_code: str | None
    guess_client: GuessClient
    config: Mapping[str, Any]


# A sent accessCode is checked first (for any caller): it must be the short secret or QR token of
# this very trackable, else 403 trackable_access_code_invalid, counted against the guess budget like
# a lookup miss (over the budget: 429 before the code is resolved); a signed-in caller's good code
# is linked to the account. Without a code, an anonymous caller needs an active session for the
# trackable (403 trackable_access_code_required, or 404 trackable_not_found when it may not even see
# it); a signed-in caller needs to see it (404). Then an unactivated item is 400
# trackable_activation_required.
def writable(viewer: Viewer, trackable_id: uuid.UUID, credential: Credential) -> Trackable:
    """The trackable this caller may comment on or add a stop to (see the comment above
    for the order of the checks), or the rejection."""
    trackable = db.session.get(Trackable, trackable_id)
    if trackable is None:
        raise policy.not_found()
    if credential.access_code:
        _check_code(viewer, trackable, credential)
    elif not policy.can_write_without_code(viewer, trackable):
        if viewer.is_authenticated or not policy.can_view(viewer, trackable):
            raise policy.not_found()
        raise TrackableError(
            Code.TRACKABLE_ACCESS_CODE_REQUIRED,
            "Send the trackable's secret code or QR token, or open it by its code first.",
        )
    if not trackable.is_activated:
        raise TrackableError(
            Code.TRACKABLE_ACTIVATION_REQUIRED, "This trackable has to be activated first."
        )
    return trackable


def _check_code(viewer: Viewer, trackable: Trackable, credential: Credential) -> None:
    config = credential.config
    check_budget(credential.guess_client, config)
    match = resolve(CodeSettings.from_config(config), credential.access_code or "")
    if match is not None and match[0].id == trackable.id and match[1] is not CodeKind.PUBLIC:
        if viewer.user is not None:  # as a lookup would: later devices reopen it
            record_unlock(viewer.user, trackable.id)
        return
    # A public code is no credential, and another trackable's secret is not this one's.
    count_miss(credential.guess_client, config)
    raise TrackableError(
        Code.TRACKABLE_ACCESS_CODE_INVALID, "This code is not a secret code of this trackable."
    )
