"""The offline-safe parts of writing a comment or a journey stop (docs/contract/trackables.md,
Trackable activity): a write tagged with a `clientMutationId` happens once per trackable
(`write_once`), and the time a finder says they saw the item is bounded (`check_observed`).
Who may write at all is codes.possession."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import exc, select

from app.error_codes import Code
from app.errors import Conflict, TrackableError, ValidationFailed
from app.extensions import db
from app.models.base import utcnow
from app.models.trackable import JourneyStop, Trackable, TrackableComment
from app.services.shared.mutations import payload_hash

CLOCK_SKEW = timedelta(minutes=5)


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
