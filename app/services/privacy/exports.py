"""Personal data exports (docs/contract/privacy.md, Data export): asking for one, reading
its state, downloading it, the worker's job that makes it, the hourly sweep and the account
clean-up.

One export at a time per account (409), at most EXPORTS_PER_USER_PER_DAY (429), both
decided under the account's budget lock, so parallel requests cannot both start one. The
file is stored whole or not at all; a worker that dies mid-way leaves no complete file and
the job runs again from the start. A done export may be downloaded until `expires_utc`,
then answers 410; the record goes after EXPORT_KEEP_DAYS (then 404).
"""

from __future__ import annotations

import logging
import tempfile
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from flask import current_app
from sqlalchemy import delete, func, select

from app.auth import Viewer
from app.error_codes import Code
from app.errors import ApiError
from app.extensions import db
from app.hooks import DeletionCounts
from app.models.base import utcnow
from app.models.privacy import AccountExport, ExportState
from app.models.user import User
from app.platform import jobs
from app.platform.jobs import JobKind, Task
from app.policies import privacy as policy
from app.services import images
from app.services.privacy.archive import write_archive
from app.services.privacy.files import export_store, remove_after_commit
from app.services.shared import budgets
from app.storage.exports import export_id_of, export_key

log = logging.getLogger(__name__)

BUILD = "privacy.export"
READY_MAIL = "privacy.export_ready_mail"
BUILD_TRIES = 3  # failed runs before the export is failed
BUDGET = "account-export"
UNSETTLED = (ExportState.QUEUED, ExportState.RUNNING)
SETTLED_GONE = (ExportState.FAILED, ExportState.EXPIRED)
SPOOL_MEMORY_BYTES = 8 * 1024 * 1024  # a bigger ZIP is written to a temporary file
# An export no worker finished within a day (no worker ran, or its job was given up) is
# failed, so that the account may ask again.
STALE_AFTER = timedelta(days=1)
# A stored file no done export names is removed once this old: a run's upload may be
# waiting for its commit.
ORPHAN_GRACE = timedelta(hours=2)
IN_CHUNK = 500


class ExportInProgress(ApiError):
    status = 409
    code = Code.ACCOUNT_EXPORT_IN_PROGRESS


class ExportNotReady(ApiError):
    status = 409
    code = Code.ACCOUNT_EXPORT_NOT_READY


class ExportExpired(ApiError):
    status = 410
    code = Code.ACCOUNT_EXPORT_EXPIRED


@dataclass(frozen=True)
class ExportView:
    export_id: uuid.UUID
    state: ExportState
    created_utc: datetime
    finished_utc: datetime | None
    expires_utc: datetime | None
    size_bytes: int | None
    download_url: str | None  # while it may be downloaded


@dataclass(frozen=True)
class ExportDownload:
    filename: str
    size: int
    chunks: Iterator[bytes]


def export_budget(config: Mapping[str, Any]) -> budgets.Budget:
    """EXPORTS_PER_USER_PER_DAY exports per account in any 24 hours."""
    limit = int(config["EXPORTS_PER_USER_PER_DAY"])
    return budgets.Budget(
        BUDGET,
        limit,
        timedelta(days=1),
        refusal=f"At most {limit} data exports per account per day.",
        code=Code.ACCOUNT_EXPORT_DAILY_LIMIT_REACHED,
    )


def state_at(export: AccountExport, now: datetime) -> ExportState:
    """The state a reader sees: a done export past its time is expired, swept or not."""
    if export.state is ExportState.DONE and export.expires_utc and export.expires_utc <= now:
        return ExportState.EXPIRED
    return export.state


def download_path(export_id: uuid.UUID) -> str:
    return f"/api/account/export/{export_id}/download"


def view(export: AccountExport, now: datetime) -> ExportView:
    state = state_at(export, now)
    return ExportView(
        export_id=export.id,
        state=state,
        created_utc=export.created_utc,
        finished_utc=export.finished_utc,
        expires_utc=export.expires_utc,
        size_bytes=export.size_bytes,
        download_url=download_path(export.id) if state is ExportState.DONE else None,
    )


# --- requests --------------------------------------------------------------------------------


