"""Test data builders: plain functions with defaults and overrides."""

from __future__ import annotations

import itertools
from typing import Any

from app.extensions import db
from app.models.user import User
from app.services.passwords import hash_password

_sequence = itertools.count(1)
DEFAULT_PASSWORD = "correct-horse-battery-9"
_HASH_CACHE: dict[str, str] = {}


def _hash(password: str) -> str:
    # Argon2id is deliberately slow; tests reuse one hash per password.
    if password not in _HASH_CACHE:
        _HASH_CACHE[password] = hash_password(password)
    return _HASH_CACHE[password]


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
