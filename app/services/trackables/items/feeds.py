"""What the Atom feeds of a trackable and of a group hold (docs/contract/events.md, Feeds):
the entries an anonymous viewer may see, newest first.

A feed is read as the anonymous viewer, whoever asks: a feed URL is shared and cached, so an
access cookie or a token sent with it never widens it. A trackable or group the anonymous
viewer may not see is 404, as its public page is for them. Entries are the activation, each
journey stop and each comment; a group's feed merges its visible items' entries. Every
entry has a stable id: a stop's or comment's own, an activation's derived from the
trackable's id.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import select

from app.auth import ANONYMOUS
from app.extensions import db
from app.models.trackable import JourneyStop, Trackable, TrackableComment
from app.policies import trackables as policy
from app.services.trackables.codes.formats import CodeSettings
from app.services.trackables.codes.lookup import find_by_public_code
from app.services.trackables.items.reads import TrackableView, trackable_views
from app.services.trackables.journey.comments import ORDER as COMMENTS_NEWEST_FIRST
from app.services.trackables.journey.comments import CommentView, comment_view
from app.services.trackables.journey.stops import StopView, stop_views

# Activation entries' ids: uuid5 of the trackable's id in this namespace (stable, unique).
ACTIVATION_NAMESPACE = uuid.UUID("6f1d3c2e-5b7a-4c61-9e0f-2a8d4b6c1e53")


class EntryKind(StrEnum):
    ACTIVATED = "activated"
    STOP = "stop"
    COMMENT = "comment"


@dataclass(frozen=True)
class FeedEntry:
    """One entry: what happened to which trackable, and when."""

    entry_id: uuid.UUID
    kind: EntryKind
    trackable: TrackableView
    published: datetime
    updated: datetime
    stop: StopView | None = None
    comment: CommentView | None = None


@dataclass(frozen=True)
class Feed:
    """A trackable's or a group's feed: its subject's id and name (a trackable's shown
    name or public code, a group's name), and the items it covers (a trackable's: itself,
    a group's: those the anonymous viewer may see)."""

    feed_id: uuid.UUID
    name: str
    entries: list[FeedEntry]
    updated: datetime
    items: tuple[TrackableView, ...]


def trackable_feed(code: str, settings: CodeSettings, *, cap: int) -> Feed:
    """The feed of the trackable with this public code (typed forms normalised: compare
    `feed.items[0].public_code`, the canonical one)."""
    trackable = find_by_public_code(ANONYMOUS, code, settings)
    views = trackable_views(ANONYMOUS, [trackable])
    entries = _entries([trackable], views, cap=cap)
    return Feed(
        feed_id=trackable.id,
        name=views[0].name or views[0].public_code,
        entries=entries,
        updated=_newest(entries, views),
        items=tuple(views),
    )


def group_feed(group_id: uuid.UUID, *, cap: int) -> Feed:
    """The feed of a group: the entries of its items the anonymous viewer may see."""
    group = policy.get_visible_group(ANONYMOUS, group_id)
    members = list(
        db.session.scalars(
            select(Trackable)
            .where(Trackable.group_id == group.id, policy.visible_filter(ANONYMOUS))
            .order_by(Trackable.public_code)
        )
    )
    views = trackable_views(ANONYMOUS, members)
    entries = _entries(members, views, cap=cap)
    return Feed(
        feed_id=group.id,
        name=group.name,
        entries=entries,
        updated=_newest(entries, views, fallback=group.created_utc),
        items=tuple(views),
    )


# updated is a comment's edit time, else when it was written. The entries use the read models the
# public reads build, newest first, at most cap.
def _entries(
    trackables: Sequence[Trackable], views: Sequence[TrackableView], *, cap: int
) -> list[FeedEntry]:
    by_id = {trackable.id: trackable for trackable in trackables}
    view_of = {view.trackable_id: view for view in views}
    if not by_id:
        return []
    entries = [
        FeedEntry(
            entry_id=uuid.uuid5(ACTIVATION_NAMESPACE, str(trackable.id)),
            kind=EntryKind.ACTIVATED,
            trackable=view_of[trackable.id],
            published=trackable.activated_utc,
            updated=trackable.activated_utc,
        )
        for trackable in trackables
        if trackable.activated_utc is not None
    ]
    stops = db.session.scalars(
        select(JourneyStop)
        .where(JourneyStop.trackable_id.in_(list(by_id)))
        .order_by(JourneyStop.associated_utc.desc(), JourneyStop.id.desc())
        .limit(cap)
    ).all()
    for trackable_id in {stop.trackable_id for stop in stops}:
        own = [stop for stop in stops if stop.trackable_id == trackable_id]
        for view in stop_views(ANONYMOUS, by_id[trackable_id], own):
            entries.append(
                FeedEntry(
                    entry_id=view.journey_stop_id,
                    kind=EntryKind.STOP,
                    trackable=view_of[trackable_id],
                    published=view.associated_utc,
                    updated=view.associated_utc,
                    stop=view,
                )
            )
    comments = db.session.scalars(
        select(TrackableComment)
        .where(TrackableComment.trackable_id.in_(list(by_id)))
        .order_by(*COMMENTS_NEWEST_FIRST.clauses)
        .limit(cap)
    ).all()
    for comment in comments:
        shown = comment_view(ANONYMOUS, by_id[comment.trackable_id], comment)
        entries.append(
            FeedEntry(
                entry_id=shown.trackable_comment_id,
                kind=EntryKind.COMMENT,
                trackable=view_of[comment.trackable_id],
                published=shown.created_utc,
                updated=shown.edited_utc or shown.created_utc,
                comment=shown,
            )
        )
    entries.sort(key=lambda entry: (entry.published, str(entry.entry_id)), reverse=True)
    return entries[:cap]


def _newest(
    entries: Sequence[FeedEntry],
    views: Sequence[TrackableView],
    fallback: datetime | None = None,
) -> datetime:
    """The feed's `updated`: its newest entry, or what shows of its items changed last."""
    moments = [entry.updated for entry in entries]
    moments += [view.activated_utc or view.created_utc for view in views]
    if fallback is not None:
        moments.append(fallback)
    return max(moments)


def has_public_feed(trackable: Trackable) -> bool:
    """Whether the trackable's feed (and its group's) opens for the anonymous viewer: a
    page shown to someone else links the feeds only then."""
    return policy.can_view(ANONYMOUS, trackable)