def start_export(
    viewer: Viewer, config: Mapping[str, Any], *, now: datetime | None = None
) -> ExportView:
    """POST /api/account/export: queue an export of the caller's data. 409 while their
    previous one is unsettled, 429 past the daily budget."""
    user_id = viewer.account.id
    now = now or utcnow()
    budget = export_budget(config)
    budgets.hold(f"{budget.name}:{user_id}")  # the check and the spend below are one step
    unsettled = db.session.scalar(
        select(AccountExport.id)
        .where(AccountExport.user_id == user_id, AccountExport.state.in_(UNSETTLED))
        .limit(1)
    )
    if unsettled is not None:
        raise ExportInProgress(
            "Your previous export is still being made; wait for it.", exportId=str(unsettled)
        )
    budgets.spend_or_refuse(budget, str(user_id), now=now)
    export = AccountExport(id=uuid.uuid4(), user_id=user_id, state=ExportState.QUEUED)
    export.created_utc = now
    db.session.add(export)
    db.session.flush()
    jobs.enqueue(BUILD, {"exportId": str(export.id)})
    return view(export, now)


def get_export(viewer: Viewer, export_id: uuid.UUID, *, now: datetime | None = None) -> ExportView:
    return view(policy.get_own(viewer, export_id), now or utcnow())


def open_download(
    viewer: Viewer,
    export_id: uuid.UUID,
    config: Mapping[str, Any],
    *,
    now: datetime | None = None,
) -> ExportDownload:
    """The caller's done export's file; 404 for anyone else's, 409 while it is not made
    (or failed), 410 once its time ran out."""
    export = policy.get_own(viewer, export_id)
    state = state_at(export, now or utcnow())
    if state is ExportState.EXPIRED:
        raise ExportExpired("This export's download time ran out; ask for a new export.")
    if state is not ExportState.DONE or export.storage_key is None:
        raise ExportNotReady(
            f"This export is {state.value}, not ready for download.", state=state.value
        )
    opened = export_store(config).open(export.storage_key)
    if opened is None:  # removed early (the sweep's clock ahead of this one)
        raise ExportExpired("This export's file is gone; ask for a new export.")
    finished = export.finished_utc or export.created_utc
    return ExportDownload(
        filename=f"location-notes-export-{finished:%Y-%m-%d}.zip",
        size=opened.size,
        chunks=opened.chunks,
    )


# --- the worker's job ------------------------------------------------------------------------


def _fail(export_id: uuid.UUID, now: datetime, reason: str) -> None:
    export = db.session.get(AccountExport, export_id, populate_existing=True)
    if export is not None and export.state in UNSETTLED:
        export.state, export.finished_utc = ExportState.FAILED, now
        log.error("data export %s failed: %s", export_id, reason)


def _build_file(user_id: uuid.UUID, key: str, config: Mapping[str, Any], now: datetime) -> int:
    """Write the ZIP and store it under `key`; its size."""
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY_BYTES, mode="w+b") as spool:
        write_archive(
            spool,
            user_id,
            image_store=images.image_store(config),
            image_cap_bytes=int(config["EXPORT_IMAGE_FILES_MAX_BYTES"]),
            now=now,
        )
        size = spool.tell()
        spool.seek(0)
        export_store(config).put_file(key, spool)
    return size


# Writes the ZIP (archive) into a spooled temporary file, stores it under the export's key, then
# marks the row done and asks for the mail in the job's transaction. A worker that dies mid-way
# leaves the row running; its lease runs out and the job runs again. After BUILD_TRIES failed runs
# the export is failed.
def build_export(task: Task) -> None:
    """The job (`privacy.export`): make the export, store it, mark it done, ask for the
    mail. Reruns start again; the stored file is replaced whole."""
    export_id = uuid.UUID(task.payload["exportId"])
    export = db.session.get(AccountExport, export_id)
    if export is None or export.state not in UNSETTLED:
        return  # the account went, or an earlier run settled it
    if task.attempt > BUILD_TRIES:  # the runs before this one all died with their worker
        _fail(export_id, utcnow(), "its worker stopped during every run")
        return
    user_id, started = export.user_id, utcnow()
    export.state, export.started_utc = ExportState.RUNNING, started
    db.session.commit()  # seen as running while it is made
    key = export_key(export_id)
    try:
        size = _build_file(user_id, key, task.config, started)
    except Exception as error:
        db.session.rollback()
        if task.attempt < BUILD_TRIES:
            raise  # tried again after the job's back-off
        _fail(export_id, utcnow(), f"{type(error).__name__}: {error}")
        return
    export = db.session.get(AccountExport, export_id, populate_existing=True, with_for_update=True)
    if export is None or export.state not in UNSETTLED:
        export_store(task.config).delete(key)  # the account was deleted meanwhile
        return
    finished = utcnow()
    export.state, export.finished_utc = ExportState.DONE, finished
    export.expires_utc = finished + timedelta(hours=float(task.config["EXPORT_DOWNLOAD_HOURS"]))
    export.size_bytes, export.storage_key = size, key
    jobs.enqueue(READY_MAIL, {"exportId": str(export_id)})


