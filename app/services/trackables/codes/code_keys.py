"""The code key chain in the database (decisions: Trackable codes; docs/configuration.md,
The code key).

Every secret code and QR label ever printed is verified with TRACKABLE_CODE_KEY: started
with another key, the service would answer every real code as a miss. So the database
keeps a fingerprint of each key of the chain (`trackable_code_keys`), and a start whose
keys do not continue the stored chain is refused with what would break. A start whose
chain adds keys after the stored ones begins a rotation: the new generation is recorded,
new codes are stored under it, and `wrap_batch` brings the stored hashes forward a batch
at a time (resumable; lookups try every generation meanwhile).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, inspect, select, update

from app.extensions import db
from app.models.trackable import TrackableCode, TrackableCodeKey
from app.platform.database import lock_for_write
from app.services.trackables.codes.formats import CodeSettings, key_fingerprint, wrap

PREVIOUS_SETTING = "TRACKABLE_CODE_KEYS_PREVIOUS"


class CodeKeyMismatch(RuntimeError):
    """The configured code keys are not the chain the stored codes were made with."""


@dataclass(frozen=True)
class ChainState:
    stored: int  # generations recorded before this start
    added: int  # generations this start recorded (a rotation begins)


def check_code_keys(settings: CodeSettings) -> ChainState | None:
    """Compare the configured chain with the stored one; record a first key, or the new
    keys of a rotation. Raises CodeKeyMismatch with what would break. None when the
    table is not there yet (a database not migrated: `flask db upgrade` runs first)."""
    if not inspect(db.engine).has_table(TrackableCodeKey.__tablename__):
        return None
    configured = [key_fingerprint(key) for key in settings.keys]
    # Processes starting at once (the web server and the job worker, on a new database)
    # take turns: the second reads the chain the first recorded, and compares with it.
    lock_for_write(db.session, "trackable-code-keys", reread=False)
    stored = _stored_chain()
    if configured[: len(stored)] != stored:
        raise CodeKeyMismatch(_mismatch(configured, stored))
    for generation in range(len(stored), len(configured)):
        db.session.add(TrackableCodeKey(generation=generation, fingerprint=configured[generation]))
    db.session.commit()
    return ChainState(stored=len(stored), added=len(configured) - len(stored))


def _stored_chain() -> list[str]:
    return list(
        db.session.scalars(
            select(TrackableCodeKey.fingerprint).order_by(TrackableCodeKey.generation)
        )
    )


def _mismatch(configured: list[str], stored: list[str]) -> str:
    if len(configured) < len(stored) and stored[: len(configured)] == configured:
        what = (
            f"this database's codes are stored under {len(stored)} code keys and only the "
            f"first {len(configured)} are configured: set TRACKABLE_CODE_KEY to the newest "
            f"and {PREVIOUS_SETTING} to the older ones, oldest first"
        )
    else:
        generation = next(
            index
            for index, pair in enumerate(zip(configured, stored, strict=False))
            if pair[0] != pair[1]
        )
        name = "TRACKABLE_CODE_KEY" if generation == len(configured) - 1 else PREVIOUS_SETTING
        what = (
            f"{name} is not the key generation {generation} of this database's codes was "
            f"made with (stored fingerprint {stored[generation][:12]}...)"
        )
    return (
        f"Refusing to start: {what}. With these keys every trackable secret code and QR "
        "label already printed would be answered as a miss. Start with the keys the "
        f"database was set up with; to replace the key, keep the old one in {PREVIOUS_SETTING} "
        "and run `flask trackables rotate-code-key`."
    )


def unwrapped(settings: CodeSettings) -> int:
    """Stored codes not yet at the current generation."""
    return int(
        db.session.scalar(
            select(func.count())
            .select_from(TrackableCode)
            .where(TrackableCode.key_generation < settings.generation)
        )
        or 0
    )


def wrap_batch(settings: CodeSettings, size: int) -> int:
    """Bring up to `size` stored codes to the current generation, in the caller's
    transaction (commit after each batch); returns how many. Rows are locked as they are
    read (on PostgreSQL, rows another run holds are skipped), so two runs never wrap a
    row twice, and a lookup sees each row under its old or its new hash, both of which
    it tries."""
    query = (
        select(TrackableCode.code_hash, TrackableCode.key_generation)
        .where(TrackableCode.key_generation < settings.generation)
        .order_by(TrackableCode.code_hash)
        .limit(size)
        .with_for_update(skip_locked=True)
    )
    rows = db.session.execute(query).all()
    for stored, generation in rows:
        db.session.execute(
            update(TrackableCode)
            .where(TrackableCode.code_hash == stored, TrackableCode.key_generation == generation)
            .values(
                code_hash=wrap(settings, stored, generation), key_generation=settings.generation
            )
        )
    return len(rows)
