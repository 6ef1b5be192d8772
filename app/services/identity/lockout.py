"""Sign-in lockout (decisions: Identity): LOCKOUT_MAX_FAILURES failures in a row for one
email, registered or not, lock it for LOCKOUT_MINUTES, so `LockedOut` reveals nothing
about who has an account. Counters live in the database: every worker sees them.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.dialects import postgresql, sqlite

from app.extensions import db
from app.models.identity import LoginFailure
from app.platform.secret_keys import record_hmac, record_key


def email_key(normalized_email: str, *, config: Mapping[str, Any]) -> str:
    """A keyed hash of the email: counters do not keep strangers' addresses in clear."""
    message = b"login-failures:" + normalized_email.encode()
    return record_hmac(record_key(config, "login-failures"), message)


def is_locked_out(key: str, now: datetime) -> bool:
    locked_until = db.session.scalar(
        select(LoginFailure.locked_until_utc).where(LoginFailure.email_hash == key)
    )
    return locked_until is not None and locked_until > now


def record_failure(key: str, now: datetime, config: Mapping[str, Any]) -> bool:
    """Count one failure; at LOCKOUT_MAX_FAILURES in a row the email is locked for
    LOCKOUT_MINUTES and counting starts again. True when this failure locked it."""
    count = _increment(key, now)
    if count < config["LOCKOUT_MAX_FAILURES"]:
        return False
    db.session.execute(
        update(LoginFailure)
        .where(LoginFailure.email_hash == key)
        .values(
            failure_count=0, locked_until_utc=now + timedelta(minutes=config["LOCKOUT_MINUTES"])
        )
        .execution_options(synchronize_session=False)
    )
    return True


def _increment(key: str, now: datetime) -> int:
    """Atomic insert-or-increment (one statement), so concurrent workers never lose a count."""
    dialect = db.session.get_bind().dialect.name
    if dialect not in {"postgresql", "sqlite"}:  # pragma: no cover - only these are supported
        row = db.session.get(LoginFailure, key, with_for_update=True)
        if row is None:
            row = LoginFailure(email_hash=key, failure_count=0)
            db.session.add(row)
        row.failure_count += 1
        row.updated_utc = now
        db.session.flush()
        return row.failure_count
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = (
        insert(LoginFailure)
        .values(email_hash=key, failure_count=1, updated_utc=now)
        .on_conflict_do_update(
            index_elements=[LoginFailure.email_hash],
            set_={"failure_count": LoginFailure.failure_count + 1, "updated_utc": now},
        )
        .returning(LoginFailure.failure_count)
    )
    return int(db.session.execute(statement).scalar_one())


def forget_failures(normalized_email: str, *, config: Mapping[str, Any]) -> None:
    """Start counting from zero (successful sign-in, password reset, account deletion)."""
    key = email_key(normalized_email, config=config)
    db.session.execute(delete(LoginFailure).where(LoginFailure.email_hash == key))
