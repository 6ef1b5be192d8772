"""What DELETE /api/account does to trackables (contract: Identity, "removes the user's
personal data and personal trackable activity; shared and team-owned trackables and other
users' history stay"). No row naming the user remains.

The user's own trackables (activated personally, or created and never activated) are
deleted with their codes, sessions, watches, unlocks and journey; team-owned ones stay with
the team; ones someone else activated stay and forget their creator. The user's watches,
unlocks, comments and stops go, each with its photos; the journey statistics of the
trackables that lost stops and stay are recomputed.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, delete, or_, select, update

from app.extensions import db
from app.hooks import DeletionCounts, remove_children
from app.models.note import Note
from app.models.team import MembershipStatus, TeamMembership
from app.models.trackable import (
    JourneyStop,
    Trackable,
    TrackableAccessSession,
    TrackableCode,
    TrackableComment,
    TrackableGroup,
    TrackableGroupWatch,
    TrackableUnlock,
    TrackableWatch,
    note_trackables,
)
from app.models.user import User
from app.services.trackables.journey import statistics


# Stops others recorded at the user's notes stay, without the link to the note (the note goes with
# the notes clean-up).
def delete_account_trackables(user: User, counts: DeletionCounts) -> None:
    """The trackables area's part of account deletion (runs after the teams clean-up,
    before the notes clean-up)."""
    _hand_team_trackables_to_admins(user)
    own = or_(
        and_(Trackable.owner_user_id == user.id, Trackable.team_id.is_(None)),
        and_(Trackable.owner_user_id.is_(None), Trackable.created_by_user_id == user.id),
    )
    # Everything hanging off the deleted trackables (SQLite enforces no cascade here).
    doomed = select(Trackable.id).where(own).scalar_subquery()
    remove_children("trackable", list(db.session.scalars(select(Trackable.id).where(own))))
    _remove_entry_photos(user, doomed)
    for model in (TrackableWatch, TrackableUnlock, JourneyStop, TrackableComment):
        db.session.execute(delete(model).where(model.trackable_id.in_(doomed)))
    db.session.execute(delete(TrackableCode).where(TrackableCode.trackable_id.in_(doomed)))
    db.session.execute(
        delete(TrackableAccessSession).where(TrackableAccessSession.trackable_id.in_(doomed))
    )
    db.session.execute(delete(note_trackables).where(note_trackables.c.trackable_id.in_(doomed)))
    db.session.execute(delete(Trackable).where(own))
    db.session.execute(
        update(Trackable)
        .where(Trackable.created_by_user_id == user.id)
        .values(created_by_user_id=None)
    )
    _end_groups(user)
    db.session.execute(delete(TrackableWatch).where(TrackableWatch.user_id == user.id))
    db.session.execute(delete(TrackableGroupWatch).where(TrackableGroupWatch.user_id == user.id))
    db.session.execute(delete(TrackableUnlock).where(TrackableUnlock.user_id == user.id))
    travelled = db.session.scalars(
        select(JourneyStop.trackable_id).where(JourneyStop.created_by_user_id == user.id).distinct()
    ).all()
    db.session.execute(delete(JourneyStop).where(JourneyStop.created_by_user_id == user.id))
    statistics.refresh_many(travelled)
    db.session.execute(delete(TrackableComment).where(TrackableComment.author_user_id == user.id))
    mine = select(Note.id).where(Note.owner_user_id == user.id).scalar_subquery()
    db.session.execute(
        update(JourneyStop).where(JourneyStop.note_id.in_(mine)).values(note_id=None)
    )
    db.session.flush()


def _remove_entry_photos(user: User, doomed: Any) -> None:
    """The photos of the comments and stops about to go: those on the deleted trackables
    and the user's own everywhere (anonymous finders' photos on the user's trackables
    included)."""
    comments = select(TrackableComment.id).where(
        or_(TrackableComment.trackable_id.in_(doomed), TrackableComment.author_user_id == user.id)
    )
    stops = select(JourneyStop.id).where(
        or_(JourneyStop.trackable_id.in_(doomed), JourneyStop.created_by_user_id == user.id)
    )
    remove_children("trackable_comment", list(db.session.scalars(comments)))
    remove_children("journey_stop", list(db.session.scalars(stops)))


# The team's longest-standing admin becomes the activator. A team the user was the last member of
# was dismantled by the teams clean-up before this one, which made its trackables personal.
def _hand_team_trackables_to_admins(user: User) -> None:
    team_ids = db.session.scalars(
        select(Trackable.team_id)
        .where(Trackable.owner_user_id == user.id, Trackable.team_id.is_not(None))
        .distinct()
    ).all()
    for team_id in team_ids:
        admin_id = db.session.scalar(
            select(TeamMembership.user_id)
            .where(
                TeamMembership.team_id == team_id,
                TeamMembership.user_id != user.id,
                TeamMembership.is_admin.is_(True),
                TeamMembership.status == MembershipStatus.MEMBER,
            )
            .order_by(TeamMembership.created_utc, TeamMembership.id)
            .limit(1)
        )
        values = {"owner_user_id": admin_id} if admin_id else {"team_id": None}
        db.session.execute(
            update(Trackable)
            .where(Trackable.owner_user_id == user.id, Trackable.team_id == team_id)
            .values(**values)
        )
    # With no other admin (a team keeps one, so only in odd states) they become personal
    # and are deleted with the user's own.
    db.session.flush()


# A team group stays with its team (its admins control it); a personal group is deleted, its
# remaining items leave it.
def _end_groups(user: User) -> None:
    personal = select(TrackableGroup.id).where(
        TrackableGroup.owner_user_id == user.id, TrackableGroup.team_id.is_(None)
    )
    personal_ids = list(db.session.scalars(personal))
    if personal_ids:
        remove_children("trackable_group", personal_ids)
        db.session.execute(
            update(Trackable).where(Trackable.group_id.in_(personal_ids)).values(group_id=None)
        )
        db.session.execute(
            delete(TrackableGroupWatch).where(TrackableGroupWatch.group_id.in_(personal_ids))
        )
        db.session.execute(delete(TrackableGroup).where(TrackableGroup.id.in_(personal_ids)))
    db.session.execute(
        update(TrackableGroup)
        .where(TrackableGroup.owner_user_id == user.id)
        .values(owner_user_id=None)
    )
