"""The OpenAPI document is valid 3.1, and every route is documented."""

from __future__ import annotations

import json
import re
import subprocess
from urllib.parse import urljoin, urlsplit

from openapi_spec_validator import validate

from app.api.base import camelcase
from app.errors import status_title
from app.models.enums import NoteVisibility
from tests.node import node as node_path

PUBLIC = NoteVisibility.PUBLIC

METHODS = {"get", "post", "put", "patch", "delete"}


def test_openapi_document_is_valid_3_1(api):
    response = api.get("/api/openapi.json")
    assert response.status_code == 200
    document = response.get_json()
    assert document["openapi"].startswith("3.1")
    validate(document)


def test_bearer_security_scheme_is_declared(api):
    document = api.get("/api/openapi.json").get_json()
    scheme = document["components"]["securitySchemes"]["bearerAuth"]
    assert scheme == {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}


def test_every_operation_states_its_security(api):
    """Bearer, bearer or anonymous (`{}` among them), or open (`[]`): never left out."""
    document = api.get("/api/openapi.json").get_json()
    open_ones = []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                assert "security" in operation, f"{method.upper()} {path}"
                if operation["security"] == []:
                    open_ones.append(f"{method.upper()} {path}")
    assert "POST /api/auth/login" in open_ones
    assert "GET /api/notes/mine" not in open_ones


def test_every_operation_has_a_summary_and_problem_responses(api):
    document = api.get("/api/openapi.json").get_json()
    problem = "application/problem+json"
    responses = document["components"]["responses"]
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            assert operation.get("summary"), f"{method.upper()} {path} has no summary"
            assert "500" in operation["responses"], f"{method.upper()} {path}"
            answer = operation["responses"]["500"]  # a rate-limited route's own copy
            if "$ref" in answer:
                answer = responses[answer["$ref"].rsplit("/", 1)[-1]]
            assert problem in answer["content"]


def test_every_api_route_is_in_the_document(app, api):
    document = api.get("/api/openapi.json").get_json()
    documented = {(path, method) for path, item in document["paths"].items() for method in item}
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/") or rule.endpoint.startswith(("api-docs", "web.")):
            continue
        path = rule.rule
        for converter in ("uuid:", "int:", "path:", "string:"):
            path = path.replace("<" + converter, "<")
        path = re.sub(r"<(\w+)>", lambda match: "{" + camelcase(match.group(1)) + "}", path)
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            assert (path, method.lower()) in documented, f"{method} {path} is not documented"


def test_docs_page_and_its_assets_are_served_locally(api):
    page = api.get("/api/docs")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "/api/docs/assets/swagger-ui-bundle.js" in html
    assert "https://" not in html.split("<body>")[0]
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "swagger-ui-standalone-preset.js"):
        response = api.get(f"/api/docs/assets/{asset}")
        assert response.status_code == 200, asset
        response.close()


def test_path_parameters_are_named_as_in_the_contract(api):
    document = api.get("/api/openapi.json").get_json()
    operation = document["paths"]["/api/notes/mine/{noteId}/move"]
    names = [
        p["name"]
        for p in operation.get("parameters", []) + operation["post"].get("parameters", [])
        if p["in"] == "path"
    ]
    assert names == ["noteId"]


def resolve(document, schema):
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def test_a_body_is_documented_as_required_exactly_when_one_of_its_fields_is(api):
    document = api.get("/api/openapi.json").get_json()
    checked = 0
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is None:
                continue
            schema = resolve(document, body["schema"])
            has_required_field = bool(schema.get("required"))
            required = operation["requestBody"].get("required", False)
            assert required == has_required_field, f"{method.upper()} {path}"
            checked += 1
    assert checked > 20


def test_a_body_documented_as_optional_may_be_left_out(api):
    from tests.factories import make_user

    # The team settings body has no required field: no body is an update of nothing.
    user = make_user()
    created = api.as_user(user).post("/api/teams", json={"name": "Night Walkers"})
    assert created.status_code == 201, created.get_data(as_text=True)
    team_id = created.get_json()["teamId"]
    response = api.as_user(user).put(f"/api/teams/{team_id}/settings")
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()["name"] == "Night Walkers"


