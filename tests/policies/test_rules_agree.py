"""Each rule's Python check and its SQL filter agree, on generated worlds (Hypothesis):
users, teams, memberships of every status and role, notes, trackables, unlocks and
webhook subscriptions. For every viewer, the ids the Python rule allows equal the ids the
filter selects: notes `can_view`/`visible_filter`, anonymous discovery, trackables
`can_view`/`visible_filter` and `can_manage`/`manage_filter`, webhooks `can_manage`/`manage_filter`.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from app.auth import ANONYMOUS, Viewer, build_viewer
from app.extensions import db
from app.models.enums import NoteVisibility
from app.models.note import Note
from app.models.team import MembershipStatus, Team, TeamMembership, team_slug
from app.models.trackable import Trackable, TrackableVisibility
from app.models.webhook import WebhookSubscription
from app.policies import notes as note_policy
from app.policies import trackables as trackable_policy
from app.policies import webhooks as webhook_policy
from app.services.notes import notes as note_service
from tests.factories import attach_trackable, make_note, make_trackable, make_user, unlock_trackable

# CI replays the same examples every run, so a red run is never luck; RULES_AGREE_RANDOM=1
# (with RULES_AGREE_EXAMPLES=200, say) explores new ones.
EXAMPLES = int(os.environ.get("RULES_AGREE_EXAMPLES", "12"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=os.environ.get("RULES_AGREE_RANDOM") != "1",
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

RECORDS = (None, "member", "admin", MembershipStatus.INVITED, MembershipStatus.REQUESTING)
NOTE_VISIBILITIES = tuple(NoteVisibility)
TRACKABLE_VISIBILITIES = tuple(TrackableVisibility)


@dataclass
class Spec:
    """A drawn world, by indexes (Hypothesis shows it when an example fails)."""

    users: int
    teams: int
    records: dict[tuple[int, int], Any]  # (user, team) -> membership record
    # (activator or None, creator, team or None, visibility)
    trackables: list[tuple[int | None, int, int | None, TrackableVisibility]]
    # (owner, team or None, visibility, attached trackables, visibility after, deleted)
    notes: list[tuple[int, int | None, NoteVisibility, set[int], NoteVisibility | None, bool]]
    unlocks: set[tuple[int, int]]  # (user, trackable), stored on the account
    cookie: set[int]  # trackables an anonymous client unlocked (its session cookie)
    webhooks: list[tuple[int, int | None]] = field(default_factory=list)  # (owner, team)


@st.composite
def specs(draw: Any) -> Spec:
    users = draw(st.integers(2, 4))
    teams = draw(st.integers(1, 2))
    user, team = st.integers(0, users - 1), st.integers(0, teams - 1)
    some_team = st.none() | team
    records = {(u, t): draw(st.sampled_from(RECORDS)) for u in range(users) for t in range(teams)}
    trackables = draw(
        st.lists(
            st.tuples(st.none() | user, user, some_team, st.sampled_from(TRACKABLE_VISIBILITIES)),
            min_size=2,
            max_size=4,
        )
    )
    index = st.integers(0, len(trackables) - 1)
    attached = st.sets(index, max_size=2)
    notes = draw(
        st.lists(
            st.tuples(
                user,
                some_team,
                st.sampled_from(NOTE_VISIBILITIES),
                attached,
                st.none() | st.sampled_from(NOTE_VISIBILITIES),
                st.booleans(),
            ),
            min_size=2,
            max_size=5,
        )
    )
    unlocks = draw(st.sets(st.tuples(user, index), max_size=3))
    cookie = draw(st.sets(index, max_size=2))
    webhooks = draw(st.lists(st.tuples(user, some_team), min_size=2, max_size=4))
    return Spec(users, teams, records, trackables, notes, unlocks, cookie, webhooks)


@dataclass
class World:
    viewers: dict[str, Viewer]
    notes: list[Note]
    trackables: list[Trackable]
    webhooks: list[WebhookSubscription]


def build(spec: Spec) -> World:
    """The rows of `spec`, written the way the services write them, committed."""
    users = [make_user(f"u{uuid.uuid4().hex[:12]}") for _ in range(spec.users)]
    teams = []
    for _ in range(spec.teams):
        name = f"Team {uuid.uuid4().hex[:12]}"
        teams.append(Team(name=name, slug=team_slug(name), title=name, content_language="en"))
    db.session.add_all(teams)
    db.session.flush()
    for (u, t), record in spec.records.items():
        if record is None:
            continue
        status = MembershipStatus.MEMBER if record in {"member", "admin"} else record
        db.session.add(
            TeamMembership(
                team_id=teams[t].id, user_id=users[u].id, status=status, is_admin=record == "admin"
            )
        )
    db.session.commit()

    def team_id(t: int | None) -> uuid.UUID | None:
        return teams[t].id if t is not None else None

    trackables = [
        make_trackable(
            users[owner] if owner is not None else None,
            created_by_user_id=users[creator].id,
            team_id=team_id(t),
            visibility=visibility,
        )
        for owner, creator, t, visibility in spec.trackables
    ]
    for u, k in spec.unlocks:
        unlock_trackable(users[u], trackables[k])
    notes = []
    for owner, t, visibility, attached, later, deleted in spec.notes:
        note = make_note(users[owner], team_id=team_id(t), visibility=visibility)
        for k in sorted(attached):
            attach_trackable(note, trackables[k])
        if later is not None:  # as services.notes.move_note changes it
            note.visibility = later
            note_service.refresh_discoverability(note)
        if deleted:  # as services.notes.delete_note tombstones it
            for name, value in note_service.tombstone_values(None).items():
                setattr(note, name, value)
            note_service.refresh_discoverability(note)
        db.session.commit()
        notes.append(note)
    webhooks = []
    for owner, t in spec.webhooks:
        subscription = WebhookSubscription(
            owner_user_id=users[owner].id,
            team_id=team_id(t),
            url="https://hooks.example.com/in",
            secret_encrypted="sealed",
        )
        db.session.add(subscription)
        webhooks.append(subscription)
    db.session.commit()
    viewers = {f"user {u}": build_viewer(user) for u, user in enumerate(users)}
    viewers["anonymous"] = build_viewer(None)
    viewers["anonymous with a cookie"] = build_viewer(
        None, unlocked_trackable_ids=frozenset(trackables[k].id for k in spec.cookie)
    )
    return World(viewers, notes, trackables, webhooks)


def selected(model: Any, rows: list[Any], where: Any) -> set[uuid.UUID]:
    """The ids among `rows` that the SQL filter `where` selects."""
    ids = [row.id for row in rows]
    if not ids:
        return set()
    return set(db.session.scalars(select(model.id).where(model.id.in_(ids), where)))


def allowed(rows: list[Any], rule: Any) -> set[uuid.UUID]:
    return {row.id for row in rows if rule(row)}


def test_notes_can_view_agrees_with_visible_filter_and_discovery(app):
    @SETTINGS
    @given(spec=specs())
    def check(spec: Spec) -> None:
        world = build(spec)
        for name, viewer in world.viewers.items():
            python = allowed(world.notes, lambda note, v=viewer: note_policy.can_view(v, note))
            sql = selected(Note, world.notes, note_policy.visible_filter(viewer))
            assert python == sql, name
        # anonymous discovery: what an anonymous viewer without unlocks may open, and the
        # rule on the note's values, both equal the stored-flag filter
        discovered = selected(Note, world.notes, note_policy.public_discovery_filter())
        assert allowed(world.notes, lambda note: note_policy.can_view(ANONYMOUS, note)) == (
            discovered
        )
        assert allowed(world.notes, lambda note: note.computed_discoverability()) == discovered

    check()


def test_trackables_can_view_and_can_manage_agree_with_their_filters(app):
    @SETTINGS
    @given(spec=specs())
    def check(spec: Spec) -> None:
        world = build(spec)
        for name, viewer in world.viewers.items():
            rows = world.trackables
            views = allowed(rows, lambda t, v=viewer: trackable_policy.can_view(v, t))
            manages = allowed(rows, lambda t, v=viewer: trackable_policy.can_manage(v, t))
            assert views == selected(Trackable, rows, trackable_policy.visible_filter(viewer)), name
            assert manages == selected(Trackable, rows, trackable_policy.manage_filter(viewer)), (
                name
            )
        # the anonymous public list is what an anonymous viewer without unlocks sees
        assert allowed(world.trackables, lambda t: trackable_policy.can_view(ANONYMOUS, t)) == (
            selected(Trackable, world.trackables, trackable_policy.public_list_filter())
        )

    check()


def test_webhooks_can_manage_agrees_with_manage_filter(app):
    @SETTINGS
    @given(spec=specs())
    def check(spec: Spec) -> None:
        spec.notes, spec.trackables, spec.unlocks, spec.cookie = [], [], set(), set()
        world = build(spec)
        for name, viewer in world.viewers.items():
            python = allowed(world.webhooks, lambda s, v=viewer: webhook_policy.can_manage(v, s))
            sql = selected(
                WebhookSubscription, world.webhooks, webhook_policy.manage_filter(viewer)
            )
            assert python == sql, name

    check()
