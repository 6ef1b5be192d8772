"""Trackable comments (contract: Trackables: comments and journey, rules 1-3; Trackable
activation; docs/contract/trackables.md, Trackable activity).

Reading follows the trackable: whoever may see it reads its comments, newest first, capped.
Writing is rule 1 (`possession.writable`), never on an unactivated item. Edit: only the
signed-in author (rule 2). Delete: the author, the owner or a current team admin (rule 3);
its photos go with it. A write carrying a `clientMutationId` already used on this trackable
by the same writer returns the first comment instead of a second one.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from app.auth import Viewer
from app.error_codes import Code
from app.errors import TrackableError
from app.extensions import db
from app.hooks import remove_children
from app.models.base import utcnow
from app.models.trackable import Trackable, TrackableComment
from app.policies import trackables as policy
from app.services import events
from app.services.shared.pages import Listing, Order, Page, read_list
from app.services.trackables.codes.possession import Credential, writable
from app.services.trackables.journey.retries import check_observed, write_once

ANONYMOUS_NAME = "Anonymous finder"


@dataclass(frozen=True)
class CommentView:
    """A comment as one viewer sees it."""

    trackable_comment_id: uuid.UUID
    trackable_id: uuid.UUID
    body: str
    is_anonymous: bool
    author_display_text: str
    author_profile_user_name: str | None
    created_utc: datetime
    edited_utc: datetime | None
    observed_utc: datetime | None
    can_edit: bool
    can_delete: bool


CommentList = Listing[CommentView]
ORDER = Order(TrackableComment.created_utc.desc(), TrackableComment.id.desc())


def comment_view(viewer: Viewer, trackable: Trackable, comment: TrackableComment) -> CommentView:
    author = comment.author
    return CommentView(
        trackable_comment_id=comment.id,
        trackable_id=comment.trackable_id,
        body=comment.body,
        is_anonymous=author is None,
        author_display_text=author.display_text if author else comment.author_display_name,
        author_profile_user_name=author.user_name if author else None,
        created_utc=comment.created_utc,
        edited_utc=comment.edited_utc,
        observed_utc=comment.observed_utc,
        can_edit=policy.can_edit_comment(viewer, comment),
        can_delete=policy.can_delete_entry(viewer, trackable, comment.author_user_id),
    )


def list_comments(
    viewer: Viewer, trackable_id: uuid.UUID, *, cap: int, page: Page | None = None
) -> CommentList:
    """The comments of a trackable the viewer may see, newest first: at most `cap`, or
    one `page`."""
    trackable = policy.get_visible(viewer, trackable_id)
    query = select(TrackableComment).where(TrackableComment.trackable_id == trackable.id)
    found = read_list(query, ORDER, page=page, cap=cap, scalars=True)
    return found.with_items([comment_view(viewer, trackable, one) for one in found.items])


# An anonymous comment keeps the display name its writer chose and no account, and the access
# session it was written with, if any (the proof for adding photos to it); a signed-in one names its
# author's account. The unique key (trackable, clientMutationId) settles two retries racing each
# other.
def add_comment(
    viewer: Viewer,
    trackable_id: uuid.UUID,
    *,
    body: str,
    display_name: str | None,
    credential: Credential,
    observed_utc: datetime | None = None,
    client_mutation_id: str | None = None,
) -> CommentView:
    """Comment on a trackable (rule 1), or return the first comment of a retry."""
    trackable = writable(viewer, trackable_id, credential)

    def write(client_payload_hash: str | None) -> TrackableComment:
        check_observed(observed_utc, credential.config)
        comment = TrackableComment(
            trackable_id=trackable.id,
            author_user_id=viewer.user_id,
            author_display_name="" if viewer.is_authenticated else display_name or ANONYMOUS_NAME,
            body=body,
            created_utc=utcnow(),
            observed_utc=observed_utc,
            client_mutation_id=client_mutation_id,
            client_payload_hash=client_payload_hash,
            writer_session_id=policy.writer_session(viewer, trackable),
        )
        db.session.add(comment)
        db.session.flush()
        return comment

    comment, new = write_once(
        TrackableComment,
        trackable,
        client_mutation_id,
        write,
        # the same writer: the same account, or anonymous again
        same_writer=lambda earlier: earlier.author_user_id == viewer.user_id,
        # what makes the comment (a signed-in author's display name is not used)
        payload={
            "body": body,
            "observed_utc": observed_utc,
            "display_name": None if viewer.is_authenticated else display_name,
        },
    )
    if new:
        touch(trackable, comment.created_utc)
        events.record(
            events.EventType.COMMENT_WRITTEN,
            trackable,
            actor_id=viewer.user_id,
            comment_id=comment.id,
        )
        db.session.flush()
    return comment_view(viewer, trackable, comment)


def edit_comment(
    viewer: Viewer, trackable_id: uuid.UUID, comment_id: uuid.UUID, *, body: str
) -> CommentView:
    """Change a comment's text: its signed-in author only (rule 2)."""
    trackable = policy.get_visible(viewer, trackable_id)
    comment = _comment_of(trackable, comment_id)
    policy.require_edit_comment(viewer, comment)
    comment.body = body
    comment.edited_utc = utcnow()
    events.record(
        events.EventType.COMMENT_EDITED, trackable, actor_id=viewer.user_id, comment_id=comment.id
    )
    db.session.flush()
    return comment_view(viewer, trackable, comment)


def delete_comment(viewer: Viewer, trackable_id: uuid.UUID, comment_id: uuid.UUID) -> None:
    """Delete a comment: its author, the owner or a current team admin (rule 3)."""
    trackable = policy.get_visible(viewer, trackable_id)
    comment = _comment_of(trackable, comment_id)
    policy.require_delete_comment(viewer, trackable, comment)
    remove_children("trackable_comment", [comment.id])  # its photos and their files
    db.session.delete(comment)
    events.record(
        events.EventType.COMMENT_DELETED, trackable, actor_id=viewer.user_id, comment_id=comment.id
    )
    db.session.flush()


def touch(trackable: Trackable, when: datetime) -> None:
    """A comment or stop is activity of the trackable and of its group."""
    trackable.last_activity_utc = when
    if trackable.group is not None:
        trackable.group.last_activity_utc = when


# A comment id that is not a comment of that trackable is 404 trackable_comment_not_found.
def _comment_of(trackable: Trackable, comment_id: uuid.UUID) -> TrackableComment:
    comment = db.session.get(TrackableComment, comment_id)
    if comment is None or comment.trackable_id != trackable.id:
        raise TrackableError(Code.TRACKABLE_COMMENT_NOT_FOUND, "Comment not found.")
    return comment
