"""The "log a find" form's write (app.web.active, the active landing): a comment, a journey
stop, or both, through the trackables services' own writes and rules, in the caller's one
transaction, and an optional photo of the find, through the images service (a finder's
photo of the comment, or of the stop when there is no comment). One form render carries
one `clientMutationId`; the comment, the stop and the photo each take an id derived from
it, so the form sent twice (a double tap, a resend after a timeout) writes each once.
The finder's name is kept for the visit (the pages' session cookie, which ends with the
browser session) so the next find carries it too."""

from __future__ import annotations

import uuid

from flask import session

from app.auth import Viewer
from app.models.image import ImageTarget
from app.models.trackable import StopPrecision
from app.services import images, trackables
from app.web.forms import FindForm


def log_find(
    viewer: Viewer,
    trackable_id: uuid.UUID,
    form: FindForm,
    credential: trackables.Credential,
    client_address: str = "",
) -> dict[str, str]:
    """Write what a validated form holds; the ids of what was written (or replayed), by
    kind (`comment`, `stop`, `photo`), for the notice's links. Raises the services'
    errors; a photo's files are written before the caller commits (`photo`: discard them
    when the commit fails)."""
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
    photo = form.photo_file
    if photo is not None:
        kind = "comment" if "comment" in written else "stop"
        target = ImageTarget.TRACKABLE_COMMENT if kind == "comment" else ImageTarget.JOURNEY_STOP
        parent_id = uuid.UUID(written[kind])
        image = images.upload_image(
            viewer,
            target,
            parent_id,
            photo.stream,
            client_address=client_address,
            image_id=form.photo_id(parent_id),
        )
        written["photo"] = str(image.id)
    return written


FINDER_NAME_KEY = "finder_name"


def remember_finder_name(form: FindForm) -> None:
    """After a find is written: its name for the next find of this visit; a name field
    left empty forgets the one kept."""
    name = form.display_name.data
    if name:
        session[FINDER_NAME_KEY] = name
    else:
        session.pop(FINDER_NAME_KEY, None)


def remembered_finder_name() -> str | None:
    """The name this browser session's last find was written with, if any."""
    name = session.get(FINDER_NAME_KEY)
    return name if isinstance(name, str) else None


def forget_finder_name() -> None:
    """Ending a session on this device forgets the name too (a shared device)."""
    session.pop(FINDER_NAME_KEY, None)
