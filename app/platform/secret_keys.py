"""SECRET_KEY's two jobs, kept apart so that it can rotate.

What is signed (website sessions, finders' unlock cookies, e-mail links, page cursors) is
signed with SECRET_KEY and checked against it and SECRET_KEY_FALLBACKS (SECRET_KEYS_PREVIOUS
in the environment): a rotation signs nobody out during its overlap. What is stored as an
HMAC (recovery codes, unlock sessions' client keys, the guess budget's, lockout's and
reports' keys) is keyed by RECORDS_KEY, one key per purpose derived from it, so SECRET_KEY
can change without voiding them. Unset, RECORDS_KEY is SECRET_KEY itself, used as 0.1.0 did.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Mapping
from typing import Any


def signing_keys(config: Mapping[str, Any]) -> list[str]:
    """The keys a signature is checked against, SECRET_KEY last (itsdangerous signs with
    the last; Flask's session builds the same list)."""
    return [
        *(str(key) for key in config.get("SECRET_KEY_FALLBACKS") or ()),
        str(config["SECRET_KEY"]),
    ]


def record_key(config: Mapping[str, Any], purpose: str) -> bytes:
    """The key of what `purpose` stores as an HMAC: derived from RECORDS_KEY when it is
    set, SECRET_KEY itself otherwise (the 0.1.0 arrangement, so an upgrade keeps all)."""
    records = str(config.get("RECORDS_KEY") or "")
    if not records:
        return str(config["SECRET_KEY"]).encode()
    return _derived(records, purpose)


def earlier_record_key(config: Mapping[str, Any]) -> bytes | None:
    """The key what was stored before RECORDS_KEY was set is checked under: RECORDS_KEY
    itself, which the upgrade steps set to the SECRET_KEY of that time."""
    records = str(config.get("RECORDS_KEY") or "")
    return records.encode() if records else None


def record_hmac(key: bytes, message: bytes) -> str:
    return hmac.new(key, message, hashlib.sha256).hexdigest()


@functools.lru_cache(maxsize=32)
def _derived(records: str, purpose: str) -> bytes:
    return hmac.new(
        records.encode(), b"location-notes/" + purpose.encode(), hashlib.sha256
    ).digest()
