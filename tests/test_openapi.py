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
