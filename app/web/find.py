"""The "log a find" form's write (app.web.active, the active landing): a comment, a journey
stop, or both, through the trackables services' own writes and rules, in the caller's one
transaction. One form render carries one `clientMutationId`; the comment and the stop
each take a tag derived from it, so the form sent twice (a double tap, a resend after a
timeout) writes each of them once."""

from __future__ import annotations

import uuid

from app.auth import Viewer
from app.models.trackable import StopPrecision
from app.services import trackables
from app.web.forms import FindForm


def log_find(
    viewer: Viewer, trackable_id: uuid.UUID, form: FindForm, credential: trackables.Credential
) -> dict[str, str]:
    """Write what a validated form holds; the ids of what was written (or replayed), by
    kind (`comment`, `stop`), for the notice's links. Raises the services' errors."""
    comment_tag, stop_tag = form.mutation_ids
    display_name = form.display_name.data or None
    written: dict[str, str] = {}
    if form.position is not None:
        latitude, longitude = form.position
        stop = trackables.add_stop(
            viewer,
            trackable_id,
            latitude=latitude,
            longitude=longitude,
            precision=StopPrecision(form.precision.data),
            display_name=display_name,
            credential=credential,
            observed_utc=form.observed_utc,
            client_mutation_id=stop_tag,
        )
        written["stop"] = str(stop.journey_stop_id)
    if form.body.data:
        comment = trackables.add_comment(
            viewer,
            trackable_id,
            body=form.body.data,
            display_name=display_name,
            credential=credential,
            observed_utc=form.observed_utc,
            client_mutation_id=comment_tag,
        )
        written["comment"] = str(comment.trackable_comment_id)
    return written
