"""Who may write a comment or a journey stop, and the offline-safe parts of those writes
(contract: Trackables: comments and journey, rule 1; Trackable activation; decisions:
Trackable codes; docs/contract/trackables.md, Trackable activity).

`writable` settles rule 1; only after it is an unactivated item refused, so who does not
hold it learns nothing about its state. `write_once` makes a write tagged with a
`clientMutationId` happen once per trackable. `check_observed` bounds when the finder says
they saw the item.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import exc, select

from app.auth import Viewer
from app.error_codes import Code
from app.errors import Conflict, TrackableError, ValidationFailed
from app.extensions import db
from app.models.base import utcnow
from app.models.trackable import CodeKind, JourneyStop, Trackable, TrackableComment
from app.policies import trackables as policy
from app.services.shared.mutations import payload_hash
from app.services.trackables.codes.formats import CodeSettings
from app.services.trackables.codes.guesses import GuessClient, check_budget, count_miss
from app.services.trackables.codes.lookup import resolve
from app.services.trackables.codes.sessions import record_unlock

CLOCK_SKEW = timedelta(minutes=5)


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


# observed_utc is when the finder really saw the item, sent later from a phone that was offline:
# refused when more than CLOCK_SKEW in the future or older than TRACKABLE_OBSERVED_MAX_AGE_DAYS.
def check_observed(observed_utc: datetime | None, config: Mapping[str, Any]) -> None:
    """400 on `observedUtc` when it is in the future or implausibly old."""
    if observed_utc is None:
        return
    now = utcnow()
    if observed_utc > now + CLOCK_SKEW:
        raise ValidationFailed({"observedUtc": ["Must not be in the future."]})
    max_age = timedelta(days=int(config["TRACKABLE_OBSERVED_MAX_AGE_DAYS"]))
    if observed_utc < now - max_age:
        raise ValidationFailed({"observedUtc": [f"Must be within the last {max_age.days} days."]})


Tagged = TypeVar("Tagged", TrackableComment, JourneyStop)


# A retry gets the first row back: the same writer only (else 400 trackable_request_rejected), the
# same payload only (else 409 client_mutation_id_reused naming the first row); two retries racing
# each other are settled by the unique key (trackable, clientMutationId).
def write_once(
    model: type[Tagged],
    trackable: Trackable,
    client_mutation_id: str | None,
    write: Callable[[str | None], Tagged],
    same_writer: Callable[[Tagged], bool],
    payload: Mapping[str, Any],
) -> tuple[Tagged, bool]:
    """`write(payload hash)` (in a savepoint; the row keeps the hash), unless this tag was
    written on the trackable before: returns the row and whether it is new. An earlier
    row of the tag is returned only to its own writer (`same_writer`) and only for the
    same `payload` (the fields that make the write); else the request is refused."""
    digest = payload_hash(payload) if client_mutation_id else None
    if client_mutation_id:
        earlier = _tagged(model, trackable.id, client_mutation_id)
        if earlier is not None:
            return _replayed(earlier, same_writer, digest), False
    try:
        with db.session.begin_nested():  # a retry racing its twin: the unique key decides
            row = write(digest)
    except exc.IntegrityError:
        earlier = _tagged(model, trackable.id, client_mutation_id) if client_mutation_id else None
        if earlier is None:
            raise
        return _replayed(earlier, same_writer, digest), False
    return row, True


def _tagged(model: type[Tagged], trackable_id: uuid.UUID, client_mutation_id: str) -> Any:
    return db.session.scalar(
        select(model).where(
            model.trackable_id == trackable_id, model.client_mutation_id == client_mutation_id
        )
    )


def _replayed(earlier: Tagged, same_writer: Callable[[Tagged], bool], digest: str | None) -> Tagged:
    if not same_writer(earlier):
        raise TrackableError(
            Code.TRACKABLE_REQUEST_REJECTED,
            "This clientMutationId was already used by another writer on this trackable.",
        )
    # A row written before hashes were kept (NULL) is answered as a retry, as it was.
    if earlier.client_payload_hash is not None and earlier.client_payload_hash != digest:
        raise Conflict(
            "This clientMutationId was already used for another change on this trackable; "
            "send this one with a new clientMutationId.",
            code=CLIENT_MUTATION_ID_REUSED,
            originalId=str(earlier.id),
        )
    return earlier


CLIENT_MUTATION_ID_REUSED = Code.CLIENT_MUTATION_ID_REUSED
