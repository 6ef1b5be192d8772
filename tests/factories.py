"""Test data builders: plain functions with defaults and overrides."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from sqlalchemy import inspect

from app.extensions import db
from app.models.category import Category
from app.models.enums import NoteVisibility
from app.models.note import Note, NoteComment
from app.models.trackable import Trackable, TrackableUnlock
from app.models.user import User
from app.services.identity.passwords import hash_password

_sequence = itertools.count(1)
DEFAULT_PASSWORD = "correct-horse-battery-9"
_HASH_CACHE: dict[str, str] = {}


@contextmanager
def one_commit() -> Iterator[None]:
    """The factories commit after each object; while the world is built, a commit is a
    flush, and the world is committed once at the end (several times faster)."""
    session = db.session
    if "commit" in vars(session):  # inside another one_commit: that one commits
        yield
        return
    session.commit = session.flush  # type: ignore[method-assign]
    try:
        yield
    finally:
        del session.commit
    db.session.commit()


def _hash(password: str) -> str:
    # Argon2id is deliberately slow; tests reuse one hash per password.
    if password not in _HASH_CACHE:
        _HASH_CACHE[password] = hash_password(password)
    return _HASH_CACHE[password]


def key(row: Any) -> Any:
    """The primary key of a stored row without loading it again: a commit expires every
    row of the session, and reading `.id` then costs a SELECT, several in each factory
    call that takes rows made before. A key cannot change, so the session's record of it
    is current."""
    identity = inspect(row).identity
    return identity[0] if identity else row.id


def make_user(
    user_name: str | None = None,
    *,
    email: str | None = None,
    password: str = DEFAULT_PASSWORD,
    **fields: Any,
) -> User:
    number = next(_sequence)
    user_name = user_name or f"user_{number}"
    email = email or f"{user_name}@example.com"
    user = User(
        user_name=user_name,
        email=email,
        normalized_email=email.lower(),
        password_hash=_hash(password),
        **fields,
    )
    db.session.add(user)
    db.session.commit()
    return user


def login(
    api: Any,
    email: str | User,
    password: str = DEFAULT_PASSWORD,
    *,
    expect: int = 200,
    **body: Any,
) -> dict[str, Any]:
    """Sign in through POST /api/auth/login (bearer mode); returns the JSON body.

    `email` may be a User. Extra keyword arguments go into the body (`twoFactorCode`...).
    """
    address = email.email if isinstance(email, User) else email
    response = api.post(
        "/api/auth/login?useCookies=false&useSessionCookies=false",
        json={"email": address, "password": password, **body},
    )
    assert response.status_code == expect, response.get_data(as_text=True)
    return response.get_json(force=True)


# --- notes, categories, trackables (notes area) ------------------------------------------


def make_category(
    owner: User | None = None,
    *,
    team_id: Any = None,
    name: str | None = None,
    content_language: str = "en",
    parent: Category | None = None,
    **fields: Any,
) -> Category:
    """A personal category of `owner` (made when omitted), or a team's with `team_id`."""
    if owner is None and team_id is None:
        owner = make_user()
    category = Category(
        owner_user_id=key(owner) if owner is not None and team_id is None else None,
        team_id=team_id,
        name=name or f"Category {next(_sequence)}",
        content_language=parent.content_language if parent else content_language,
        parent_category_id=key(parent) if parent else None,
        **fields,
    )
    db.session.add(category)
    db.session.commit()
    return category


@one_commit()  # a contextmanager decorates too: a fresh one for each call
def make_note(
    owner: User | None = None,
    *,
    category: Category | None = None,
    title: str | None = None,
    visibility: NoteVisibility = NoteVisibility.PRIVATE,
    latitude: float | None = None,
    longitude: float | None = None,
    team_id: Any = None,
    last_activity_utc: datetime | None = None,
    **fields: Any,
) -> Note:
    """A note (private unless told); its category is made in the owner's (or team's) tree.
    What it makes is committed once: each commit also takes a stamp of the sync clock."""
    from app.services.notes.notes import refresh_discoverability

    owner = owner or make_user()
    language = fields.pop("content_language", None)
    if category is None:
        language = language or "en"
        category = make_category(owner, team_id=team_id, content_language=language)
    note = Note(
        owner_user_id=key(owner),
        team_id=team_id,
        category_id=key(category),
        title=title or f"Note {next(_sequence)}",
        content_language=language or category.content_language,
        visibility=visibility,
        latitude=latitude,
        longitude=longitude,
        **fields,
    )
    if last_activity_utc is not None:
        note.last_activity_utc = last_activity_utc
    refresh_discoverability(note)
    db.session.add(note)
    db.session.commit()
    return note


_TRACKABLE_CODES: dict[Any, Any] = {}


