"""Teams (contract: Team, Teams; decisions: Teams): create, list, settings and delete, the
team read model, the team's notes on top of services.notes (with `OwnerScope.team`), and
the notes of a public team page.

`name` is the unique public handle, unique up to case and separators through its slug, and
fixed after creation. Deleting a team loses no note: its notes (tombstones too) go back to
their authors as private personal notes; its categories go with it, its trackables stay
with their activators.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, exc, func, select, update

from app.auth import Viewer
from app.errors import ValidationFailed
from app.extensions import db
from app.hooks import remove_children
from app.models.base import utcnow
from app.models.category import Category, OwnerScope
from app.models.enums import NoteVisibility
from app.models.note import Note
from app.models.team import (
    JoinPolicy,
    MembershipStatus,
    PageVisibility,
    Team,
    TeamInviteLink,
    TeamMembership,
    TeamRole,
    team_slug,
)
from app.models.trackable import Trackable, TrackableGroup
from app.policies import notes as note_policy
from app.policies import teams as team_policy
from app.services import categories, events, notes
from app.services.identity import RESERVED_USER_NAMES
from app.services.shared import links, sync_log
from app.services.shared.areas import Area
from app.services.shared.pages import Key, Listing, Page, page_of

NAME_TAKEN = "A team with this name already exists."


# Letters, digits, spaces, - and _ (shape checked by the schema); not a reserved word. title
# defaults to the name. External links are revalidated on create, and on settings when
# externalLinkUrl is sent.
def _checked_slug(name: str) -> str:
    """The slug of a new team name: not reserved, not taken (400 on `name`)."""
    slug = team_slug(name)
    if slug.replace("-", "_") in RESERVED_USER_NAMES:
        raise ValidationFailed({"name": [f"The team name '{name}' is reserved."]})
    if db.session.scalar(select(func.count()).select_from(Team).where(Team.slug == slug)):
        raise ValidationFailed({"name": [NAME_TAKEN]})
    return slug


# A team's lastActivityUtc is the later of its own activity (creation, settings, memberships, notes
# leaving it) and its live notes' activity.
def touch(team: Team) -> None:
    team.last_activity_utc = utcnow()


# --- the read model ----------------------------------------------------------------------


def _member_counts(team_ids: list[uuid.UUID]) -> dict[uuid.UUID, int]:
    rows = db.session.execute(
        select(TeamMembership.team_id, func.count())
        .where(
            TeamMembership.team_id.in_(team_ids),
            TeamMembership.status == MembershipStatus.MEMBER,
        )
        .group_by(TeamMembership.team_id)
    )
    return {row[0]: row[1] for row in rows.all()}


def _note_activity(team_ids: list[uuid.UUID]) -> dict[uuid.UUID, datetime]:
    rows = db.session.execute(
        select(Note.team_id, func.max(Note.last_activity_utc))
        .where(Note.team_id.in_(team_ids), Note.is_deleted.is_(False))
        .group_by(Note.team_id)
    )
    return {
        team_id: latest
        for team_id, latest in rows.all()
        if team_id is not None and latest is not None
    }


@dataclass(frozen=True)
class TeamView:
    """A team as its read model shows it to one caller: the team, the caller's own record
    with it (if any), its active member count and its latest activity."""

    team: Team
    membership: TeamMembership | None
    member_count: int
    last_activity_utc: datetime

    @property
    def membership_id(self) -> uuid.UUID | None:
        return self.membership.id if self.membership is not None else None

    @property
    def membership_status(self) -> MembershipStatus | None:
        return self.membership.status if self.membership is not None else None

    @property
    def role(self) -> TeamRole | None:
        """The caller's role while their membership is active, else None."""
        if self.membership is None or not self.membership.is_active:
            return None
        return TeamRole.ADMIN if self.membership.is_admin else TeamRole.MEMBER


def team_views(pairs: Iterable[tuple[Team, TeamMembership | None]]) -> list[TeamView]:
    """Team read models, each with the caller's own record with the team (if any)."""
    pairs = list(pairs)
    ids = [team.id for team, _ in pairs]
    counts, activity = (_member_counts(ids), _note_activity(ids)) if ids else ({}, {})
    return [
        TeamView(
            team=team,
            membership=membership,
            member_count=counts.get(team.id, 0),
            last_activity_utc=max(
                team.last_activity_utc, activity.get(team.id, team.last_activity_utc)
            ),
        )
        for team, membership in pairs
    ]


