"""The OpenAPI document describes every trackable route of the contract (tables
"Trackables: reads, creation, groups" and "Trackables: lookup and active sessions") with
its method, summary, access, request and response schemas; create and lookup carry
examples; no example is a working secret code or QR token; the rotation route says it is
beyond the contract. (tests/test_openapi.py checks the document as a whole.)"""

from __future__ import annotations

import re
from typing import Any

import pytest

from app.services import trackables
from app.services.trackables.codes import formats as codes

BEARER = "Bearer"
ANONYMOUS = "Anonymous"  # also "Anonymous or Bearer": a token is accepted, none needed


@pytest.fixture
def document(api):
    response = api.get("/api/openapi.json")
    assert response.status_code == 200
    return response.get_json()


def deref(document: dict[str, Any], node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        target: Any = document
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def properties(document: dict[str, Any], schema: Any) -> dict[str, Any]:
    """The properties of an object schema, or of the items of an array schema."""
    schema = deref(document, schema)
    if schema.get("type") == "array":
        schema = deref(document, schema["items"])
    merged: dict[str, Any] = {}
    for part in schema.get("allOf", []):
        merged.update(properties(document, part))
    merged.update(schema.get("properties", {}))
    return merged


def operation(document: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    assert path in document["paths"], f"{path} is not documented"
    item = document["paths"][path]
    assert method in item, f"{method.upper()} {path} is not documented"
    return item[method]


def request_schema(document: dict[str, Any], op: dict[str, Any]) -> Any:
    content = op["requestBody"]["content"]
    return content["application/json"]["schema"]


def success(op: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    (status,) = [code for code in op["responses"] if code.startswith("2")]
    return status, op["responses"][status]


def response_schema(op: dict[str, Any]) -> Any:
    _, response = success(op)
    return response["content"]["application/json"]["schema"]


# --- the two tables of the contract ------------------------------------------------------

LAST_ACTIVITY = {"trackableId", "publicCode", "lastActivityUtc"}
CREATE_FIELDS = {
    "name",
    "description",
    "externalLinkUrl",
    "externalLinkDescription",
    "externalLinkAppendPublicTrackableCode",
    "teamId",
    "visibility",
    "activateImmediately",
    "secretCode",
}
ITEM_FIELDS = {"trackableId", "name", "publicCode", "secretCode", "scanUrl", "qrPayload"}
GROUP_FIELDS = {
    "name",
    "description",
    "defaultTrackableTitle",
    "defaultTrackableDescription",
    "defaultExternalLinkUrl",
    "defaultExternalLinkDescription",
    "defaultExternalLinkAppendPublicTrackableCode",
    "defaultStatusMessage",
    "trackableCount",
    "teamId",
    "visibility",
    "activateImmediately",
    "watchGroupActivityWhenCreated",
}
ACTIVATE_FIELDS = {
    "name",
    "description",
    "statusMessage",
    "useGroupDefaultTitle",
    "useGroupDefaultDescription",
    "useGroupDefaultStatusMessage",
    "teamId",
    "externalLinkUrl",
    "externalLinkDescription",
    "useGroupDefaultExternalLink",
    "initialJourneyStopLatitude",
    "initialJourneyStopLongitude",
}
LOOKUP_RESULT = {"found", "trackableId", "isPublicCodeMatch", "usesSecretAccess", "redirectUrl"}
LANDING = {"trackableId", "activationRequired", "isGrouped", "activationContexts", "groupItems"}
ONE = "/api/trackables/{trackableId}"
GROUP_WATCH = "/api/trackables/groups/{trackableGroupId}/watch"
ACTIVE_ONE = "/api/trackables/active/{trackableId}"
PAGED = {"limit", "cursor"}  # beyond the contract: docs/contract/wire.md, Pagination

# (method, path, access, request body fields or None, query parameters, response fields
# or None when the contract shows no payload)
ROUTES = [
    ("get", "/api/trackables/public", ANONYMOUS, None, {"contentLanguage"}, LAST_ACTIVITY),
    ("get", "/api/trackables/mine", BEARER, None, PAGED, LAST_ACTIVITY),
    ("get", ONE, ANONYMOUS, None, set(), LAST_ACTIVITY),
    (
        "post",
        "/api/trackables",
        BEARER,
        CREATE_FIELDS,
        set(),
        {"trackableId", "heading", "description", "items"},
    ),
    ("post", "/api/trackables/groups", BEARER, GROUP_FIELDS, set(), {"items"}),
    ("post", f"{ONE}/activate", BEARER, ACTIVATE_FIELDS, set(), set()),
    ("post", f"{ONE}/watch", BEARER, None, set(), None),
    ("delete", f"{ONE}/watch", BEARER, None, set(), None),
    ("delete", f"{ONE}/group", BEARER, None, set(), None),
    ("post", f"{ONE}/group", BEARER, {"trackableGroupId"}, set(), None),
    ("post", GROUP_WATCH, BEARER, None, set(), None),
    ("delete", GROUP_WATCH, BEARER, None, set(), None),
    ("post", "/api/trackables/lookup", ANONYMOUS, {"code"}, set(), LOOKUP_RESULT),
    ("get", "/api/trackables/lookup", ANONYMOUS, None, {"code"}, LOOKUP_RESULT),
    ("get", "/api/trackables/active", ANONYMOUS, None, PAGED, {"trackableId"}),
    ("get", ACTIVE_ONE, ANONYMOUS, None, set(), LANDING),
    ("post", f"{ACTIVE_ONE}/message", ANONYMOUS, set(), set(), None),
    ("delete", ACTIVE_ONE, ANONYMOUS, None, set(), None),
]
IDS = [f"{method.upper()} {path}" for method, path, *_ in ROUTES]


@pytest.mark.parametrize(("method", "path", "access", "body", "query", "answer"), ROUTES, ids=IDS)
def test_contract_route_is_documented_with_a_summary_and_access(
    document, method, path, access, body, query, answer
):
    op = operation(document, method, path)
    assert op.get("summary", "").strip(), "no summary"
    assert op.get("description", "").strip(), "no description"
    assert "trackables" in op.get("tags", [])
    security = op.get("security")
    if access == BEARER:
        assert security == [{"bearerAuth": []}]
        assert "401" in op["responses"]
    else:
        assert {} in security  # no credentials needed


@pytest.mark.parametrize(("method", "path", "access", "body", "query", "answer"), ROUTES, ids=IDS)
def test_contract_route_documents_its_request(document, method, path, access, body, query, answer):
    op = operation(document, method, path)
    if body is None:
        assert "requestBody" not in op
    else:
        documented = properties(document, request_schema(document, op))
        assert body <= set(documented), body - set(documented)
        assert documented, "an empty request schema"
    parameters = op.get("parameters", []) + document["paths"][path].get("parameters", [])
    assert {p["name"] for p in parameters if p["in"] == "query"} == query
    path_names = {p["name"] for p in parameters if p["in"] == "path"}
    assert path_names == set(re.findall(r"\{(\w+)\}", path))


@pytest.mark.parametrize(("method", "path", "access", "body", "query", "answer"), ROUTES, ids=IDS)
def test_contract_route_documents_its_response(document, method, path, access, body, query, answer):
    op = operation(document, method, path)
    status, response = success(op)
    if method == "delete" and path == ACTIVE_ONE:
        assert status == "204"
        assert "content" not in response
        return
    assert status == ("201" if path in ("/api/trackables", "/api/trackables/groups") else "200")
    documented = properties(document, response_schema(op))
    assert documented, "an empty response schema"
    assert (answer or set()) <= set(documented), (answer or set()) - set(documented)


def test_create_items_carry_the_codes_shown_once(document):
    op = operation(document, "post", "/api/trackables")
    items = properties(document, response_schema(op))["items"]
    item = properties(document, items)
    assert set(item) == ITEM_FIELDS
    for field in ("secretCode", "scanUrl", "qrPayload"):
        assert "only in this response" in item[field]["description"].lower()


def test_group_create_items_carry_the_codes_too(document):
    op = operation(document, "post", "/api/trackables/groups")
    answer = properties(document, response_schema(op))
    assert {"trackableGroupId", "lastActivityUtc"} <= set(answer)
    assert set(properties(document, answer["items"])) == ITEM_FIELDS


def test_visibility_lists_the_contracts_values(document):
    op = operation(document, "post", "/api/trackables")
    visibility = deref(document, properties(document, request_schema(document, op))["visibility"])
    assert set(visibility["enum"]) == {"AlwaysVisibleToEveryone", "VisibleOnceAccessed"}


# --- where secret fields may appear ------------------------------------------------------

SECRET_FIELDS = {"secretCode", "scanUrl", "qrPayload"}
SHOWN_ONCE_SCHEMAS = {"TrackableSecrets", "TrackableCreatedItem"}
# Request bodies that carry codes: an own secret, and the codes a label sheet prints.
SECRET_INPUTS = {"TrackableCreate", "TrackableSecretRotate", "TrackableLabelItem"}


def test_only_creation_rotation_and_label_schemas_have_secret_fields(document):
    holders = {
        name
        for name, schema in document["components"]["schemas"].items()
        if SECRET_FIELDS & set(schema.get("properties", {}))
    }
    assert holders == SHOWN_ONCE_SCHEMAS | SECRET_INPUTS


def test_no_read_route_answers_with_a_schema_holding_secrets(document):
    for method, path, *_ in ROUTES:
        if path in ("/api/trackables", "/api/trackables/groups"):
            continue
        op = operation(document, method, path)
        _, response = success(op)
        text = str(response)
        assert not any(name in text for name in SHOWN_ONCE_SCHEMAS), f"{method} {path}"


# --- examples ----------------------------------------------------------------------------


def media(op: dict[str, Any], *, request: bool) -> dict[str, Any]:
    if request:
        return op["requestBody"]["content"]["application/json"]
    return success(op)[1]["content"]["application/json"]


def example_values(content: dict[str, Any]) -> list[Any]:
    values = [content["example"]] if "example" in content else []
    values += [example["value"] for example in content.get("examples", {}).values()]
    return values


def test_create_has_a_complete_request_example(document):
    op = operation(document, "post", "/api/trackables")
    (example,) = example_values(media(op, request=True))
    assert set(example) == CREATE_FIELDS
    assert set(example) <= set(properties(document, request_schema(document, op)))
    assert example["secretCode"] == ""  # asks for a generated code


def test_create_has_a_complete_response_example(document):
    op = operation(document, "post", "/api/trackables")
    (example,) = example_values(media(op, request=False))
    assert set(example) == {"trackableId", "heading", "description", "items"}
    (item,) = example["items"]
    assert set(item) == ITEM_FIELDS
    assert item["qrPayload"] == item["scanUrl"]
    assert re.search(r"/trackable/[^/]+$", item["scanUrl"])


def test_group_create_has_a_complete_request_example(document):
    op = operation(document, "post", "/api/trackables/groups")
    (example,) = example_values(media(op, request=True))
    assert set(example) == GROUP_FIELDS
    assert 1 <= example["trackableCount"] <= 100


def test_lookup_has_request_examples_of_a_public_and_a_secret_code(document):
    op = operation(document, "post", "/api/trackables/lookup")
    examples = example_values(media(op, request=True))
    assert len(examples) >= 2
    assert all(set(example) == {"code"} for example in examples)
    query = operation(document, "get", "/api/trackables/lookup")
    (code,) = [p for p in query["parameters"] if p["name"] == "code"]
    assert code["schema"]["example"]


@pytest.mark.parametrize("method", ["post", "get"])
def test_lookup_has_response_examples_of_hits_and_misses(document, method):
    op = operation(document, method, "/api/trackables/lookup")
    examples = example_values(media(op, request=False))
    schema = set(properties(document, response_schema(op)))
    assert all(set(example) <= schema for example in examples)
    assert all(set(example) >= LOOKUP_RESULT for example in examples)
    assert {example["found"] for example in examples} == {True, False}
    assert any(example["usesSecretAccess"] for example in examples)
    assert any(example["isPublicCodeMatch"] for example in examples)
    misses = [example for example in examples if not example["found"]]
    assert all(example["error"] and example["redirectUrl"] is None for example in misses)


@pytest.mark.parametrize("method", ["post", "get"])
def test_lookup_has_an_example_of_an_unactivated_items_public_code(document, method):
    op = operation(document, method, "/api/trackables/lookup")
    examples = media(op, request=False)["examples"]
    assert examples["notActivated"]["value"]["found"] is False
    assert examples["notActivated"]["value"]["error"] == trackables.NOT_ACTIVATED


def test_the_journey_statistics_document_the_seen_on_days(document):
    op = operation(document, "get", ONE)
    statistics = deref(document, properties(document, response_schema(op))["journeyStatistics"])
    for name in ("firstSeenOn", "lastSeenOn"):
        field = statistics["properties"][name]
        assert (field["type"], field["format"]) == (["string", "null"], "date")
        assert name in statistics["required"]


def test_lookup_mentions_the_website_entry_route(document):
    # GET /trackable/{code} answers with redirects and HTML: it is described with lookup
    # rather than documented as an operation of the JSON API.
    op = operation(document, "post", "/api/trackables/lookup")
    assert "/trackable/{code}" in op["description"]


TYPO_MAP = str.maketrans({"O": "0", "I": "1", "L": "1", "S": "5", "U": "V"})
SECRET_PREFIXES = ("LN", "GT")


def looks_like_a_live_code(word: str) -> bool:
    """Whether `word` could be a generated short secret (of any configured length) after
    typed lookup's normalisation, or a QR token."""
    upper = word.upper()
    for prefix in SECRET_PREFIXES:
        body = upper[len(prefix) :].translate(TYPO_MAP)
        if upper.startswith(prefix) and len(body) >= 4 and set(body) <= set(codes.ALPHABET):
            return True
    return len(word) >= 90  # a QR token's length (100 by default)


def code_examples(node: Any, field: str | None = None) -> list[tuple[str, Any]]:
    """(field, example) of every example of a code field in the document: the property
    examples of secretCode, scanUrl, qrPayload, code and accessCode, and their values in
    request and response examples (`field` is "value" inside an example value). The
    `code` of a problem body is a machine code (`problem_codes`), not a trackable's."""
    names = {"secretCode", "scanUrl", "qrPayload", "code", "accessCode"}
    found: list[tuple[str, Any]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "example" and field in names:
                found.append((field, value))
            elif field == "value" and key in ("code", "refusedItems") and is_problem(node):
                continue  # machine codes (a refused label request names one per item)
            elif field == "value" and key in names and not isinstance(value, dict | list):
                found.append((key, value))
            elif key in ("example", "value"):
                found += code_examples(value, "value")
            else:
                found += code_examples(value, key if key in names else field)
    elif isinstance(node, list):
        for value in node:
            found += code_examples(value, field)
    return found


def is_problem(node: dict) -> bool:
    """A problem body example (not the schema, whose `status` is a property)."""
    return {"type", "title", "status"} <= node.keys() and isinstance(node["status"], int)


def problem_codes(node: Any) -> list[Any]:
    """The `code` of every problem body example in the document."""
    if isinstance(node, dict):
        own = [node["code"]] if is_problem(node) and "code" in node else []
        return own + [code for value in node.values() for code in problem_codes(value)]
    if isinstance(node, list):
        return [code for value in node for code in problem_codes(value)]
    return []


def test_problem_examples_carry_machine_codes_not_trackable_codes(document):
    codes_seen = problem_codes(document)
    assert "trackable_hourly_limit_reached" in codes_seen
    for code in codes_seen:
        assert isinstance(code, str), code
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", code), code


def test_examples_of_codes_are_masked_or_public(document):
    examples = code_examples(document)
    assert ("secretCode", "") in examples  # the create request example's
    fields = {field for field, _ in examples}
    assert {"secretCode", "scanUrl", "qrPayload", "code"} <= fields
    for field, example in examples:
        assert isinstance(example, str), (field, example)
        if example == "":
            continue  # "generate one"
        if field == "code" and re.fullmatch(r"LN-[0-9A-Z]{6}", example):
            continue  # a public code is no secret
        assert "*" in example, f"{field} example {example!r} is not masked"


def test_no_example_anywhere_is_a_live_code(document):
    examples: list[str] = []

    def collect(node: Any, inside: bool = False) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                collect(value, inside or key in ("example", "examples"))
        elif isinstance(node, list):
            for value in node:
                collect(value, inside)
        elif inside and isinstance(node, str):
            examples.append(node)

    collect(document)
    assert any("LN-" in text for text in examples)  # the walk reaches the code examples
    words = [word for text in examples for word in re.findall(r"[A-Za-z0-9_-]+", text)]
    assert [word for word in words if looks_like_a_live_code(word)] == []


def test_masked_examples_are_explained(document):
    secrets = document["components"]["schemas"]["TrackableSecrets"]["properties"]
    for field in ("secretCode", "scanUrl", "qrPayload"):
        assert "masked" in secrets[field]["description"].lower()


# --- rotation ----------------------------------------------------------------------------

ROTATE = "/api/trackables/{trackableId}/secret/rotate"


def test_rotation_is_documented_as_beyond_the_contract(document):
    op = operation(document, "post", ROTATE)
    assert op["summary"].startswith("Rotate")
    assert "beyond the contract" in op["description"].lower()
    assert op["security"] == [{"bearerAuth": []}]
    assert {"401", "403", "404"} <= set(op["responses"])


def test_rotation_documents_an_optional_body_and_the_codes_it_answers(document):
    op = operation(document, "post", ROTATE)
    assert op["requestBody"]["required"] is False
    assert set(properties(document, request_schema(document, op))) == {"secretCode"}
    status, _ = success(op)
    assert status == "200"
    assert set(properties(document, response_schema(op))) == ITEM_FIELDS - {"name"}
    (example,) = example_values(media(op, request=False))
    assert "*" in example["secretCode"]
