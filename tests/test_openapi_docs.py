"""The OpenAPI document reads as documentation a client can be generated from: an
introduction, an example on every body that its schema accepts (naming no field the
schema does not), and the headers of 429 and 503 answers (app.api.documentation)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError

from app.api import documentation
from app.api.base import ERROR_RESPONSES, EVERY_OPERATION
from app.api.examples import COMPONENTS, NOTE, PROBLEMS, problem
from app.error_codes import ERROR_CODES, error_code_table
from tests.openapi_answers import closed

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
    return {"components": closed(document["components"])}


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


RATE_LIMIT_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")
# Rate-limited in the contract: sign-in, registration, account mails, reports and error
# posts, link checks, label sheets (`limits.rateLimits` of the status).
RATE_LIMITED = {
    "POST /api/auth/register",
    "POST /api/auth/login",
    "POST /api/auth/resendConfirmationEmail",
    "POST /api/auth/forgotPassword",
    "POST /api/auth/resetPassword",
    "POST /api/compliance/reports",
    "POST /api/compliance/errors",
    "POST /api/external-links/verify",
    "POST /api/trackables/labels",
}
# Answers given before a limit counts the request: no rate-limit header on them.
UNCOUNTED = {"413", "414", "431"}


def rate_limited(document: dict[str, Any]) -> set[str]:
    """The operations whose answers the document gives the rate-limit headers."""
    return {
        key
        for key, operation in operations(document)
        if any(
            "X-RateLimit-Limit" in resolve(document, response).get("headers", {})
            for response in operation["responses"].values()
        )
    }


def test_every_429_and_503_documents_retry_after(document):
    assert document["components"]["headers"]["RetryAfter"]["required"] is True
    for key, operation in operations(document):
        for status in ("429", "503"):
            headers = resolve(document, operation["responses"][status]).get("headers", {})
            retry_after = resolve(document, headers["Retry-After"])
            assert retry_after["schema"]["type"] == "integer", f"{key} {status}"


def test_the_rate_limited_operations_are_those_of_the_contract(document):
    assert rate_limited(document) == RATE_LIMITED


def test_every_answer_of_a_rate_limited_operation_documents_the_headers(document):
    """Every status but those answered before the count (413, 414, 431); none of the
    headers required (a body that is not JSON is refused before the count too), and
    Retry-After the window's on a 2xx or 4xx, the wait's on a 429 or 503."""
    for key, operation in operations(document):
        if key not in RATE_LIMITED:
            continue
        for status, response in operation["responses"].items():
            headers = resolve(document, response).get("headers", {})
            if status in UNCOUNTED:
                assert not set(RATE_LIMIT_HEADERS) & set(headers), f"{key} {status}"
                continue
            for name in (*RATE_LIMIT_HEADERS, "Retry-After"):
                assert name in headers, f"{key} {status} {name}"
            for name in RATE_LIMIT_HEADERS:
                header = resolve(document, headers[name])
                assert header["schema"] == {"type": "integer", "minimum": 0}, name
                assert not header.get("required"), f"{key} {status} {name}"
            retry_after = resolve(document, headers["Retry-After"])
            assert retry_after.get("required", False) is (status in ("429", "503")), key


def test_other_operations_document_no_rate_limit_header(document):
    for key, operation in operations(document):
        if key in RATE_LIMITED:
            continue
        for status, response in operation["responses"].items():
            headers = resolve(document, response).get("headers", {})
            assert not set(RATE_LIMIT_HEADERS) & set(headers), f"{key} {status}"


def test_the_problem_examples_show_codes_of_the_registry():
    for status in PROBLEMS:
        example = problem(status)
        assert status in ERROR_CODES[example["code"]].statuses, (status, example["code"])
    for name, example in COMPONENTS.items():
        assert example["status"] in ERROR_CODES[example["code"]].statuses, name