def _by_title(row: Any) -> Key:
    return (row[0].title.casefold(), str(row[0].id))


def list_my_teams(viewer: Viewer, *, page: Page | None = None) -> Listing[TeamView]:
    """The caller's teams: memberships, invitations and requests, by title (case-folded,
    which SQL cannot say alike on both databases: sorted here); all of them or one
    `page`."""
    user_id = viewer.account.id
    rows = list(
        db.session.execute(
            select(Team, TeamMembership)
            .join(TeamMembership, TeamMembership.team_id == Team.id)
            .where(TeamMembership.user_id == user_id)
        ).all()
    )
    rows.sort(key=_by_title)
    found = page_of(rows, _by_title, page)
    return found.with_items(team_views((team, membership) for team, membership in found.items))


# --- create, settings, delete ------------------------------------------------------------


def create_team(
    viewer: Viewer,
    *,
    name: str,
    default_language: str,
    title: str | None = None,
    description: str | None = None,
    external_link_url: str | None = None,
    external_link_description: str | None = None,
    join_policy: JoinPolicy = JoinPolicy.REQUESTS_ALLOWED,
    page_visibility: PageVisibility = PageVisibility.PUBLIC,
    default_note_visibility: NoteVisibility = NoteVisibility.PRIVATE,
    content_language: str | None = None,
) -> TeamView:
    """A new team whose creator is its first admin."""
    user_id = viewer.account.id
    slug = _checked_slug(name)
    url, link_description = links.revalidate_link(external_link_url, external_link_description)
    now = utcnow()
    team = Team(
        name=name,
        slug=slug,
        title=(title or "").strip() or name,
        description=description or "",
        external_link_url=url,
        external_link_description=link_description,
        join_policy=join_policy,
        page_visibility=page_visibility,
        default_note_visibility=default_note_visibility,
        content_language=categories.canonical_language(content_language or default_language),
        created_utc=now,
        updated_utc=now,
        last_activity_utc=now,
    )
    try:
        with db.session.begin_nested():  # two creations racing for one name
            db.session.add(team)
    except exc.IntegrityError:
        raise ValidationFailed({"name": [NAME_TAKEN]}) from None
    membership = TeamMembership(
        team_id=team.id,
        user_id=user_id,
        status=MembershipStatus.MEMBER,
        is_admin=True,
        created_utc=now,
        updated_utc=now,
    )
    db.session.add(membership)
    db.session.flush()
    return team_views([(team, membership)])[0]


SETTINGS_FIELDS = (
    "description",
    "join_policy",
    "page_visibility",
    "default_note_visibility",
)


def update_settings(viewer: Viewer, team_id: uuid.UUID, changes: dict[str, Any]) -> TeamView:
    """Admins change the fields present; the others stay. The name is fixed (400)."""
    team = team_policy.require_admin(viewer, team_id)
    if changes.get("name", team.name) != team.name:
        raise ValidationFailed({"name": ["A team's name is fixed after creation."]})
    link = links.changed_link(team.external_link_url, team.external_link_description, changes)
    for field in SETTINGS_FIELDS:
        if field in changes:
            setattr(team, field, changes[field] if field != "description" else changes[field] or "")
    if "title" in changes:
        team.title = (changes["title"] or "").strip() or team.name
    if changes.get("content_language"):
        team.content_language = categories.canonical_language(changes["content_language"])
    if link is not None:
        team.external_link_url, team.external_link_description = link
    team.updated_utc = team.last_activity_utc = utcnow()
    db.session.flush()
    return team_views([(team, team_policy.own_membership(viewer, team_id))])[0]


def delete_team(viewer: Viewer, team_id: uuid.UUID) -> None:
    """Admins delete a team; see `dismantle` for what becomes of its content."""
    dismantle(team_policy.require_admin(viewer, team_id, exclusive=True))


