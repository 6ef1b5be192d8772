"""The demo data set behind `flask seed demo`: idempotent, realistic, small."""

from __future__ import annotations

from app.extensions import db
from app.models.user import User
from app.services.passwords import hash_password

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
