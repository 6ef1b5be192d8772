"""Active secret sessions of a client (contract: Active secret session; Trackables: lookup
and active sessions): the client's sessions, the active landing of one trackable, the
status text a client remembers, and ending a session on this client.

The landing opens for a client holding a session for the trackable, for an account that
unlocked it, and for its managers; for anyone else it does not exist (404, whatever the
trackable's visibility). The status text needs this client's session, and so does nothing
else here.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select

from app.auth import Viewer
from app.extensions import db
from app.models.team import Team
from app.models.trackable import Trackable, TrackableAccessSession, TrackableGroup
from app.policies import trackables as policy
from app.services import events
from app.services.shared.pages import Listing, Order, Page, read_list
from app.services.trackables.codes.sessions import end_session, find_session


# An unactivated item of a group shows the group's defaults while its own are blank (contract:
# Trackable group).
def shown_name(trackable: Trackable) -> str:
    group = trackable.group
    if not trackable.is_activated and group is not None and not trackable.name.strip():
        return group.default_trackable_title
    return trackable.name


def shown_description(trackable: Trackable) -> str:
    group = trackable.group
    if not trackable.is_activated and group is not None and not trackable.description.strip():
        return group.default_trackable_description
    return trackable.description


@dataclass(frozen=True)
class ActiveItem:
    """One session of this client, or the landing's summary of one trackable."""

    trackable: Trackable
    status_message: str = ""
    unlocked_utc: datetime | None = None

    @property
    def trackable_id(self) -> uuid.UUID:
        return self.trackable.id

    @property
    def public_code(self) -> str:
        return self.trackable.public_code

    @property
    def name(self) -> str:
        return shown_name(self.trackable)

    @property
    def is_activated(self) -> bool:
        return self.trackable.is_activated


@dataclass(frozen=True)
class ActivationContext:
    """Where the caller may activate: personally, or for one of their teams."""

    kind: str  # "Personal" or "Team"
    team_id: uuid.UUID | None = None
    team_name: str | None = None


@dataclass(frozen=True)
class ActiveLanding(ActiveItem):
    group: TrackableGroup | None = None
    activation_contexts: list[ActivationContext] = field(default_factory=list)
    group_items: list[ActiveItem] = field(default_factory=list)

    @property
    def description(self) -> str:
        return shown_description(self.trackable)

    @property
    def activation_required(self) -> bool:
        return not self.trackable.is_activated

    @property
    def is_grouped(self) -> bool:
        return self.group is not None


def _item(session: TrackableAccessSession, trackable: Trackable) -> ActiveItem:
    return ActiveItem(trackable, session.status_message, session.created_utc)


# Latest unlocked first; a client holds one session per trackable, and public codes are
# unique, so the code settles ties.
ORDER = Order(TrackableAccessSession.created_utc.desc(), Trackable.public_code)


def list_active(client: str | None, *, page: Page | None = None) -> Listing[ActiveItem]:
    """This client's sessions, the latest unlocked first: all of them, or one `page`."""
    if client is None:
        return Listing([])
    query = (
        select(TrackableAccessSession, Trackable)
        .join(Trackable, Trackable.id == TrackableAccessSession.trackable_id)
        .where(TrackableAccessSession.client_key == client)
    )
    found = read_list(query, ORDER, page=page)
    return found.with_items([_item(session, trackable) for session, trackable in found.items])


def active_landing(viewer: Viewer, trackable_id: uuid.UUID, client: str | None) -> ActiveLanding:
    """The active landing payload (see the module docstring for who may open it)."""
    trackable = db.session.get(Trackable, trackable_id)
    session = find_session(client, trackable_id)
    if trackable is None or not (
        session is not None
        or policy.has_unlocked(viewer, trackable)
        or policy.can_manage(viewer, trackable)
    ):
        raise policy.not_found()
    return ActiveLanding(
        trackable,
        status_message=session.status_message if session else "",
        unlocked_utc=session.created_utc if session else None,
        group=trackable.group,
        activation_contexts=_activation_contexts(viewer, trackable),
        group_items=_group_items(viewer, trackable),
    )


def _activation_contexts(viewer: Viewer, trackable: Trackable) -> list[ActivationContext]:
    """A signed-in caller may activate an unactivated trackable personally or for a team
    they are an active member of; anonymous callers must sign in first."""
    if viewer.user is None or trackable.is_activated:
        return []
    contexts = [ActivationContext("Personal")]
    if viewer.team_roles:
        teams = db.session.scalars(
            select(Team).where(Team.id.in_(list(viewer.team_roles))).order_by(Team.name)
        )
        contexts += [ActivationContext("Team", team.id, team.name) for team in teams]
    return contexts


def _group_items(viewer: Viewer, trackable: Trackable) -> list[ActiveItem]:
    """The group's other items this caller may see."""
    if trackable.group_id is None:
        return []
    others = db.session.scalars(
        select(Trackable)
        .where(
            Trackable.group_id == trackable.group_id,
            Trackable.id != trackable.id,
            policy.visible_filter(viewer),
        )
        .order_by(Trackable.public_code)
    )
    return [ActiveItem(other) for other in others]


def set_status_message(
    viewer: Viewer, client: str | None, trackable_id: uuid.UUID, message: str
) -> ActiveItem:
    """Remember the status text on this client's session (404 without one). A change is
    an event (its text stays the client's own: the event says only that it changed)."""
    session = find_session(client, trackable_id)
    if session is None:
        raise policy.not_found()
    changed = session.status_message != message
    session.status_message = message
    db.session.flush()
    trackable = db.session.get(Trackable, trackable_id)
    if trackable is None:  # pragma: no cover - the session's row cascades with it
        raise policy.not_found()
    if changed:
        events.record(events.EventType.STATUS_MESSAGE_CHANGED, trackable, actor_id=viewer.user_id)
    return _item(session, trackable)


# Touches this client's session only: other clients' sessions and the account unlock stay. Ending
# one that does not exist is not an error.
def end_active(client: str | None, trackable_id: uuid.UUID) -> None:
    """End this client's session for the trackable, if any."""
    end_session(client, trackable_id)