def dismantle(team: Team) -> None:
    """Remove a team without losing a note: notes back to their authors, categories
    deleted, trackables kept by their activators, links and memberships ended."""
    return_notes_to_authors(team.id)
    remove_children("team", [team.id])  # the team page's images
    in_team = Category.team_id == team.id
    members = select(TeamMembership.user_id).where(
        TeamMembership.team_id == team.id, TeamMembership.status == MembershipStatus.MEMBER
    )
    sync_log.record_team_access(team.id, db.session.scalars(members))
    sync_log.record_categories_left_team(
        team.id, db.session.scalars(select(Category.id).where(in_team))
    )
    # Unlink first: the tree's self-reference must not block deleting it in one statement.
    db.session.execute(update(Category).where(in_team).values(parent_category_id=None))
    db.session.execute(delete(Category).where(in_team))
    db.session.execute(update(Trackable).where(Trackable.team_id == team.id).values(team_id=None))
    db.session.execute(
        update(TrackableGroup).where(TrackableGroup.team_id == team.id).values(team_id=None)
    )
    db.session.execute(delete(TeamInviteLink).where(TeamInviteLink.team_id == team.id))
    db.session.execute(delete(TeamMembership).where(TeamMembership.team_id == team.id))
    db.session.delete(team)
    db.session.flush()


# Each note goes to its author's "Notes" root category of the note's language.
def return_notes_to_authors(team_id: uuid.UUID, note_id: uuid.UUID | None = None) -> None:
    """The team's notes (or one of them) become private personal notes of their authors,
    in the author's "Notes" root of the note's language (made on demand)."""
    where = [Note.team_id == team_id] + ([Note.id == note_id] if note_id is not None else [])
    sync_log.record_notes_left_team(team_id, db.session.scalars(select(Note.id).where(*where)))
    groups = db.session.execute(
        select(Note.owner_user_id, Note.content_language).where(*where).distinct()
    ).all()
    now = utcnow()
    for owner_id, language in groups:
        category = categories.default_category(OwnerScope.personal(owner_id), language)
        db.session.execute(
            update(Note)
            .where(*where, Note.owner_user_id == owner_id, Note.content_language == language)
            .values(
                team_id=None,
                category_id=category.id,
                visibility=NoteVisibility.PRIVATE,
                # Private: Note.computed_discoverability() is False.
                is_publicly_discoverable=False,
                updated_utc=now,
            )
        )
    db.session.flush()


# --- team notes: services.notes with the team's scope, plus what only teams do --------


def remove_note_from_team(viewer: Viewer, team_id: uuid.UUID, note_id: uuid.UUID) -> None:
    """The note leaves the team and stays its author's (private, personal): its author or a
    team admin (the note rule), in the team's workspace."""
    notes.get_managed(viewer, OwnerScope.team(team_id), note_id)
    return_notes_to_authors(team_id, note_id)
    _touch_team(team_id)
    team = db.session.get(Team, team_id)
    if team is not None:
        events.record_team(
            events.EventType.TEAM_NOTE_REMOVED, team, actor_id=viewer.user_id, note_id=note_id
        )


def delete_team_note(viewer: Viewer, team_id: uuid.UUID, note_id: uuid.UUID) -> None:
    """Tombstone a team note (services.notes.delete_note); the team's activity moves."""
    notes.delete_note(viewer, OwnerScope.team(team_id), note_id)
    _touch_team(team_id)


def _touch_team(team_id: uuid.UUID) -> None:
    team = db.session.get(Team, team_id)
    if team is not None:
        touch(team)
    db.session.flush()


def public_team_notes(
    viewer: Viewer,
    team_name: str,
    area: Area,
    *,
    content_language: str | None = None,
    include_all_languages: bool = False,
    cap: int,
) -> notes.NoteList:
    """A team page's notes near a point or in a window: members see every team note, others
    what they may open; a members-only page is 404 for everyone else."""
    team = team_policy.get_public_team(viewer, team_name)
    return notes.page_notes(
        viewer,
        note_policy.team_page_filter(team.id),
        area,
        content_language=content_language,
        include_all_languages=include_all_languages,
        cap=cap,
    )
