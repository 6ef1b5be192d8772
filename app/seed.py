"""The demo data set behind `flask seed demo`: idempotent, realistic, small, and enough for
a newcomer to try every page: confirmed accounts, a team, public and private notes, an
activated trackable with a journey and one waiting for activation, their codes printed."""

from __future__ import annotations

from typing import Any

from app.extensions import db
from app.models.user import User
from app.services.identity import hash_password

DEMO_PASSWORD = "demo-walks-2026"  # noqa: S105 - published demo credential, local data only
DEMO_USERS = [
    ("ada@example.com", "ada_walks", "Ada"),
    ("ben@example.com", "ben_maps", "Ben"),
    ("chloe@example.com", "chloe_trails", "Chloé"),
]


def seed_demo_users() -> str:
    created = 0
    for email, user_name, display_name in DEMO_USERS:
        if db.session.query(User).filter_by(normalized_email=email).one_or_none():
            continue
        db.session.add(
            User(
                email=email,
                normalized_email=email,
                user_name=user_name,
                display_name=display_name,
                password_hash=hash_password(DEMO_PASSWORD),
                is_email_confirmed=True,
            )
        )
        created += 1
    db.session.flush()
    return f"demo users: {created} created (password {DEMO_PASSWORD!r})"


DEMO_NOTES = [
    # (user name, title, body, latitude, longitude, visibility, language)
    (
        "ada_walks",
        "Tempelhof field at sunset",
        "Wide open runway, kites everywhere.",
        52.4735,
        13.4030,
        "Public",
        "en",
    ),
    (
        "ada_walks",
        "Quiet bench by the Landwehr canal",
        "Best coffee stop on the walk.",
        52.4960,
        13.4190,
        "Public",
        "en",
    ),
    ("ada_walks", "Spare key location", "Behind the blue flower pot.", None, None, "Private", "en"),
    (
        "ben_maps",
        "Pont des Arts",
        "Locks are gone, the view is not.",
        48.8583,
        2.3375,
        "Public",
        "fr",
    ),
    (
        "ben_maps",
        "Marché d'Aligre",
        "Sunday morning market, cheese stall on the left.",
        48.8490,
        2.3785,
        "Public",
        "fr",
    ),
    (
        "chloe_trails",
        "Geocache box near the lake",
        "Appears once its trackable is found.",
        47.3667,
        8.5500,
        "VisibleOnceAssociatedTrackableAccessed",
        "de",
    ),
]


def seed_demo_notes() -> str:
    """A few notes per demo user, in their languages' default categories."""
    from sqlalchemy import select

    from app.auth import build_viewer
    from app.models.category import OwnerScope
    from app.models.enums import NoteVisibility
    from app.models.note import Note
    from app.services import notes

    created = 0
    for user_name, title, body, latitude, longitude, visibility, language in DEMO_NOTES:
        user = db.session.scalar(select(User).where(User.user_name == user_name))
        if user is None or db.session.scalar(
            select(Note.id).where(Note.owner_user_id == user.id, Note.title == title)
        ):
            continue
        notes.create_note(
            build_viewer(user),
            OwnerScope.personal(user.id),
            title=title,
            body=body,
            latitude=latitude,
            longitude=longitude,
            visibility=NoteVisibility(visibility),
            content_language=language,
            default_language=language,
        )
        created += 1
    return f"demo notes: {created} created"


DEMO_TEAM = ("ada_walks", "Canal walkers", "Walks along Berlin's canals, with a notebook.")
# (owner, name, its own secret code: fixed, so a second run prints the same codes; whether
# activated; its journey as (finder, latitude, longitude))
DEMO_TRACKABLES = [
    (
        "ada_walks",
        "Travelling teddy",
        "DEMO-TEDDY-2026",
        True,
        [("ben_maps", 48.8566, 2.3522), ("chloe_trails", 47.3769, 8.5417)],
    ),
    ("ada_walks", "Postcard in a bottle", "DEMO-BOTTLE-2026", False, []),
]


def seed_demo_team() -> str:
    """Ada's team (she is its admin), made once."""
    from sqlalchemy import select

    from app.auth import build_viewer
    from app.models.team import Team
    from app.services import teams

    user_name, name, description = DEMO_TEAM
    owner = db.session.scalar(select(User).where(User.user_name == user_name))
    if owner is not None and not db.session.scalar(select(Team.id).where(Team.name == name)):
        teams.create_team(
            build_viewer(owner), name=name, description=description, default_language="en"
        )
    return f'demo team: "{name}", its admin {owner.email if owner else user_name}'


def seed_demo_trackables(config: Any) -> str:
    """Ada's trackables: one activated with a journey, one waiting for activation; each
    with a fixed secret code of its own. Lists their codes and the pages that show them."""
    from sqlalchemy import select

    from app.auth import build_viewer
    from app.models.trackable import Trackable
    from app.services import trackables

    guess_client = trackables.guess_key("127.0.0.1", config)
    settings = trackables.CodeSettings.from_config(config)
    base = str(config["PUBLIC_BASE_URL"]).rstrip("/")
    lines = ["demo trackables:"]
    for user_name, name, secret, activated, journey in DEMO_TRACKABLES:
        owner = db.session.scalar(select(User).where(User.user_name == user_name))
        if owner is None:
            continue
        found = db.session.scalar(
            select(Trackable).where(
                Trackable.created_by_user_id == owner.id, Trackable.name == name
            )
        )
        if found is None:
            created = trackables.create_trackable(
                build_viewer(owner),
                settings=settings,
                base_url=base,
                guess_client=guess_client,
                config=config,
                name=name,
                activate_immediately=activated,
                secret_code=secret,
            )
            (item,) = created.items
            for finder_name, latitude, longitude in journey:
                finder = db.session.scalar(select(User).where(User.user_name == finder_name))
                trackables.add_stop(
                    build_viewer(finder),
                    item.trackable_id,
                    latitude=latitude,
                    longitude=longitude,
                    display_name=None,
                    credential=trackables.Credential(secret, guess_client, config),
                )
            found = db.session.scalars(
                select(Trackable).where(Trackable.id == item.trackable_id)
            ).one()
        state = "activated" if found.is_activated else "not activated yet"
        lines.append(f"  {name} ({state}): public code {found.public_code}, secret code {secret}")
        if found.is_activated:
            lines.append(f"    its page: {base}/en/trackables/{found.public_code}")
        lines.append(f"    a finder's entry with the secret code: {base}/trackable/{secret}")
    return "\n".join(lines)


def demo_sign_in(config: Any) -> str:
    """Where and as whom to sign in."""
    base = str(config["PUBLIC_BASE_URL"]).rstrip("/")
    emails = ", ".join(email for email, _name, _display in DEMO_USERS)
    return f"sign in at {base}/en/sign-in as {emails}, password {DEMO_PASSWORD!r}"
