"""Password hashing with Argon2id (memory-hard), the one place passwords are hashed."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_hasher = PasswordHasher()  # argon2-cffi's defaults are Argon2id with RFC 9106 parameters
# Verified against when no account matches, so a miss costs as much time as a hit. Made
# once with the hasher's parameters rather than at each start (about 90 ms of CPU in every
# process); tests/services/identity/test_passwords.py checks that they still match.
TIMING_EQUALISER = "location-notes-timing-equaliser"
TIMING_EQUALISER_HASH = (
    "$argon2id$v=19$m=65536,t=3,p=4$lG1BODceL3+pBfYxl+KYiw"
    "$D+nQWFcd4hZcJpFnUAQJ5WMMc/5b27LpsOyfdsI7ykU"
)
_DUMMY_HASH = TIMING_EQUALISER_HASH


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """True when `password` matches; with no hash, burns the same time and says False."""
    try:
        return _hasher.verify(password_hash or _DUMMY_HASH, password) and bool(password_hash)
    except (VerificationError, InvalidHashError):
        return False


def needs_rehash(password_hash: str) -> bool:
    return _hasher.check_needs_rehash(password_hash)