def make_trackable(
    owner: User | None = None,
    *,
    public_code: str | None = None,
    secret_code: str | None = None,
    qr_token: str | None = None,
    **fields: Any,
) -> Trackable:
    """A trackable, activated and owned by `owner` (unactivated when None), with its codes
    stored as the service stores them (keyed hashes). The secret and QR token default to
    generated ones; `codes_of(trackable)` gives them back."""
    from flask import current_app

    from app.models.trackable import CodeKind, TrackableCode
    from app.services.trackables.codes import formats as codes

    settings = codes.CodeSettings.from_config(current_app.config)
    number = next(_sequence)
    if owner is not None:
        fields.setdefault("activated_utc", fields.get("created_utc"))
    trackable = Trackable(
        owner_user_id=key(owner) if owner else None,
        public_code=public_code or f"LN-T{number:05d}",
        name=fields.pop("name", f"Trackable {number}"),
        **fields,
    )
    db.session.add(trackable)
    db.session.flush()
    secret = secret_code or codes.new_secret_code(settings)
    token = qr_token or codes.new_qr_token(settings)
    secret_form = secret if secret.upper().startswith(settings.secret_prefix) else secret.upper()
    for kind, form in (
        (CodeKind.PUBLIC, trackable.public_code),
        (CodeKind.SECRET, secret_form),
        (CodeKind.QR, token),
    ):
        db.session.add(
            TrackableCode(
                code_hash=codes.code_hash(settings, form), trackable_id=trackable.id, kind=kind
            )
        )
    db.session.commit()
    _TRACKABLE_CODES[key(trackable)] = (secret, token)
    return trackable


def codes_of(trackable: Trackable) -> tuple[str, str]:
    """The (secret code, QR token) make_trackable stored for this trackable."""
    return _TRACKABLE_CODES[key(trackable)]


def make_group(owner: User | None = None, **fields: Any) -> Any:
    """A trackable group controlled by `owner`."""
    from app.models.trackable import TrackableGroup

    number = next(_sequence)
    name = fields.pop("name", f"Group {number}")
    group = TrackableGroup(
        name=name,
        slug=fields.pop("slug", name.lower().replace(" ", "_")),
        owner_user_id=key(owner) if owner else None,
        **fields,
    )
    db.session.add(group)
    db.session.commit()
    return group


def attach_trackable(note: Note, trackable: Trackable | None = None) -> Trackable:
    """Attach (a new) trackable to the note through the service, as attaching does."""
    from app.services.notes.notes import attach_trackable as attach

    trackable = trackable or make_trackable(db.session.get(User, note.owner_user_id))
    attach(note, trackable)
    db.session.commit()
    return trackable


def unlock_trackable(user: User, trackable: Trackable) -> TrackableUnlock:
    """Record that a signed-in user unlocked the trackable (stored on the account)."""
    unlock = TrackableUnlock(user_id=key(user), trackable_id=key(trackable))
    db.session.add(unlock)
    db.session.commit()
    return unlock


def make_comment(
    note: Note, author: User | None = None, body: str = "Nice spot", **fields: Any
) -> NoteComment:
    comment = NoteComment(
        note_id=key(note), author_user_id=key(author or make_user()), body=body, **fields
    )
    db.session.add(comment)
    db.session.commit()
    return comment


# --- teams (teams area) ------------------------------------------------------------------


def make_team(
    admin: User | None = None,
    *,
    name: str | None = None,
    members: tuple[User, ...] = (),
    **fields: Any,
) -> Any:
    """A team with `admin` (made when omitted) as its admin and `members` as members."""
    from app.models.team import MembershipStatus, Team, TeamMembership, team_slug

    admin = admin or make_user()
    name = name or f"Team {next(_sequence)}"
    fields.setdefault("content_language", "en")
    team = Team(name=name, slug=team_slug(name), title=fields.pop("title", name), **fields)
    db.session.add(team)
    db.session.flush()
    db.session.add(
        TeamMembership(
            team_id=team.id, user_id=key(admin), status=MembershipStatus.MEMBER, is_admin=True
        )
    )
    for member in members:
        db.session.add(
            TeamMembership(team_id=team.id, user_id=key(member), status=MembershipStatus.MEMBER)
        )
    db.session.commit()
    return team


def make_membership(
    team: Any, user: User | None = None, *, status: Any = None, **fields: Any
) -> Any:
    """A record of `user` (made when omitted) with `team`: a member unless `status` says."""
    from app.models.team import MembershipStatus, TeamMembership

    membership = TeamMembership(
        team_id=key(team),
        user_id=key(user or make_user()),
        status=status or MembershipStatus.MEMBER,
        **fields,
    )
    db.session.add(membership)
    db.session.commit()
    return membership


def make_invite_link(
    team: Any, creator: User, *, is_single_use: bool = False, **fields: Any
) -> Any:
    """An invite link of `team` made by `creator` (who should be one of its admins)."""
    from app.models.team import TeamInviteLink
    from app.services.teams.invite_links import new_code

    link = TeamInviteLink(
        team_id=key(team),
        code=fields.pop("code", new_code()),
        created_by_user_id=key(creator),
        is_single_use=is_single_use,
        **fields,
    )
    db.session.add(link)
    db.session.commit()
    return link


def count_guess_misses() -> int:
    """Secret code misses counted against clients' or accounts' guess budgets (one per
    miss)."""
    from app.models.budget import BudgetSpend
    from app.services.trackables.codes.guesses import ACCOUNT, CLIENT

    return count_rows(BudgetSpend, BudgetSpend.budget.in_((CLIENT, ACCOUNT)))


def count_rows(model: Any, *where: Any) -> int:
    """How many rows of `model` match `where`."""
    from sqlalchemy import func, select

    return db.session.scalar(select(func.count()).select_from(model).where(*where)) or 0
