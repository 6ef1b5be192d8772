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


RECORDS = "records"  # the name of RECORDS_KEY's fingerprint (KeyFingerprint)


class RecordsKeyMismatch(Exception):
    """The records key is not the one the stored codes were made under."""


def records_fingerprint(config: Mapping[str, Any]) -> str:
    """An HMAC of a fixed text under the records key (RECORDS_KEY, else SECRET_KEY)."""
    root = str(config.get("RECORDS_KEY") or "") or str(config["SECRET_KEY"])
    return record_hmac(root.encode(), b"location-notes records key fingerprint")


def check_records_key(config: Mapping[str, Any], session: Any) -> None:
    """Record the records key's fingerprint at the first start; raise RecordsKeyMismatch
    at a start under another key, which would void every recovery code and unlock. A
    database not migrated yet (`flask db upgrade` makes the app first) is left alone."""
    from sqlalchemy import inspect

    from app.models.base import utcnow
    from app.models.keys import KeyFingerprint
    from app.platform.database import insert_ignoring_duplicates

    if not inspect(session.get_bind()).has_table(KeyFingerprint.__tablename__):
        return
    fingerprint = records_fingerprint(config)
    row = {"name": RECORDS, "fingerprint": fingerprint, "recorded_utc": utcnow()}
    insert_ignoring_duplicates(session, KeyFingerprint, ["name"], [row])
    session.commit()
    stored = session.get(KeyFingerprint, RECORDS).fingerprint
    if stored == fingerprint:
        return
    which = "RECORDS_KEY" if config.get("RECORDS_KEY") else "SECRET_KEY (RECORDS_KEY is unset)"
    raise RecordsKeyMismatch(
        f"Refusing to start: {which} is not the key this database's recovery codes and "
        f"unlock sessions were made under (stored fingerprint {stored[:12]}..., this "
        f"key's {fingerprint[:12]}...): "
        "every recovery code would fail. Set RECORDS_KEY to that key; an installation from "
        "before 0.2.0 sets it to the SECRET_KEY of then (docs/operations.md, Rotating the keys)."
    )
