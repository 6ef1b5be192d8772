"""Writing a data export's ZIP from the catalogue (`catalogue`): a README that explains
each file, one JSON file per kind of record with its JSON Schema (`file_schemas`), the
notes as GPX and the image files.

Nothing is held whole in memory: rows are read in keyset batches by primary key (each
batch a short statement, so SQLite's readers never hold up writers for long) and each
JSON file is written into its ZIP entry as the rows come; the caller gives a file to
write into (a spooled temporary file, then the export store).
"""

from __future__ import annotations

import enum
import uuid
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

import orjson
from sqlalchemy import Table, Uuid, or_, select, tuple_

from app.extensions import db
from app.models.image import ContentImage, ImageTarget
from app.models.note import Note
from app.platform.wire import wire_time
from app.services.privacy.catalogue import (
    EXCLUDED,
    FILES,
    GPX_ABOUT,
    GPX_FILE,
    IMAGES_ABOUT,
    IMAGES_FOLDER,
    NOT_EXPORTED,
    JsonFile,
    Part,
    camel,
    exported_columns,
    table_of,
)
from app.services.privacy.file_schemas import (
    DERIVED_FIELDS,
    SCHEMA_ABOUT,
    SCHEMAS_FOLDER,
    schema_files,
)
from app.storage.gpx import ExportWaypoint, write_gpx
from app.storage.images import ImageStore, variant_key
from app.storage.imaging import VARIANTS, VARIANTS_BY_NAME

BATCH_ROWS = 500
WRITE_CHUNK_BYTES = 64 * 1024
IMAGE_FILE_VARIANT = VARIANTS_BY_NAME["large"]  # the largest size kept (no original is)
README = "README.md"


def plain(value: Any) -> Any:
    """A stored value as JSON: ids as lowercase GUID text, times ISO 8601 UTC with `Z`,
    enums by their stored value."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, datetime):
        return wire_time(value)
    if isinstance(value, enum.Enum):
        return value.value
    return value


def selection(part: Part, user_id: uuid.UUID) -> Any:
    """SQL: the rows of `part` that are the user's."""
    conditions = []
    for name in part.by:
        column = part.table.c[name]
        conditions.append(column == (user_id if isinstance(column.type, Uuid) else str(user_id)))
    if part.also is not None:
        conditions.append(part.also(user_id))
    if not conditions:
        raise ValueError(f"part {part.key} of {part.table.name} selects no rows")
    return or_(*conditions)


def iter_rows(
    table: Table, names: list[str], where: Any, *, batch_rows: int = BATCH_ROWS
) -> Iterator[dict[str, Any]]:
    """The `names` columns of the rows of `table` matching `where`, in primary key order,
    read `batch_rows` at a time (keyset: each batch starts after the last key)."""
    keys = list(table.primary_key.columns)
    wanted = [table.c[name] for name in names]
    extra = [column for column in keys if column.name not in names]
    query = select(*wanted, *extra).where(where).order_by(*keys).limit(batch_rows)
    position = keys[0] if len(keys) == 1 else tuple_(*keys)
    after: Any = None
    while True:
        page = query if after is None else query.where(position > after)
        rows = db.session.execute(page).all()
        for row in rows:
            yield {name: row._mapping[name] for name in names}
        if len(rows) < batch_rows:
            return
        last = rows[-1]._mapping
        after = last[keys[0].name] if len(keys) == 1 else tuple_(*(last[k.name] for k in keys))


class _Buffered:
    """Fewer, larger writes into a ZIP entry."""

    def __init__(self, target: IO[bytes]) -> None:
        self.target = target
        self.pending: list[bytes] = []
        self.size = 0

    def write(self, data: bytes) -> None:
        self.pending.append(data)
        self.size += len(data)
        if self.size >= WRITE_CHUNK_BYTES:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.target.write(b"".join(self.pending))
            self.pending, self.size = [], 0


@dataclass(frozen=True)
class ArchiveContext:
    user_id: uuid.UUID
    now: datetime
    image_files: frozenset[uuid.UUID]  # images whose file is in the ZIP


def _image_fields(row: Mapping[str, Any], context: ArchiveContext) -> dict[str, Any]:
    image_id = row["id"]
    try:
        kind: str | None = ImageTarget(row["target_type"]).name.lower()
    except ValueError:  # a parent kind this release does not name
        kind = None
    variants = [
        {
            "name": variant.name,
            "size": variant.size,
            "url": f"/Images/{variant_key(image_id, variant)}",
        }
        for variant in VARIANTS
    ]
    file = (
        f"{IMAGES_FOLDER}/{variant_key(image_id, IMAGE_FILE_VARIANT)}"
        if image_id in context.image_files
        else None
    )
    return {"targetKind": kind, "variants": variants, "file": file}


IMAGES_TABLE = table_of(ContentImage)
# Fields derived from a row, per table (beside its columns); file_schemas.DERIVED_FIELDS
# describes them.
DERIVED = {IMAGES_TABLE.name: _image_fields}


