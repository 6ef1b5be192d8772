"""Area watches (beyond the contract): a signed-in user watches a map window,
optionally in one content language, and hears of new public notes and new journey stops
of publicly visible trackables inside it (docs/contract/events.md, Events and
notifications).

A window is the discovery's (services.shared.areas.Bounds: min_longitude > max_longitude
crosses the antimeridian), at most AREA_WATCH_MAX_SPAN_DEGREES tall and wide; a user keeps
at most AREA_WATCHES_PER_USER_MAX (a setting). A watch is its user's alone: another
user's is 404, as a missing one. The fan-out asks `watchers_at` who watches a point: one
SQL query on the box index, never a scan of every watch in Python.
"""

from __future__ import annotations

import uuid

from sqlalchemy import and_, delete, func, or_, select

from app.auth import Viewer
from app.error_codes import Code
from app.errors import ApiError, NotFound, ValidationFailed
from app.extensions import db
from app.hooks import DeletionCounts
from app.models.event import AREA_WATCH_MAX_SPAN_DEGREES, AreaWatch
from app.models.user import User
from app.platform.database import lock_for_write
from app.services.shared.areas import Bounds
from app.services.shared.languages import canonical_language
from app.services.shared.pages import Listing, Order, Page, read_list

LIMIT_REACHED = Code.AREA_WATCH_LIMIT_REACHED
NOT_FOUND = Code.AREA_WATCH_NOT_FOUND
ORDER = Order(AreaWatch.created_utc.desc(), AreaWatch.id.desc())


def create_area_watch(
    viewer: Viewer, window: Bounds, *, content_language: str | None = None, most: int
) -> AreaWatch:
    """A new watch of the caller's: 400 on a window over the span, 400
    `area_watch_limit_reached` when the caller already keeps `most`."""
    _check_span(window)
    user_id = viewer.account.id
    lock_for_write(db.session, f"area-watches:{user_id}")  # two creations at the cap at once
    held = db.session.scalar(
        select(func.count()).select_from(AreaWatch).where(AreaWatch.user_id == user_id)
    )
    if (held or 0) >= most:
        raise ApiError(
            f"You watch {most} areas, the most allowed: delete one to add another.",
            code=LIMIT_REACHED,
        )
    watch = AreaWatch(
        user_id=user_id,
        min_latitude=window.min_latitude,
        min_longitude=window.min_longitude,
        max_latitude=window.max_latitude,
        max_longitude=window.max_longitude,
        content_language=canonical_language(content_language) if content_language else None,
    )
    db.session.add(watch)
    db.session.flush()
    return watch


def _check_span(window: Bounds) -> None:
    width = window.max_longitude - window.min_longitude
    if window.crosses_antimeridian:
        width += 360.0
    errors: dict[str, list[str]] = {}
    message = f"A watched area spans at most {AREA_WATCH_MAX_SPAN_DEGREES:g} degrees."
    if window.max_latitude - window.min_latitude > AREA_WATCH_MAX_SPAN_DEGREES:
        errors["maxLatitude"] = [message]
    if width > AREA_WATCH_MAX_SPAN_DEGREES:
        errors["maxLongitude"] = [message]
    if errors:
        raise ValidationFailed(errors)


def list_area_watches(viewer: Viewer, *, page: Page | None = None) -> Listing[AreaWatch]:
    """The caller's watches, newest first: all of them (at most the cap), or one `page`."""
    query = select(AreaWatch).where(AreaWatch.user_id == viewer.account.id)
    return read_list(query, ORDER, page=page, scalars=True)


def delete_area_watch(viewer: Viewer, area_watch_id: uuid.UUID) -> None:
    """Delete one of the caller's watches; another user's is 404, as a missing one."""
    watch = db.session.get(AreaWatch, area_watch_id)
    if watch is None or watch.user_id != viewer.account.id:
        raise NotFound("Area watch not found.", code=NOT_FOUND)
    db.session.delete(watch)
    db.session.flush()


def watchers_at(
    latitude: float, longitude: float, *, content_language: str | None = None
) -> set[uuid.UUID]:
    """The users with a watch holding the point. `content_language` is a note's: a watch
    with a language hears only notes in it; content without a language (None: a journey
    stop) reaches every watch of the area. A range scan of `ix_area_watches_box` on
    min_latitude, which the span cap bounds, the other three sides checked from the same
    index."""
    in_longitude = or_(
        and_(
            AreaWatch.min_longitude <= AreaWatch.max_longitude,
            AreaWatch.min_longitude <= longitude,
            AreaWatch.max_longitude >= longitude,
        ),
        and_(
            AreaWatch.min_longitude > AreaWatch.max_longitude,
            or_(AreaWatch.min_longitude <= longitude, AreaWatch.max_longitude >= longitude),
        ),
    )
    query = select(AreaWatch.user_id).where(
        # the margin: a window of exactly the span, whatever the float rounding
        AreaWatch.min_latitude.between(latitude - AREA_WATCH_MAX_SPAN_DEGREES - 1e-9, latitude),
        AreaWatch.max_latitude >= latitude,
        in_longitude,
    )
    if content_language is not None:
        query = query.where(
            or_(
                AreaWatch.content_language.is_(None),
                AreaWatch.content_language == content_language,
            )
        )
    return set(db.session.scalars(query.distinct()))


def delete_account_area_watches(user: User, counts: DeletionCounts) -> None:
    """Account deletion: the user's area watches go."""
    db.session.execute(delete(AreaWatch).where(AreaWatch.user_id == user.id))
