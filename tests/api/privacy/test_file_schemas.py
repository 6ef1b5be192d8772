"""The JSON Schemas of a data export's files: every file of a real export is one the test
knows, every JSON file has its schema in the ZIP and is valid against it, the schemas are
strict enough to catch a wrong file, and the API serves the same text at a stable address."""

from __future__ import annotations

import io
import json
import uuid
import zipfile
from pathlib import Path
from typing import Any

import pytest
import xmlschema
from jsonschema import Draft202012Validator, FormatChecker
from sqlalchemy import Column, Integer, LargeBinary, MetaData, String, Table

from app.extensions import db
from app.models.compliance import ContentReport
from app.models.note import Note
from app.models.trackable import Trackable
from app.services.privacy import file_schemas
from tests.api.privacy.conftest import EXPORT_URL, export_ready, open_zip
from tests.conftest import assert_problem
from tests.factories import attach_trackable, make_user

SCHEMAS_URL = f"{EXPORT_URL}/schemas"
GPX_SCHEMA = Path(__file__).resolve().parents[2] / "data" / "gpx" / "gpx11.xsd"


def schema_of(name: str) -> str:
    """`notes.json` -> `schemas/notes.schema.json`."""
    return f"schemas/{name.removesuffix('.json')}.schema.json"


def empty_lists(name: str, body: dict[str, Any]) -> list[str]:
    return [f"{name} {key}" for key, value in body.items() if value == []]


def problems_of(archive: zipfile.ZipFile) -> tuple[list[str], list[str]]:
    """What is wrong with the files of an export (a file the test does not know, a JSON
    file without a schema or not valid against it, a schema without its file, a GPX file
    that is not GPX 1.1), and which lists were empty (their records went unchecked)."""
    names = set(archive.namelist())
    problems: list[str] = []
    empty: list[str] = []
    for name in sorted(names):
        if name == "README.md":
            archive.read(name).decode("utf-8")
        elif name == "notes.gpx":
            xmlschema.XMLSchema(str(GPX_SCHEMA), allow="local").validate(
                archive.read(name).decode()
            )
        elif name.startswith("images/"):
            if archive.read(name)[:3] != b"\xff\xd8\xff":
                problems.append(f"{name} is not a JPEG")
        elif name.startswith("schemas/"):
            Draft202012Validator.check_schema(json.loads(archive.read(name)))
            stem = name.removeprefix("schemas/").removesuffix(".schema.json")
            if f"{stem}.json" not in names:
                problems.append(f"{name} describes no file of the ZIP")
        elif name.endswith(".json") and "/" not in name:
            if schema_of(name) not in names:
                problems.append(f"{name} has no schema ({schema_of(name)})")
                continue
            validator = Draft202012Validator(
                json.loads(archive.read(schema_of(name))), format_checker=FormatChecker()
            )
            body = json.loads(archive.read(name))
            empty += empty_lists(name, body)
            problems += [
                f"{name} at /{'/'.join(map(str, error.absolute_path))}: {error.message}"
                for error in validator.iter_errors(body)
            ]
        else:
            problems.append(f"{name}: a file the test does not know; give it a schema here")
    return problems, empty


