"""Sync push (contract: Sync; Note, Category; decisions: Sync push).

Every pushed record is a full record with the client's own id, created, changed or deleted
by the notes and categories areas' own rules, so the REST routes' rules apply unchanged. A
refused record changes nothing and comes back as a conflict (`CONFLICT_REASONS`); the
others are applied. A record changes the server copy only when the client saw that copy
(its `updatedUtc` is the server copy's, to the millisecond). A record already applied is
reported as applied again without a change. Order: category creations and changes, then
notes, then category deletions (a new note may name a new category; a category may be
deleted once its notes moved).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

from sqlalchemy import exc, select
from sqlalchemy.orm import selectinload

from app.auth import Viewer
from app.errors import ApiError, Forbidden, NotFound, ValidationFailed
from app.extensions import db
from app.models.category import Category, OwnerScope
from app.models.note import Note
from app.models.sync import SyncNoteMutation
from app.platform.database import insert_ignoring_duplicates, lock_for_write, lock_rows
from app.policies import categories as category_policy
from app.policies import notes as note_policy
from app.services import categories, notes
from app.services.shared import links
from app.services.shared.mutations import payload_hash

CHANGED, DELETED, FORBIDDEN, INVALID, REUSED = (
    "changed_on_server",
    "deleted_on_server",
    "forbidden",
    "validation_failed",
    "client_mutation_id_reused",
)
# changed_on_server: the server copy changed since the client's base (with the copy);
# deleted_on_server: the server copy is a tombstone and the client changed it; forbidden: the caller
# may not change the record (with the copy when they may see it); validation_failed: errors names
# the fields; client_mutation_id_reused: the note's clientMutationId was applied before with another
# record (a retry must carry the same record; another change a new tag).
CONFLICT_REASONS = (CHANGED, DELETED, FORBIDDEN, INVALID, REUSED)

NOTE_FIELDS = (
    "category_id",
    "title",
    "body",
    "content_language",
    "latitude",
    "longitude",
    "visibility",
    "comment_policy",
    "client_mutation_id",
)
LINK_FIELDS = ("external_link_url", "external_link_description")
CATEGORY_FIELDS = ("name", "content_language", "parent_category_id")


Written = tuple[uuid.UUID, str, str]  # note id, clientMutationId, payload hash
Applied = dict[tuple[uuid.UUID, str], str | None]  # (note id, tag) -> its payload hash


@dataclass
class PushedRecord:
    """One record of a push: its id, its fields as the schema loaded them (snake_case,
    with `is_deleted`, `updated_utc` as the client's base and `team_id`), or the schema's
    `errors` when it did not load."""

    id: uuid.UUID
    fields: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, list[str]] | None = None


@dataclass
class Conflict:
    entity_type: str
    id: uuid.UUID
    reason: str
    detail: str
    errors: dict[str, list[str]] | None = None
    server_record: dict[str, Any] | None = None


@dataclass
class PushResult:
    applied_note_ids: list[uuid.UUID] = field(default_factory=list)
    applied_category_ids: list[uuid.UUID] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    # (note id, clientMutationId, payload hash) of the note changes written, kept at the
    # push's end
    mutations: set[Written] = field(default_factory=set)


class Refused(Exception):
    """A record not applied for a sync reason of its own (not a service's ApiError)."""

    def __init__(self, reason: str, detail: str, *, show: bool = False) -> None:
        super().__init__(detail)
        self.reason, self.detail, self.show = reason, detail, show


def push(
    viewer: Viewer,
    *,
    notes_in: list[PushedRecord],
    categories_in: list[PushedRecord],
    default_language: str,
    link_budget_seconds: float,
) -> PushResult:
    """Apply a device's records (see the module docstring for the order and outcomes).

    The links the records ask to apply are checked first, before any lock is taken, all
    within `link_budget_seconds` (SYNC_PUSH_LINK_BUDGET_SECONDS), each distinct link once;
    the records then use those outcomes."""
    outcomes = links.verify_links(_links_to_check(notes_in), budget_seconds=link_budget_seconds)
    with links.checked_in_advance(outcomes):
        return _push(viewer, notes_in, categories_in, default_language)


def _links_to_check(records: list[PushedRecord]) -> list[str]:
    """The links the notes service will verify for these records, in push order."""
    return [
        record.fields["external_link_url"]
        for record in records
        if not record.errors
        and record.fields.get("apply_external_link_changes")
        and (record.fields.get("external_link_url") or "").strip()
    ]


def _push(
    viewer: Viewer,
    notes_in: list[PushedRecord],
    categories_in: list[PushedRecord],
    default_language: str,
) -> PushResult:
    result = PushResult()
    # One push of a user at a time: two devices' pushes of the same records wait for each
    # other instead of both deciding from the same reads. On SQLite this also takes the
    # write lock before the first savepoint (a savepoint would begin a deferred
    # transaction, and two of those cannot both upgrade to writing).
    lock_for_write(db.session, f"sync-push:{viewer.account.id}")
    existing_categories = _load(Category, [record.id for record in categories_in])
    deletions = [r for r in categories_in if r.fields.get("is_deleted")]
    change = partial(_category_change, viewer, existing_categories, default_language)
    for record in _parents_first([r for r in categories_in if r not in deletions]):
        _run(result, "category", record, change(record))
    _push_notes(result, viewer, notes_in, default_language)
    for record in deletions:
        _run(result, "category", record, change(record))
    _record_mutations(result.mutations)
    _attach_server_records(viewer, result.conflicts)
    return result


def _category_change(
    viewer: Viewer,
    existing: dict[uuid.UUID, Category],
    default_language: str,
    record: PushedRecord,
) -> Callable[[], None]:
    return partial(_apply_category, viewer, record, existing.get(record.id), default_language)


def _load(model: Any, ids: list[uuid.UUID]) -> dict[uuid.UUID, Any]:
    if not ids:
        return {}
    return {row.id: row for row in db.session.scalars(select(model).where(model.id.in_(ids)))}


def _locked_notes(ids: list[uuid.UUID]) -> dict[uuid.UUID, Note]:
    """The pushed notes the server has, as they are now, locked until the commit: a
    concurrent push or REST edit of one of them waits, or is waited for and then seen.
    In id order, so two pushes of the same notes cannot deadlock. Their trackables come
    with them (the note rule asks for a gated note's)."""
    if not ids:
        return {}
    query = select(Note).where(Note.id.in_(ids)).order_by(Note.id)
    rows = lock_rows(db.session, query.options(selectinload(Note.trackables)))
    return {row.id: row for row in rows}


def _applied_mutations(records: list[PushedRecord], existing: Collection[uuid.UUID]) -> Applied:
    """The (note id, clientMutationId) pairs of this push that an earlier push applied,
    with the payload hash each was applied with (None: applied before hashes were kept).
    Only notes the server has (`existing`) can have any: the pairs go with their note."""
    pairs = {
        (r.id, r.fields["client_mutation_id"]) for r in records if _mutation(r) and r.id in existing
    }
    if not pairs:
        return {}
    rows = db.session.execute(
        select(
            SyncNoteMutation.note_id,
            SyncNoteMutation.client_mutation_id,
            SyncNoteMutation.payload_hash,
        ).where(
            SyncNoteMutation.note_id.in_({note_id for note_id, _ in pairs}),
            SyncNoteMutation.client_mutation_id.in_({mutation for _, mutation in pairs}),
        )
    )
    return {(note_id, tag): digest for note_id, tag, digest in rows if (note_id, tag) in pairs}


def _mutation(record: PushedRecord) -> str | None:
    return record.fields.get("client_mutation_id") or None


def _parents_first(records: list[PushedRecord]) -> list[PushedRecord]:
    """A category whose parent is pushed too comes after that parent."""
    pending = {record.id: record for record in records}
    ordered: list[PushedRecord] = []

    def visit(record: PushedRecord, depth: int) -> None:
        if record.id not in pending:
            return
        parent = pending.get(record.fields.get("parent_category_id"))  # type: ignore[arg-type]
        if parent is not None and depth < len(records):  # a cycle is left to the rules
            visit(parent, depth + 1)
        if pending.pop(record.id, None) is not None:
            ordered.append(record)

    for record in records:
        visit(record, 0)
    return ordered


# --- one record's outcome ----------------------------------------------------------------

Outcome = Conflict | Written | None  # refused, or applied (with the mutation it wrote)


def _settle(entity_type: str, record: PushedRecord, apply: Callable[[], Written | None]) -> Outcome:
    """Apply one record, or the conflict that refuses it: the one place the services'
    refusals become sync conflict reasons."""
    if record.errors:
        return Conflict(entity_type, record.id, INVALID, "The record is not valid.", record.errors)
    try:
        return apply()
    except Refused as refused:
        conflict = Conflict(entity_type, record.id, refused.reason, refused.detail)
        if refused.show:
            conflict.server_record = {}  # filled by _attach_server_records
        return conflict
    except ValidationFailed as error:
        return Conflict(entity_type, record.id, INVALID, error.detail, error.extra.get("errors"))
    except (Forbidden, NotFound) as error:
        return Conflict(entity_type, record.id, FORBIDDEN, error.detail)
    except links.LinkVerificationFailed as error:  # also a link the budget did not reach
        errors = {"externalLinkUrl": [error.detail]}
        return Conflict(entity_type, record.id, INVALID, error.detail, errors)
    except ApiError as error:  # another rule's 400 or 409 (a root in use)
        return Conflict(entity_type, record.id, INVALID, error.detail)


def _run(
    result: PushResult,
    entity_type: str,
    record: PushedRecord,
    apply: Callable[[], Written | None],
) -> None:
    """One record in its own savepoint: refused, it changes nothing."""

    def in_savepoint() -> Written | None:
        with db.session.begin_nested():
            return apply()

    try:
        outcome = _settle(entity_type, record, in_savepoint)
    except exc.IntegrityError:  # another request created the same id meanwhile
        outcome = Conflict(entity_type, record.id, CHANGED, "The record changed meanwhile.")
    _keep(result, entity_type, record, outcome)


def _keep(result: PushResult, entity_type: str, record: PushedRecord, outcome: Outcome) -> None:
    if isinstance(outcome, Conflict):
        result.conflicts.append(outcome)
        return
    applied = result.applied_note_ids if entity_type == "note" else result.applied_category_ids
    applied.append(record.id)
    if outcome is not None:  # only once its write is in: a savepoint released, a batch written
        result.mutations.add(outcome)


# --- notes: as a set, or one by one ------------------------------------------------------


# Notes go as a set (a phone back from a field trip pushes hundreds): every note record is decided
# first, against the pushed notes read locked in one statement, and the accepted ones are written
# together (services.notes.NoteBatch); a refused record needs no savepoint, since every rule refuses
# before anything is written. Two cases go record by record, each in its own savepoint as every
# category does: a push naming a note twice, and a batch whose write the database refused (a note id
# a concurrent request wrote after the read; the batch is rolled back and decided again).
def _push_notes(
    result: PushResult, viewer: Viewer, records: list[PushedRecord], default_language: str
) -> None:
    """The pushed notes as one batch (`_notes_as_a_set`); record by record, each in its
    savepoint, when the batch cannot be decided up front: a push naming a note twice (a
    later record depends on an earlier one's write), or a write a concurrent request
    refused after all (the batch is rolled back and every record decided again)."""
    ids = [record.id for record in records]
    if len(set(ids)) == len(ids):
        outcomes = _notes_as_a_set(viewer, records, default_language)
        if outcomes is not None:
            for record, outcome in zip(records, outcomes, strict=True):
                _keep(result, "note", record, outcome)
            return
    _notes_one_by_one(result, viewer, records, default_language)


def _notes_as_a_set(
    viewer: Viewer, records: list[PushedRecord], default_language: str
) -> list[Outcome] | None:
    """Every record decided by the same rules before anything is written (the services'
    checks raise before a write, so a refused record needs no savepoint of its own), then
    the accepted ones written together (services.notes.NoteBatch). None when the database
    refused the batch's write (a note id another request wrote since the read): nothing of
    it is left, and the caller decides again record by record."""
    existing = _locked_notes([record.id for record in records])
    applied = _applied_mutations(records, existing.keys())
    named = (record.fields.get("category_id") for record in records if not record.errors)
    batch = notes.NoteBatch(viewer, category_ids=[name for name in named if name is not None])
    try:
        with db.session.begin_nested():
            outcomes = [
                _settle(
                    "note",
                    record,
                    partial(
                        _apply_note,
                        viewer,
                        record,
                        existing.get(record.id),
                        default_language,
                        applied,
                        batch,
                    ),
                )
                for record in records
            ]
            batch.write()
    except exc.IntegrityError:
        return None
    return outcomes


def _notes_one_by_one(
    result: PushResult, viewer: Viewer, records: list[PushedRecord], default_language: str
) -> None:
    # Read (and locked) again: after a refused batch, what the other request wrote is seen.
    existing = _locked_notes([record.id for record in records])
    applied = _applied_mutations(records, existing.keys())
    writes = notes.WriteEach(viewer)
    for record in records:
        note = existing.get(record.id)
        apply = partial(_apply_note, viewer, record, note, default_language, applied, writes)
        _run(result, "note", record, apply)


def _scope_of(viewer: Viewer, fields: dict[str, Any]) -> OwnerScope:
    team_id = fields.get("team_id")
    return OwnerScope.team(team_id) if team_id else OwnerScope.personal(viewer.account.id)


def _row_scope(row: Note | Category) -> OwnerScope:
    if row.team_id is not None:
        return OwnerScope.team(row.team_id)
    return OwnerScope.personal(row.owner_user_id)  # type: ignore[arg-type]


def _same_millisecond(stored: datetime, base: datetime | None) -> bool:
    """The API shows times truncated to milliseconds; the client's base is one of those."""
    if base is None:
        return False
    return stored.replace(microsecond=stored.microsecond // 1000 * 1000) == base


def _check_base(row: Note | Category, fields: dict[str, Any], show: bool) -> None:
    if not _same_millisecond(row.updated_utc, fields.get("updated_utc")):
        raise Refused(
            CHANGED,
            "The server copy changed after the client's updatedUtc; pull, merge, push again.",
            show=show,
        )


def _same_scope(row: Note | Category, scope: OwnerScope, what: str) -> None:
    if _row_scope(row) != scope:
        raise ValidationFailed(
            {"teamId": [f"A {what} keeps its team; it moves through the team routes."]}
        )


# --- notes -------------------------------------------------------------------------------


def _note_changes(fields: dict[str, Any]) -> dict[str, Any]:
    names = NOTE_FIELDS + (LINK_FIELDS if fields.get("apply_external_link_changes") else ())
    return {name: fields[name] for name in names if name in fields}


def _apply_note(
    viewer: Viewer,
    record: PushedRecord,
    note: Note | None,
    default_language: str,
    applied: Applied,
    writes: notes.NoteWrites,
) -> Written | None:
    """Create, change or delete the note through `writes` (at once, or as part of a
    batch); returns (note id, clientMutationId, payload hash) when it wrote a change that
    carries one (SyncNoteMutation)."""
    fields, scope = record.fields, _scope_of(viewer, record.fields)
    mutation = _mutation(record)
    digest = _payload_hash(fields) if mutation else ""
    if note is None:
        if not fields.get("is_deleted"):  # created and deleted offline: nothing to do
            writes.create(
                scope, note_id=record.id, default_language=default_language, **_note_changes(fields)
            )
            return (record.id, mutation, digest) if mutation else None
        return None
    if note.is_deleted:
        if not note_policy.in_workspace(viewer, note.owner_user_id, note.team_id):
            raise Refused(FORBIDDEN, "Note not found.")
        if fields.get("is_deleted") or _replayed(note, mutation, digest, applied):
            return None  # deleted on both sides, or this very change was applied before
        raise Refused(DELETED, "The note was deleted on the server.")
    if not note_policy.can_manage(viewer, note):
        show = note_policy.can_view(viewer, note)
        raise Refused(FORBIDDEN, "Only the note's owner or a team admin may change it.", show=show)
    if _replayed(note, mutation, digest, applied):
        return None  # a retried push: this change was applied before (later writes stay)
    _same_scope(note, scope, "note")
    _check_base(note, fields, show=True)
    if fields.get("is_deleted"):
        writes.delete(scope, note, client_mutation_id=mutation)
    else:
        writes.move(scope, note, _note_changes(fields))
    return (note.id, mutation, digest) if mutation else None


# Already applied: a note change whose clientMutationId a push applied to that note before (kept in
# sync_note_mutations, so also after other writes to the note) or that the note holds now; a
# category already equal to the pushed one.
def _replayed(note: Note, mutation: str | None, digest: str, applied: Applied) -> bool:
    """Whether this record's clientMutationId was applied to the note before (a retry,
    reported applied without a write), or raise `client_mutation_id_reused` when it was
    applied with another record: that change would otherwise be dropped unseen."""
    if mutation is None:
        return False
    if (note.id, mutation) in applied:
        earlier = applied[(note.id, mutation)]
    elif note.client_mutation_id == mutation:
        earlier = None  # written by a REST route, which keeps no hash: a retry, as before
    else:
        return False
    if earlier is not None and earlier != digest:
        raise Refused(
            REUSED,
            "This clientMutationId was already applied to this note with another record; "
            "send the change with a new clientMutationId (from the server copy's updatedUtc).",
            show=True,
        )
    return True


def _payload_hash(fields: dict[str, Any]) -> str:
    """The pushed note's fingerprint: the fields a push applies (not its base version,
    which a retry may have moved, nor the tag); a delete is only a delete."""
    if fields.get("is_deleted"):
        return payload_hash({"is_deleted": True, "team_id": fields.get("team_id")})
    applies_link = bool(fields.get("apply_external_link_changes"))
    names = ("team_id", *NOTE_FIELDS, *(LINK_FIELDS if applies_link else ()))
    payload = {name: fields.get(name) for name in names if name != "client_mutation_id"}
    if payload["content_language"]:
        payload["content_language"] = categories.canonical_language(payload["content_language"])
    payload["apply_external_link_changes"] = applies_link
    return payload_hash(payload)


def _record_mutations(written: set[Written]) -> None:
    """Keep the (note, clientMutationId, payload hash) of the changes this push applied. A
    pair another user's push of the same team note wrote meanwhile is already there."""
    insert_ignoring_duplicates(
        db.session,
        SyncNoteMutation,
        [SyncNoteMutation.note_id, SyncNoteMutation.client_mutation_id],
        [
            {"note_id": note, "client_mutation_id": mutation, "payload_hash": digest}
            for note, mutation, digest in sorted(written, key=_by_note_and_mutation)
        ],
    )


def _by_note_and_mutation(written: Written) -> tuple[int, str]:
    """The order the (note id, clientMutationId, hash) tuples sort in, keyed by the id's
    integer: UUID's own comparison runs in Python."""
    return written[0].int, written[1]


# --- categories --------------------------------------------------------------------------


def _apply_category(
    viewer: Viewer, record: PushedRecord, category: Category | None, default_language: str
) -> None:
    fields, scope = record.fields, _scope_of(viewer, record.fields)
    changes = {name: fields[name] for name in CATEGORY_FIELDS if name in fields}
    if category is None:
        if not fields.get("is_deleted"):
            categories.create_category(
                viewer,
                scope,
                category_id=record.id,
                default_language=default_language,
                name=changes.get("name", ""),
                content_language=changes.get("content_language"),
                parent_category_id=changes.get("parent_category_id"),
            )
        return
    try:
        category_policy.require_scope(viewer, _row_scope(category))
    except NotFound:
        raise Refused(FORBIDDEN, "Category not found.") from None
    # Every change of a category takes its tree's lock: read under it, the copy checked
    # against the base stays the server's until this push commits.
    categories.lock_tree(_row_scope(category))
    category = db.session.get(Category, record.id, populate_existing=True)
    if category is None:  # gone meanwhile (its account was deleted)
        raise Refused(FORBIDDEN, "Category not found.")
    if category.is_deleted:
        if fields.get("is_deleted"):
            return
        raise Refused(DELETED, "The category was deleted on the server.")
    _same_scope(category, scope, "category")
    if not fields.get("is_deleted") and _category_equals(category, changes):
        return  # already the server's (a retried push)
    _check_base(category, fields, show=True)
    if fields.get("is_deleted"):
        categories.delete_category(viewer, scope, category.id)
    else:
        categories.move_category(viewer, scope, category.id, changes)


def _category_equals(category: Category, changes: dict[str, Any]) -> bool:
    language = changes.get("content_language")
    return (
        changes.get("name", category.name) == category.name
        and changes.get("parent_category_id", category.parent_category_id)
        == category.parent_category_id
        and (not language or categories.canonical_language(language) == category.content_language)
    )


# --- the server's copies in conflicts ----------------------------------------------------


def category_record(category: Category) -> dict[str, Any]:
    """A category as sync sends it (the API's SyncCategorySchema)."""
    return {
        "category_id": category.id,
        "name": category.name,
        "content_language": category.content_language,
        "parent_category_id": category.parent_category_id,
        "team_id": category.team_id,
        "is_deleted": category.is_deleted,
        "updated_utc": category.updated_utc,
    }


def _attach_server_records(viewer: Viewer, conflicts: list[Conflict]) -> None:
    """Fill `server_record` of the conflicts that show one: notes in one statement."""
    shown = [c for c in conflicts if c.server_record is not None]
    note_ids = [c.id for c in shown if c.entity_type == "note"]
    found = notes.note_records(viewer, [Note.id.in_(note_ids)]) if note_ids else None
    note_rows = {}
    if found is not None:
        for row in found.rows:
            record = dict(zip(found.columns, row, strict=True))
            note_rows[uuid.UUID(record["note_id"])] = record
    for conflict in shown:
        if conflict.entity_type == "note":
            conflict.server_record = note_rows.get(conflict.id)
        else:
            category = db.session.get(Category, conflict.id)
            conflict.server_record = category_record(category) if category else None
