"""The authorization matrix (matrix.py): every operation x caller kind x object state,
each cell one request against a world of real objects (world.py), on both databases.

Every answer must also be a status the operation documents, and every refusal problem+json
with a registered `code`.
A route of the app that is neither in the matrix nor on the allow-list below fails."""

from __future__ import annotations

import re
from typing import Any

import pytest

from app.api.base import camelcase
from tests.authz.matrix import MATRIX
from tests.authz.requests import CALLS
from tests.authz.run import observe
from tests.authz.world import CALLERS, STATE_KINDS
from tests.conftest import unregistered_code
from tests.hostile.conftest import GENEROUS_LIMITS, document

PROBLEM = "application/problem+json"

# Routes that need no row, and why.
NO_MATRIX = {
    "GET /api/openapi.json": "the API document, the same for everyone",
    "GET /api/docs": "the documentation page, the same for everyone",
    "GET /api/docs/assets/{filename}": "static Swagger UI assets",
    "GET /api/account/export/schemas/{name}": "the export files' JSON Schemas, for everyone",
    "GET /healthz": "liveness probe, no data",
    "GET /readyz": "readiness probe, no data",
    "GET /metrics": "operator metrics, token or METRICS_BIND: tests/platform/test_metrics.py",
    "GET /static/{filename}": "Flask's static files (none are served)",
    "GET /maps/tiles/{z}/{x}/{y}.png": "public map tiles",
    "GET /trackable/{code}": "the scan entry page: redirects by code, the same for everyone",
    "POST /trackable": "the typed-code entry form: redirects by code, the same for everyone",
    "GET /Images/{variant}/{name}.jpg": (
        "image files by unguessable name; who may list an image is the images API's rows"
    ),
    "GET /static/pages/{filename}": "the website pages' CSS and script, the same for everyone",
    "GET /static/leaflet/{version}/{filename}": "Leaflet's files for the pages' map, for everyone",
    # The website pages call the same trackables policies as the API rows above; their
    # permission cases (unknown, invisible, no session, each form refusal) are HTML answers
    # tested in tests/web/.
    "GET /{lang}/trackables/{publicCode}": "website page: tests/web/test_public_page.py",
    "GET /{lang}/trackables/active/{trackableId}": "website page: tests/web/test_active_page.py",
    "POST /{lang}/trackables/active/{trackableId}/activate": "website form: tests/web/",
    "POST /{lang}/trackables/active/{trackableId}/find": "website form: tests/web/",
    "POST /{lang}/trackables/active/{trackableId}/end": "website form: tests/web/",
    "GET /{lang}/trackables/{publicCode}/feed.atom": (
        "Atom feed, the anonymous view for everyone: tests/web/test_feeds.py"
    ),
    "GET /{lang}/trackables/groups/{groupId}/feed.atom": (
        "Atom feed, the anonymous view for everyone: tests/web/test_feeds.py"
    ),
    "GET /": "redirects to the home page by Accept-Language, the same for everyone",
    "GET /{lang}/": "the home page with the code box, the same for everyone",
    "GET /trackable": "the code box alone, the same for everyone",
    "GET /{lang}/sign-in": "the sign-in form, the same for everyone",
    "GET /{lang}/not-found": "the 404 page as such (another language's 404 links it), no data",
    "POST /{lang}/sign-in": "website sign-in, as the identity area decides: tests/web/",
    "POST /{lang}/sign-out": "ends this browser's page session (tests/web/test_sign_in.py)",
    "GET /{lang}/confirm-email": (
        "the mailed confirmation link's page: the link is the credential, as on the API's "
        "confirmEmail (tests/web/test_confirm_email_page.py)"
    ),
    "GET /{lang}/account/export/{exportId}": (
        "a data export's page, behind the website sign-in, its owner's alone "
        "(tests/web/test_account_export_page.py)"
    ),
    "GET /{lang}/account/export/{exportId}/download": (
        "a data export's file on the website, its signed-in owner's alone "
        "(tests/web/test_account_export_page.py)"
    ),
    "GET /{lang}/account/notifications": (
        "the notification settings page, behind the website sign-in: this account's own "
        "settings and watches (tests/web/test_mail_settings_page.py)"
    ),
    "POST /{lang}/account/notifications": (
        "changes this account's mail settings, as the API's PUT "
        "(tests/web/test_mail_settings_page.py)"
    ),
    "POST /{lang}/account/notifications/stop-watching": (
        "ends one of this account's watches; another's area watch is the 404 page "
        "(tests/web/test_mail_settings_page.py)"
    ),
    "GET /{lang}/account/notifications/unsubscribe/{token}": (
        "the mailed unsubscribe link's page, changes nothing (tests/web/test_unsubscribe.py)"
    ),
    "POST /{lang}/account/notifications/unsubscribe/{token}": (
        "one-click unsubscribe: the signed link is the credential, its account's mail only "
        "(tests/web/test_unsubscribe.py)"
    ),
    "GET /{lang}/account": (
        "the account page, behind the website sign-in: this account's own sessions "
        "(tests/web/test_account_page.py)"
    ),
    "POST /{lang}/account/sessions/{sessionId}/sign-out": (
        "ends one of this account's website sessions; another's is the 404 page "
        "(tests/web/test_account_page.py)"
    ),
    "POST /{lang}/account/apps/{familyId}/sign-out": (
        "ends one of this account's app sign-ins; another's is the 404 page "
        "(tests/web/test_account_page.py)"
    ),
    "POST /{lang}/account/sign-out-everywhere": (
        "ends every session of this account (tests/web/test_account_page.py)"
    ),
    "GET /{lang}/trackables": (
        "the public list: public items only, by the same policy filter as the API's list "
        "(tests/web/test_entry_pages.py)"
    ),
    "GET /beta/android": "the Android beta page, the same for everyone",
    "GET /{lang}/beta/android": "the Android beta page, the same for everyone",
    "GET /help/foreign-codes": "the lookup's help page, the same for everyone",
    "GET /{lang}/help/foreign-codes": "the lookup's help page, the same for everyone",
    "GET /help/external-links": "the refused links' help page, the same for everyone",
    "GET /{lang}/help/external-links": "the refused links' help page, the same for everyone",
}


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    return dict(GENEROUS_LIMITS)  # the same app as the bad-input corpus


