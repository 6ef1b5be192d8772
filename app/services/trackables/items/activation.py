"""Trackable activation (contract: Trackable activation; Trackables: reads, creation,
groups, the activation paragraph; Trackable group).

A signed-in caller who can see the unactivated trackable (its creator, or whoever unlocked
it) becomes its owner, the activator; anyone else gets 404, and an activated one is 400
`trackable_already_activated`. With `teamId` it is team-owned: the caller must be an active
member (else 404); its admins then manage it too. Fields left out keep the creator's
values; an activated trackable needs its own name. An optional first journey stop is
recorded in the same transaction. The state change is one conditional UPDATE, so of two
concurrent activations exactly one wins; the other is told it is already activated.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from sqlalchemy import update

from app.auth import Viewer
from app.error_codes import Code
from app.errors import TrackableError, ValidationFailed
from app.extensions import db
from app.models.base import utcnow
from app.models.trackable import JourneyStop, StopPrecision, Trackable, TrackableGroup
from app.models.user import User
from app.policies import trackables as trackable_policy
from app.services import events
from app.services.shared import links
from app.services.trackables.journey import recording


class _Keep(Enum):
    KEEP = "keep"


KEEP: Final = _Keep.KEEP  # a link field the request left out: keep the stored value

NAME_REQUIRED = (
    "An activated trackable needs its own name: send one, or set useGroupDefaultTitle "
    "to copy the group's default title."
)
GROUP_TITLE_EMPTY = "The trackable's group has no default title: send a name."


@dataclass(frozen=True)
class Activation:
    """An activated trackable and the journey stop recorded with it, if any."""

    trackable: Trackable
    initial_stop: JourneyStop | None

    @property
    def initial_journey_stop_id(self) -> uuid.UUID | None:
        return self.initial_stop.id if self.initial_stop is not None else None


# Sent values are stored trimmed; one left out keeps the creator's. For an item of a group, a blank
# or missing value with its useGroupDefault... flag copies the group's default as it is now (not as
# it was when the item was created); a name that ends up blank is 400 on name.
def _text(
    given: str | None,
    current: str,
    *,
    use_default: bool,
    group: TrackableGroup | None,
    default: str,
) -> str:
    """One identity field: the group's current default when asked for and nothing is sent,
    else the value sent (trimmed), else the stored one."""
    sent = given.strip() if given is not None else None
    if use_default and group is not None and not sent:
        return default.strip()
    return sent if sent is not None else current


# useGroupDefaultExternalLink copies the group's default link unless an externalLinkUrl is sent. An
# explicit link is revalidated (services.shared.links); one left out keeps the creator's.
def _link(
    trackable: Trackable,
    group: TrackableGroup | None,
    *,
    url: str | _Keep | None,
    description: str | _Keep | None,
    use_default: bool,
) -> tuple[str | None, str, bool]:
    """(url, description, append public code) to store."""
    sent_url = url.strip() if isinstance(url, str) else None
    if use_default and group is not None and not sent_url:
        return (
            group.default_external_link_url,
            group.default_external_link_description,
            group.default_external_link_append_public_code,
        )
    changes: dict[str, Any] = {}
    if url is not KEEP:
        changes["external_link_url"] = url
    if description is not KEEP:
        changes["external_link_description"] = description
    changed = links.changed_link(
        trackable.external_link_url, trackable.external_link_description, changes
    )
    url_now, description_now = changed or (
        trackable.external_link_url,
        trackable.external_link_description,
    )
    append = trackable.external_link_append_public_code and url_now is not None
    return url_now, description_now, append


def _team_scope(viewer: Viewer, team_id: uuid.UUID | None) -> uuid.UUID | None:
    if team_id is None:
        return None
    trackable_policy.require_trackable_team(viewer, team_id)
    return team_id


# WHERE owner_user_id IS NULL: of two concurrent activations exactly one changes a row.
def claim_activation(trackable: Trackable, values: dict[str, Any]) -> bool:
    """Make `trackable` activated with `values`, unless someone did first (True: ours).

    One conditional UPDATE: the database, not an earlier read, decides who wins a race.
    """
    claimed = db.session.execute(
        update(Trackable)
        .where(Trackable.id == trackable.id, Trackable.owner_user_id.is_(None))
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    return claimed.rowcount == 1  # type: ignore[attr-defined]


def activate(
    viewer: Viewer,
    trackable_id: uuid.UUID,
    *,
    name: str | None = None,
    description: str | None = None,
    status_message: str | None = None,
    use_group_default_title: bool = False,
    use_group_default_description: bool = False,
    use_group_default_status_message: bool = False,
    team_id: uuid.UUID | None = None,
    external_link_url: str | _Keep | None = KEEP,
    external_link_description: str | _Keep | None = KEEP,
    use_group_default_external_link: bool = False,
    initial_journey_stop_latitude: float | None = None,
    initial_journey_stop_longitude: float | None = None,
    initial_journey_stop_precision: StopPrecision = StopPrecision.EXACT,
) -> Activation:
    """POST /api/trackables/{trackableId}/activate (contract: Trackable activation)."""
    user = viewer.account
    trackable = trackable_policy.get_visible(viewer, trackable_id)
    if trackable.is_activated:
        raise TrackableError(
            Code.TRACKABLE_ALREADY_ACTIVATED, "This trackable is already activated."
        )
    _check_stop_pair(initial_journey_stop_latitude, initial_journey_stop_longitude)
    scope = _team_scope(viewer, team_id)
    group = trackable.group
    title = _text(
        name,
        trackable.name,
        use_default=use_group_default_title,
        group=group,
        default=group.default_trackable_title if group else "",
    )
    if not title:
        missing_default = use_group_default_title and group is not None
        raise ValidationFailed({"name": [GROUP_TITLE_EMPTY if missing_default else NAME_REQUIRED]})
    url, link_description, append = _link(
        trackable,
        group,
        url=external_link_url,
        description=external_link_description,
        use_default=use_group_default_external_link,
    )
    now = utcnow()
    values = {
        "owner_user_id": user.id,
        "team_id": scope,
        "activated_utc": now,
        "last_activity_utc": now,
        "updated_utc": now,
        "name": title,
        "description": _text(
            description,
            trackable.description,
            use_default=use_group_default_description,
            group=group,
            default=group.default_trackable_description if group else "",
        ),
        "status_message": _text(
            status_message,
            trackable.status_message,
            use_default=use_group_default_status_message,
            group=group,
            default=group.default_status_message if group else "",
        ),
        "external_link_url": url,
        "external_link_description": link_description,
        "external_link_append_public_code": append,
    }
    if not claim_activation(trackable, values):
        raise TrackableError(
            Code.TRACKABLE_ALREADY_ACTIVATED, "This trackable is already activated."
        )
    db.session.refresh(trackable)
    events.record(events.EventType.ACTIVATED, trackable, actor_id=user.id)
    stop = None
    if initial_journey_stop_latitude is not None and initial_journey_stop_longitude is not None:
        stop = recording.record_stop(
            trackable,
            latitude=initial_journey_stop_latitude,
            longitude=initial_journey_stop_longitude,
            precision=initial_journey_stop_precision,
            created_by=user,
            display_name=_display_name(user),
            is_anonymous=False,
        )
    db.session.flush()
    return Activation(trackable, stop)


# initialJourneyStopLatitude and ...Longitude: both or neither.
def _check_stop_pair(latitude: float | None, longitude: float | None) -> None:
    """Both coordinates of the initial stop, or neither (400 naming the missing one)."""
    if (latitude is None) == (longitude is None):
        return
    missing = "initialJourneyStopLongitude" if longitude is None else "initialJourneyStopLatitude"
    raise ValidationFailed({missing: ["Give both initial journey stop coordinates, or neither."]})


def _display_name(user: User) -> str:
    return user.display_name or user.user_name
