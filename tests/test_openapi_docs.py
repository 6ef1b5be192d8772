"""The OpenAPI document reads as documentation a client can be generated from: an
introduction, an example on every body that its schema accepts (naming no field the
schema does not), and the headers of 429 and 503 answers (app.api.documentation)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError

from app.api import documentation
from app.api.base import ERROR_RESPONSES, EVERY_OPERATION
from app.api.examples import COMPONENTS, NOTE, PROBLEMS, problem
from app.error_codes import ERROR_CODES, error_code_table

METHODS = {"get", "post", "put", "patch", "delete"}


@pytest.fixture
def document(api) -> dict[str, Any]:
    response = api.get("/api/openapi.json")
    assert response.status_code == 200
    return response.get_json()


def operations(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield f"{method.upper()} {path}", operation


def resolve(document: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        section, name = node["$ref"].split("/")[-2:]
        node = document["components"][section][name]
    return node


def bodies(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, media type object) of every request and response body."""
    for key, operation in operations(document):
        request = operation.get("requestBody", {}).get("content", {})
        for media_type, media in request.items():
            yield f"{key} request {media_type}", media
        for status, response in operation["responses"].items():
            for media_type, media in resolve(document, response).get("content", {}).items():
                yield f"{key} {status} {media_type}", media


def strict(document: dict[str, Any]) -> dict[str, Any]:
    """The document's components with every object schema closed to properties it does
    not list: an example must not show a field the document does not have."""
    components = copy.deepcopy(document["components"])

    def close(node: Any) -> None:
        if isinstance(node, dict):
            if "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(components["schemas"])
    return {"components": components}


def check(root: dict[str, Any], schema: dict[str, Any], example: Any) -> None:
    validator = Draft202012Validator({**root, **schema}, format_checker=FormatChecker())
    validator.validate(example)


def examples_of(media: dict[str, Any]) -> list[Any]:
    found = [media["example"]] if "example" in media else []
    return found + [item["value"] for item in media.get("examples", {}).values()]


def test_the_document_opens_with_an_introduction(document):
    text = document["info"]["description"]
    for heading in (
        "## Authentication and refresh",
        "## Errors",
        "## Unknown fields",
        "## Pagination",
        "## Limits and rate limits",
        "## Sync",
        "## Webhooks",
    ):
        assert heading in text
    assert "{error_codes}" not in text
    for code, (statuses, _meaning) in error_code_table().items():
        assert f"| `{code}` | {', '.join(map(str, statuses))} |" in text
    for header in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"):
        assert header in text


def test_the_table_of_codes_is_rendered_from_a_mapping():
    table = documentation.error_codes_table(
        {
            "zebra_missing": ((404,), "No zebra | here."),
            "bad_stripes": ((400, 409), "Stripes\n wrong."),
        }
    )
    assert table.splitlines() == [
        "| code | status | meaning |",
        "|---|---|---|",
        "| `bad_stripes` | 400, 409 | Stripes wrong. |",
        "| `zebra_missing` | 404 | No zebra \\| here. |",
    ]
    assert "| `zebra_missing` |" in documentation.introduction({"zebra_missing": ((404,), "x")})


def test_every_body_has_an_example(document):
    missing = [
        where
        for where, media in bodies(document)
        if not examples_of(media) and media.get("schema", {}).get("format") != "binary"
    ]
    assert missing == []


def test_every_example_is_valid_against_its_schema_and_names_only_its_fields(document):
    root = strict(document)
    checked, wrong = 0, []
    for where, media in bodies(document):
        for example in examples_of(media):
            try:
                check(root, media.get("schema", {}), example)
            except ValidationError as error:
                wrong.append(f"{where}: {error.message} at {list(error.absolute_path)}")
            checked += 1
    assert wrong == []
    assert checked > 150


def test_the_check_refuses_an_example_with_a_wrong_or_an_unknown_field(document):
    root = strict(document)
    note = {"$ref": "#/components/schemas/Note"}

    check(root, note, NOTE)
    with pytest.raises(ValidationError, match="noteTitle"):
        check(root, note, {**NOTE, "noteTitle": "typo"})
    with pytest.raises(ValidationError, match="is not a 'uuid'"):
        check(root, note, {**NOTE, "noteId": "note-1"})


def test_every_problem_example_answers_its_status_and_ours_carry_a_code(document):
    for where, media in bodies(document):
        if "problem+json" not in where:
            continue
        status = where.split(" ")[2]
        for example in examples_of(media):
            assert str(example["status"]) == status, where
    for status in ERROR_RESPONSES:
        assert problem(status)["code"], status


def test_every_operation_documents_the_statuses_any_operation_can_answer(document):
    for key, operation in operations(document):
        assert {str(status) for status in EVERY_OPERATION} <= set(operation["responses"]), key


def test_every_429_documents_retry_after_and_the_rate_limit_headers(document):
    for key, operation in operations(document):
        assert "429" in operation["responses"], key
        headers = resolve(document, operation["responses"]["429"]).get("headers", {})
        for name in ("Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining"):
            assert name in headers, f"{key} 429 {name}"
        assert "X-RateLimit-Reset" in headers, key
        assert resolve(document, headers["Retry-After"])["schema"]["type"] == "integer", key


def test_every_503_documents_retry_after(document):
    for key, operation in operations(document):
        headers = resolve(document, operation["responses"]["503"]).get("headers", {})
        retry_after = resolve(document, headers["Retry-After"])
        assert retry_after["schema"]["type"] == "integer", key


def test_the_problem_examples_show_codes_of_the_registry():
    for status in PROBLEMS:
        example = problem(status)
        assert status in ERROR_CODES[example["code"]].statuses, (status, example["code"])
    for name, example in COMPONENTS.items():
        assert example["status"] in ERROR_CODES[example["code"]].statuses, name
