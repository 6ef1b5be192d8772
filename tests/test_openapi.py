"""The OpenAPI document is valid 3.1, and every route is documented."""

from __future__ import annotations

import re

from openapi_spec_validator import validate

from app.api.base import camelcase

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
            ref = operation["responses"]["500"]["$ref"].rsplit("/", 1)[-1]
            assert problem in responses[ref]["content"]


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
