"""The demo data set behind `flask seed demo`: idempotent, realistic, small."""

from __future__ import annotations

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
