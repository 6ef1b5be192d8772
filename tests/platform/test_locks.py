"""Locks taken once per transaction (app.platform.database.first_in_transaction): a batch
that asks for one lock per record takes it once, and a lock released by a rolled-back
savepoint is taken again."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from app.extensions import db
from app.platform.database import first_in_transaction, lock_for_write


def test_a_key_is_first_once_per_transaction(app):
    assert first_in_transaction(db.session, "tree") is True
    assert first_in_transaction(db.session, "tree") is False
    assert first_in_transaction(db.session, "other") is True
    db.session.commit()
    assert first_in_transaction(db.session, "tree") is True  # a new transaction
    db.session.rollback()


def test_a_key_named_in_a_rolled_back_savepoint_is_first_again(app):
    assert first_in_transaction(db.session, "kept") is True
    savepoint = db.session.begin_nested()
    assert first_in_transaction(db.session, "inside") is True
    assert first_in_transaction(db.session, "inside") is False
    savepoint.rollback()
    assert first_in_transaction(db.session, "inside") is True
    db.session.rollback()


def advisory_locks_held(pid: int) -> int:
    """The advisory locks the session's backend holds, seen from another connection (other
    tests, in other processes, take their own)."""
    with db.engine.connect() as other:
        return other.execute(
            text(
                "SELECT count(*) FROM pg_locks"
                " WHERE locktype = 'advisory' AND granted AND pid = :pid"
            ),
            {"pid": pid},
        ).scalar_one()


def test_an_advisory_lock_released_with_its_savepoint_is_taken_again(app, database_url):
    if not database_url.startswith("postgresql"):
        pytest.skip("advisory locks are PostgreSQL's")
    pid = db.session.execute(text("SELECT pg_backend_pid()")).scalar_one()
    savepoint = db.session.begin_nested()
    lock_for_write(db.session, "category-tree:test", reread=False)
    assert advisory_locks_held(pid) == 1
    savepoint.rollback()  # releases the lock taken inside it
    assert advisory_locks_held(pid) == 0
    lock_for_write(db.session, "category-tree:test", reread=False)
    assert advisory_locks_held(pid) == 1
    lock_for_write(db.session, "category-tree:test", reread=False)  # held: not again
    db.session.rollback()
    assert advisory_locks_held(pid) == 0