def _write_json(archive: zipfile.ZipFile, json_file: JsonFile, context: ArchiveContext) -> None:
    header = {"exportedUtc": plain(context.now), "accountId": str(context.user_id)}
    with archive.open(json_file.name, "w", force_zip64=True) as entry:
        out = _Buffered(entry)
        out.write(orjson.dumps(header, option=orjson.OPT_INDENT_2)[:-2])  # without "\n}"
        for part in json_file.parts:
            names = exported_columns(part)
            derive = DERIVED.get(part.table.name)
            out.write(b",\n  " + orjson.dumps(part.key) + b": [")
            separator = b"\n    "
            for row in iter_rows(part.table, names, selection(part, context.user_id)):
                record = {camel(name): plain(value) for name, value in row.items()}
                if derive is not None:
                    record.update(derive(row, context))
                out.write(separator + orjson.dumps(record))
                separator = b",\n    "
            out.write(b"]" if separator == b"\n    " else b"\n  ]")
        out.write(b"\n}\n")
        out.flush()


def _image_part() -> Part:
    return next(
        part
        for json_file in FILES
        for part in json_file.parts
        if part.table.name == IMAGES_TABLE.name
    )


def _write_image_files(
    archive: zipfile.ZipFile, user_id: uuid.UUID, store: ImageStore, cap_bytes: int
) -> frozenset[uuid.UUID]:
    """The largest kept size of each of the user's images, while their total stays
    within `cap_bytes` (JPEG: stored, not compressed again); which images went in."""
    part = _image_part()
    written: set[uuid.UUID] = set()
    total = 0
    for row in iter_rows(part.table, ["id"], selection(part, user_id)):
        key = variant_key(row["id"], IMAGE_FILE_VARIANT)
        data = store.read(key)
        if data is None:
            continue
        if total + len(data) > cap_bytes:
            break
        archive.writestr(f"{IMAGES_FOLDER}/{key}", data, compress_type=zipfile.ZIP_STORED)
        total += len(data)
        written.add(row["id"])
    return frozenset(written)


def _waypoints(user_id: uuid.UUID) -> Iterator[ExportWaypoint]:
    """The user's notes with coordinates (personal and team ones, not deleted)."""
    table = table_of(Note)
    names = [
        "title",
        "body",
        "latitude",
        "longitude",
        "created_utc",
        "external_link_url",
        "external_link_description",
    ]
    where = (
        (table.c.owner_user_id == user_id)
        & table.c.is_deleted.is_(False)
        & table.c.latitude.is_not(None)
        & table.c.longitude.is_not(None)
    )
    for row in iter_rows(table, names, where):
        yield ExportWaypoint(
            latitude=row["latitude"],
            longitude=row["longitude"],
            name=row["title"],
            description=row["body"],
            time=row["created_utc"],
            link=row["external_link_url"],
            link_text=row["external_link_description"] or None,
        )


def _write_gpx(archive: zipfile.ZipFile, context: ArchiveContext) -> None:
    with archive.open(GPX_FILE, "w", force_zip64=True) as entry:
        for chunk in write_gpx(
            _waypoints(context.user_id), name="Location Notes", generated_utc=context.now
        ):
            entry.write(chunk)


def write_archive(
    target: IO[bytes],
    user_id: uuid.UUID,
    *,
    image_store: ImageStore,
    image_cap_bytes: int,
    now: datetime,
) -> None:
    """Write the whole export of `user_id` as a ZIP into `target` (seekable)."""
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
        zf.writestr(README, readme(now))
        for name, schema in schema_files().items():
            zf.writestr(f"{SCHEMAS_FOLDER}/{name}", schema)
        included = _write_image_files(zf, user_id, image_store, image_cap_bytes)
        context = ArchiveContext(user_id, now, included)
        for json_file in FILES:
            _write_json(zf, json_file, context)
        _write_gpx(zf, context)


# --- the README ---------------------------------------------------------------------------


def readme(now: datetime) -> str:
    """What each file holds and what is left out, from the catalogue itself."""
    lines = [
        "# Your Location Notes data",
        "",
        f"This ZIP holds the personal data Location Notes kept about your account on "
        f"{plain(now)}, exported at your request (GDPR articles 15 and 20: access and "
        "portability).",
        "",
        "Each JSON file is one object: `exportedUtc`, `accountId` (your account's id), "
        "then one list per kind of record. Records are as stored: field names are the "
        "stored names in camelCase, ids are lowercase GUIDs, times are ISO 8601 in UTC "
        "ending in `Z`, and a field ending in `Id` holds the id of another record (in "
        "this export when it is yours).",
        "",
        "## Files",
        "",
        f"### {README}",
        "",
        "This description.",
        "",
    ]
    for json_file in FILES:
        lines += [f"### {json_file.name}", "", json_file.about, ""]
        for part in json_file.parts:
            names = exported_columns(part)
            derived = list(DERIVED_FIELDS.get(part.table.name, {}))
            fields = ", ".join(f"`{camel(name)}`" for name in names + derived)
            lines.append(f"- `{part.key}`: {part.about} Fields: {fields}.")
        lines.append("")
    lines += [
        f"### {GPX_FILE}",
        "",
        GPX_ABOUT,
        "",
        f"### {IMAGES_FOLDER}/",
        "",
        IMAGES_ABOUT,
        "",
        f"### {SCHEMAS_FOLDER}/",
        "",
        SCHEMA_ABOUT,
        "",
        "## What is not in this export, and why",
        "",
        "Secrets are never exported: with them someone could sign in as you or act for "
        "you. These stored fields are left out:",
        "",
    ]
    lines += [f"- `{column}`: {reason}" for column, reason in EXCLUDED.items()]
    lines += ["", "These records refer to your account but are not exported:", ""]
    lines += [f"- `{column}`: {reason}" for column, reason in NOT_EXPORTED.items()]
    lines.append("")
    return "\n".join(lines)