def string_schemas(node, where=""):
    """(where, schema) of every string-typed schema in the document."""
    if isinstance(node, dict):
        kinds = node.get("type")
        if kinds == "string" or (isinstance(kinds, list) and "string" in kinds):
            yield where, node
        for key, value in node.items():
            yield from string_schemas(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from string_schemas(value, f"{where}/{index}")


def test_every_plain_text_field_states_that_nul_is_refused(api):
    """The server refuses NUL in any text (JSON, query, form); the document says so in a
    `pattern` wherever a field has no pattern, format or enum of its own."""
    document = api.get("/api/openapi.json").get_json()
    plain = [
        (where, schema)
        for where, schema in string_schemas(document)
        if not {"format", "enum", "const"} & schema.keys() and "/responses/" not in where
    ]
    assert len(plain) > 100
    for where, schema in plain:
        assert "pattern" in schema, where
        assert not re.search(schema["pattern"], "a\x00b"), where


def test_display_names_and_comment_bodies_state_their_refused_characters(api):
    from app.models.text import IN_NAMES, IN_TEXT

    schemas = api.get("/api/openapi.json").get_json()["components"]["schemas"]
    assert schemas["TrackableCommentCreate"]["properties"]["displayName"]["pattern"] == (
        IN_NAMES.pattern
    )
    for name in ("TrackableCommentCreate", "TrackableCommentEdit", "CommentCreate"):
        assert schemas[name]["properties"]["body"]["pattern"] == IN_TEXT.pattern, name


SAMPLED = [*range(0x00, 0xA1), *range(0x200B, 0x2030), *range(0x2066, 0x206A), 0xFEFF]


def test_the_server_refuses_exactly_what_the_comment_body_pattern_refuses(api):
    """One character at a time, inside a body: 201 where the documented pattern matches,
    400 where it does not (schemathesis generates from the pattern both ways)."""
    from tests.factories import make_note, make_user

    pattern = api.get("/api/openapi.json").get_json()["components"]["schemas"]["CommentCreate"][
        "properties"
    ]["body"]["pattern"]
    note, writer = make_note(visibility=PUBLIC), make_user()
    disagree = []
    for code in SAMPLED:
        text = f"a{chr(code)}b"
        response = api.as_user(writer).post(
            f"/api/public/notes/{note.id}/comments", json={"body": text}
        )
        expected = 201 if re.search(pattern, text) else 400
        if response.status_code != expected:
            disagree.append(f"U+{code:04X}: {response.status_code}, documented {expected}")
    assert not disagree, disagree


def test_the_team_name_is_read_only_in_the_team_record(api):
    schemas = api.get("/api/openapi.json").get_json()["components"]["schemas"]
    assert schemas["Team"]["properties"]["name"]["readOnly"] is True
    assert "fixed after creation" in schemas["Team"]["properties"]["name"]["description"]
    assert "current name" in schemas["TeamSettings"]["properties"]["name"]["description"]


def test_every_operation_has_a_unique_operation_id_by_the_rule(api):
    """operationId: the view's name in camelCase, the blueprint's name first for a view
    made for several blueprints (app.api.base.blueprint.operation_id); generated clients
    name their methods after it."""
    document = api.get("/api/openapi.json").get_json()
    seen: dict[str, str] = {}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            where = f"{method.upper()} {path}"
            found = operation.get("operationId")
            assert re.fullmatch(r"[a-z][A-Za-z0-9]*", found or ""), where
            assert found not in seen, f"{where} and {seen.get(found)} share {found}"
            seen[found] = where
    assert seen["createJourneyStop"] == "POST /api/trackables/{trackableId}/journey-stops"
    assert seen["listMyNotes"] == "GET /api/notes/mine"
    assert seen["categoriesListCategories"] == "GET /api/categories/mine"
    assert seen["teamCategoriesListCategories"] == "GET /api/teams/{teamId}/categories"


def _patterns(node: object, where: str = "#") -> list[tuple[str, str]]:
    if isinstance(node, dict):
        found = [(where, node["pattern"])] if isinstance(node.get("pattern"), str) else []
        for key, value in node.items():
            found += _patterns(value, f"{where}/{key}")
        return found
    if isinstance(node, list):
        return [pair for i, value in enumerate(node) for pair in _patterns(value, f"{where}/{i}")]
    return []


def test_every_pattern_compiles_in_python_and_in_ecmascript(api):
    """JSON Schema's `pattern` is an ECMAScript expression: clients (ajv, browsers) compile
    it there. Node compiles each with the `u` flag, as ajv does; without node the test
    skips, and CI requires it (tests.node)."""
    document = api.get("/api/openapi.json").get_json()
    patterns = _patterns(document)
    assert patterns
    for _where, pattern in patterns:
        re.compile(pattern)  # raises on a pattern Python cannot read, naming it
    node = node_path()
    script = (
        "const bad = [];"
        "for (const [where, p] of JSON.parse(require('fs').readFileSync(0, 'utf8'))) {"
        "  try { new RegExp(p, 'u'); } catch (e) { bad.push(where + ': ' + p); } }"
        "process.stdout.write(JSON.stringify(bad));"
    )
    answer = subprocess.run(  # noqa: S603 - node, with our own script
        [node, "-e", script],
        input=json.dumps(patterns),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert json.loads(answer.stdout) == []


def _problem_examples(node: object) -> list[dict]:
    if isinstance(node, dict):
        found = [node] if node.get("type") == "about:blank" and "status" in node else []
        return found + [one for value in node.values() for one in _problem_examples(value)]
    if isinstance(node, list):
        return [one for value in node for one in _problem_examples(value)]
    return []


def test_problem_examples_carry_the_status_phrase_as_title(api):
    """RFC 9457: `about:blank` problems have the status's phrase as `title`; the specific
    words are in `detail` and `code` (answers are checked by tests.conftest.assert_problem)."""
    document = api.get("/api/openapi.json").get_json()
    examples = _problem_examples(document)
    assert len(examples) > 20
    for example in examples:
        assert example["title"] == status_title(example["status"]), example


# A field of an answer (or a webhook payload) that the server leaves out at times is not
# `required`, and its description says when it is there ("Present when the parent is a
# note."); every other field of an answer is `required`.
SAYS_WHEN = re.compile(r"\bwhen\b", re.IGNORECASE)


def answer_objects(document):
    """(where, component name or None, schema) of every object schema with properties in
    a 2xx answer or a webhook payload, following references, items and combinations."""
    schemas = document["components"]["schemas"]
    seen: set[str] = set()

    def walk(node, where, name):
        if not isinstance(node, dict):
            return
        if "$ref" in node:
            ref = node["$ref"].rsplit("/", 1)[-1]
            if ref not in seen:
                seen.add(ref)
                yield from walk(schemas[ref], ref, ref)
            return
        if "properties" in node:
            yield where, name, node
            for key, value in node["properties"].items():
                yield from walk(value, f"{where}.{key}", None)
        for key in ("items", "additionalProperties"):
            yield from walk(node.get(key), f"{where}[]", None)
        for key in ("anyOf", "oneOf", "allOf"):
            for index, value in enumerate(node.get(key, [])):
                yield from walk(value, f"{where}.{key}[{index}]", None)

    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            for status, response in operation["responses"].items():
                if not status.startswith("2"):
                    continue
                for media in response.get("content", {}).values():
                    where = f"{method.upper()} {path} {status}"
                    yield from walk(media.get("schema"), where, None)
    for event, item in document.get("webhooks", {}).items():
        for operation in item.values():
            for media in operation.get("requestBody", {}).get("content", {}).values():
                yield from walk(media.get("schema"), f"webhook {event}", None)


def test_every_object_in_an_answer_lists_the_fields_it_always_has_as_required(api):
    """Strict client generators (TypeScript) make a field optional unless it is
    `required`. The server sends every field of an answer (null where its type allows
    null; VALIDATE_RESPONSES=1 checks the answers of tests/api), so each is `required`
    but a field that says when it is there (SAYS_WHEN)."""
    document = api.get("/api/openapi.json").get_json()
    found = list(answer_objects(document))
    assert len(found) > 60
    wrong = []
    for where, _name, schema in found:
        for field in sorted(set(schema["properties"]) - set(schema.get("required", []))):
            if not SAYS_WHEN.search(schema["properties"][field].get("description", "")):
                wrong.append(f"{where}.{field}")
    assert wrong == []
    image = document["components"]["schemas"]["Image"]
    assert "noteId" not in image["required"]  # "Present when the parent is a note."
    assert "contentImageId" in image["required"]


def test_null_is_stated_in_the_type_as_3_1_does(api):
    """`type: [X, "null"]` (or `anyOf` with `{"type": "null"}`), never 3.0's `nullable`."""
    document = api.get("/api/openapi.json").get_json()

    def keys(node):
        if isinstance(node, dict):
            yield from node
            for value in node.values():
                yield from keys(value)
        elif isinstance(node, list):
            for value in node:
                yield from keys(value)

    assert "nullable" not in set(keys(document["components"])) | set(keys(document["paths"]))
    note = document["components"]["schemas"]["Note"]["properties"]
    assert note["latitude"]["type"] == ["number", "null"]


def _references(node: object) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        return found.union(*(_references(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_references(value) for value in node))
    return set()


def test_every_component_is_referenced(api):
    """No unused schema, response, header or parameter (Redocly's no-unused-components,
    Spectral's oas3-unused-component): flask-smorest's `X-Pagination` header and its
    `PaginationMetadata` are left out, as lists page by `Link`."""
    document = api.get("/api/openapi.json").get_json()
    components = document["components"]
    outside = _references({key: value for key, value in document.items() if key != "components"})
    used = set(outside)
    while True:  # what the used components refer to, until nothing new is found
        more = set().union(
            *(
                _references(components[section][name])
                for section, name in (ref.split("/")[-2:] for ref in used)
            )
        )
        if more <= used:
            break
        used |= more
    for section in ("schemas", "responses", "headers", "parameters"):
        for name in components.get(section, {}):
            assert f"#/components/{section}/{name}" in used, f"{section} {name}"
    assert "PaginationMetadata" not in components["schemas"]
    assert "PAGINATION" not in components.get("headers", {})


def test_the_server_is_the_origin_the_document_is_served_from(api):
    """`servers: [{url: "/"}]`: a client resolving the document's paths against it (as
    generators and linters do) reaches the operations here."""
    document = api.get("/api/openapi.json").get_json()
    [server] = document["servers"]
    assert server["url"] == "/"
    base = urljoin("http://localhost/api/openapi.json", server["url"]).rstrip("/")
    status = base + "/api/system/status"
    assert status == "http://localhost/api/system/status"
    assert api.get(urlsplit(status).path).status_code == 200