def rewritten(archive: zipfile.ZipFile, changes: dict[str, bytes | None]) -> zipfile.ZipFile:
    """A copy of `archive` with some entries replaced, or left out (None)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as copy:
        for name in archive.namelist():
            data = changes.get(name, archive.read(name))
            if data is not None:
                copy.writestr(name, data)
        for name, data in changes.items():
            if name not in archive.namelist() and data is not None:
                copy.writestr(name, data)
    return zipfile.ZipFile(io.BytesIO(buffer.getvalue()))


# Lists the rich account leaves empty (their record schemas are made as the others are):
# a new list must hold a record here, or say here why it does not.
LEFT_EMPTY = {
    "notifications.json digest": "a digest waits only for daily mail",
    "sessions.json websiteSessions": "no browser signed in on the website",
    "teams.json teamAccessChanges": "the account left no team",
    "webhooks.json deliveries": "a delivery would go out to the network",
    "webhooks.json attempts": "as deliveries",
}


@pytest.fixture
def archive(app, api, rich) -> zipfile.ZipFile:
    note = db.session.get(Note, uuid.UUID(rich.ids["note"]))
    attach_trackable(note, db.session.get(Trackable, uuid.UUID(rich.ids["trackable"])))
    report = db.session.get(ContentReport, uuid.UUID(rich.ids["report"]))
    report.reviewer_user_id, report.reviewer_display_name = rich.user.id, "Ada E."
    db.session.commit()
    me = api.as_user(rich.user)
    record = export_ready(app, me)
    return open_zip(me.get(record["downloadUrl"]))


def test_every_file_of_a_real_export_is_known_and_every_json_file_valid_against_its_schema(
    archive,
):
    problems, empty = problems_of(archive)
    assert problems == []
    assert set(empty) <= set(LEFT_EMPTY), "records of these lists went unchecked"
    json_files = [name for name in archive.namelist() if name.endswith(".json") and "/" not in name]
    assert len(json_files) == len(file_schemas.schema_files())


def test_an_empty_accounts_export_is_valid_too(app, api):
    me = api.as_user(make_user())
    archive = open_zip(me.get(export_ready(app, me)["downloadUrl"]))
    assert problems_of(archive)[0] == []


def test_a_json_file_without_its_schema_fails_the_check(archive):
    problems, _ = problems_of(rewritten(archive, {"schemas/notes.schema.json": None}))
    assert problems == ["notes.json has no schema (schemas/notes.schema.json)"]
    problems, _ = problems_of(rewritten(archive, {"browsers.json": b"{}"}))
    assert problems == ["browsers.json has no schema (schemas/browsers.schema.json)"]
    problems, _ = problems_of(rewritten(archive, {"notes.csv": b"id,title"}))
    assert problems == ["notes.csv: a file the test does not know; give it a schema here"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda note: note.pop("title"), "'title' is a required property"),
        (lambda note: note.update(mood="sunny"), "Additional properties are not allowed"),
        (lambda note: note.update(title=None), "None is not of type 'string'"),
        (lambda note: note.update(latitude="52.48"), "'52.48' is not of type 'number', 'null'"),
        (lambda note: note.update(id="note-1"), "'note-1' is not a 'uuid'"),
        (lambda note: note.update(visibility="Secret"), "'Secret' is not one of"),
    ],
)
def test_a_record_with_a_missing_extra_or_wrong_field_fails_the_check(archive, change, expected):
    notes = json.loads(archive.read("notes.json"))
    change(notes["notes"][0])
    problems, _ = problems_of(rewritten(archive, {"notes.json": json.dumps(notes).encode()}))
    assert len(problems) == 1, problems
    assert problems[0].startswith("notes.json at /notes/0")
    assert expected in problems[0]


def test_the_schemas_are_served_as_the_zip_holds_them(archive, api):
    names = [name for name in archive.namelist() if name.startswith("schemas/")]
    assert names
    for name in names:
        response = api.get(f"{SCHEMAS_URL}/{name.removeprefix('schemas/')}")
        assert response.status_code == 200, name
        assert response.mimetype == "application/schema+json"
        assert response.data == archive.read(name)
        assert response.headers["Cache-Control"] == "public, max-age=3600"
        again = api.get(response.request.path, headers={"If-None-Match": response.headers["ETag"]})
        assert again.status_code == 304


@pytest.mark.parametrize("name", ["notes.json", "nothing.schema.json", "..%2Fnotes.schema.json"])
def test_another_name_is_not_found(api, name):
    assert_problem(api.get(f"{SCHEMAS_URL}/{name}"), 404, code="route_not_found")


def test_a_nullable_column_allows_null_and_an_enum_column_its_values():
    table = Table(
        "samples",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("nickname", String(20), nullable=True),
    )
    assert file_schemas.column_schema(table.c.id) == {"type": "integer"}
    assert file_schemas.column_schema(table.c.nickname) == {"type": ["string", "null"]}
    from app.models.note import Note

    visibility = file_schemas.column_schema(Note.__table__.c.visibility)
    assert visibility == {
        "type": "string",
        "enum": ["Private", "Public", "VisibleOnceAssociatedTrackableAccessed"],
    }


def test_a_column_type_without_a_json_form_fails_when_the_schemas_are_made():
    table = Table("blobs", MetaData(), Column("data", LargeBinary, nullable=False))
    with pytest.raises(TypeError, match=r"blobs\.data: no JSON Schema"):
        file_schemas.column_schema(table.c.data)