BUILD_KIND = JobKind(
    BUILD,
    build_export,
    max_attempts=BUILD_TRIES + 1,  # the last run only settles one whose worker kept dying
    max_age=STALE_AFTER,
    lease=timedelta(minutes=30),  # a large account with many images takes minutes
    first_retry=timedelta(minutes=1),
    lane="exports",
)


# --- the sweep (hourly, by each worker) ------------------------------------------------------


def _orphans(store: Any, now: datetime) -> list[str]:
    """Stored files older than the grace that no done export names (a run's upload whose
    commit never came, an account deleted mid-run), and temporary files."""
    files = [each for each in store.list_files() if each.modified_utc <= now - ORPHAN_GRACE]
    ids = {export_id_of(each.key) for each in files} - {None}
    ordered = sorted(ids)  # type: ignore[type-var]
    done: set[uuid.UUID] = set()
    for start in range(0, len(ordered), IN_CHUNK):
        done.update(
            db.session.scalars(
                select(AccountExport.id).where(
                    AccountExport.id.in_(ordered[start : start + IN_CHUNK]),
                    AccountExport.state == ExportState.DONE,
                )
            )
        )
    return [
        each.key
        for each in files
        if each.is_temporary or (export_id_of(each.key) not in (None, *done))
    ]


# Hourly: removes the files of exports past expires_utc (EXPORT_DOWNLOAD_HOURS), and the records
# after EXPORT_KEEP_DAYS.
def sweep_exports(now: datetime, config: Mapping[str, Any]) -> int:
    """A worker clean-up: expired exports lose their file, exports no worker finished in
    a day fail, settled records past EXPORT_KEEP_DAYS go, and stray files go. How many
    files and records changed (the worker commits)."""
    store = export_store(config)
    changed = 0
    for export in db.session.scalars(
        select(AccountExport).where(
            AccountExport.state == ExportState.DONE, AccountExport.expires_utc <= now
        )
    ):
        if export.storage_key:
            store.delete(export.storage_key)
        export.state, export.storage_key = ExportState.EXPIRED, None
        changed += 1
    for export in db.session.scalars(
        select(AccountExport).where(
            AccountExport.state.in_(UNSETTLED), AccountExport.created_utc <= now - STALE_AFTER
        )
    ):
        export.state, export.finished_utc = ExportState.FAILED, now
        changed += 1
    db.session.flush()
    keep = timedelta(days=float(config["EXPORT_KEEP_DAYS"]))
    settled_at = func.coalesce(AccountExport.expires_utc, AccountExport.finished_utc)
    removed = db.session.execute(
        delete(AccountExport)
        .where(AccountExport.state.in_(SETTLED_GONE), settled_at <= now - keep)
        .execution_options(synchronize_session=False)
    )
    changed += int(getattr(removed, "rowcount", 0) or 0)
    for key in _orphans(store, now):
        store.delete(key)
        changed += 1
    return changed


# --- account deletion ------------------------------------------------------------------------


def delete_account_exports(user: User, _counts: DeletionCounts) -> None:
    """An account clean-up (app.register_area_hooks): the records go now, the files once
    the deletion commits (a run in flight finds its record gone and removes its file)."""
    ids = list(db.session.scalars(select(AccountExport.id).where(AccountExport.user_id == user.id)))
    remove_after_commit(export_store(current_app.config), [export_key(each) for each in ids])
    db.session.execute(delete(AccountExport).where(AccountExport.user_id == user.id))