def documented_statuses(op: str) -> set[int]:
    method, path = op.split(" ", 1)
    responses = document()["paths"][path][method.lower()]["responses"]
    return {int(status) for status in responses}


def areas() -> dict[str, list[str]]:
    """The matrix's operations by area (the document's tag): one test per area, since
    emptying the database after a test costs more than a world."""
    by_area: dict[str, list[str]] = {}
    for op in MATRIX:
        method, path = op.split(" ", 1)
        tags = document()["paths"][path][method.lower()].get("tags") or ["untagged"]
        by_area.setdefault(tags[0], []).append(op)
    return by_area


@pytest.mark.parametrize("area", list(areas()))
def test_each_caller_gets_the_answer_of_the_matrix(app, area):
    failures = []
    for op in areas()[area]:
        for state, row in MATRIX[op].items():
            expected = dict(zip(CALLERS, row.split(), strict=True))
            for caller, (outcome, response) in observe(app, op, state).items():
                where = f"{op} [{state}] {caller}"
                if outcome != expected[caller]:
                    body = response.get_data(as_text=True)[:160]
                    failures.append(f"  {where}: {outcome}, matrix says {expected[caller]}: {body}")
                if response.status_code not in documented_statuses(op):
                    failures.append(f"  {where}: {response.status_code} is not documented")
                if response.status_code >= 400 and response.mimetype != PROBLEM:
                    failures.append(f"  {where}: {response.status_code} as {response.mimetype}")
                elif response.status_code >= 400 and unregistered_code(response):
                    failures.append(f"  {where}: {unregistered_code(response)}")
    assert not failures, "\n".join(failures)


def app_routes(app: Any) -> set[str]:
    routes = set()
    for rule in app.url_map.iter_rules():
        path = re.sub(
            r"<(?:\w+(?:\([^)]*\))?:)?(\w+)>", lambda m: "{" + m.group(1) + "}", rule.rule
        )
        if not path.startswith(("/api/docs", "/static/", "/maps/", "/Images/", "/trackable")):
            path = re.sub(r"\{(\w+)\}", lambda m: "{" + camelcase(m.group(1)) + "}", path)
        routes |= {f"{method} {path}" for method in rule.methods - {"HEAD", "OPTIONS"}}
    return routes


def test_every_route_of_the_app_is_in_the_matrix_or_allowed_without(app):
    missing = app_routes(app) - set(MATRIX) - set(NO_MATRIX)
    assert not missing, f"routes without matrix rows: {sorted(missing)}"


def test_every_operation_of_the_document_is_in_the_matrix(app):
    operations = {
        f"{method.upper()} {path}"
        for path, item in document()["paths"].items()
        for method in item
        if method in {"get", "post", "put", "patch", "delete"}
    }
    assert not operations - set(MATRIX) - set(NO_MATRIX)
    stale = set(MATRIX) - operations
    assert not stale, f"matrix rows of no operation: {sorted(stale)}"


def test_every_row_has_its_request_and_the_states_of_its_kind():
    assert set(MATRIX) == set(CALLS)
    for op, rows in MATRIX.items():
        assert tuple(rows) == STATE_KINDS[CALLS[op].state], op
        for row in rows.values():
            assert len(row.split()) == len(CALLERS), op


def test_the_matrix_has_a_cell_for_every_caller_kind_and_state():
    cells = sum(len(CALLERS) * len(rows) for rows in MATRIX.values())
    assert cells >= 8 * len(MATRIX)
