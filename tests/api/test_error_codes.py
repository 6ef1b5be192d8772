"""Every problem response carries a machine `code` from one registry (app.error_codes),
and the OpenAPI document says so: the document walked operation by operation, each kind
of error provoked through HTTP, the contract's trackable codes, and the specific codes a
client acts on (docs/contract/wire.md, Error codes)."""

from __future__ import annotations

import ast
import io
import re
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from flask_jwt_extended import create_access_token
from sqlalchemy import select

from app.error_codes import ERROR_CODES, HTTP_STATUS_CODES, Code
from app.extensions import db
from app.models.enums import CommentPolicy, NoteVisibility
from app.models.team import JoinPolicy, MembershipStatus, TeamMembership
from tests.conftest import assert_problem, make_test_app
from tests.factories import make_invite_link, make_membership, make_note, make_team, make_user

PROBLEM = "application/problem+json"
METHODS = {"get", "post", "put", "patch", "delete"}
APP = Path(__file__).resolve().parents[2] / "app"

# The contract's trackable codes and statuses (location-notes-api.md, Errors); the registry
# may add statuses to the fallback (decisions: a team one cannot see stays 404).
CONTRACT_TRACKABLE_CODES = {
    "trackable_not_found": {404},
    "trackable_comment_not_found": {404},
    "trackable_journey_stop_not_found": {404},
    "trackable_already_activated": {400},
    "trackable_activation_required": {400},
    "trackable_access_code_required": {403},
    "trackable_access_code_invalid": {403},
    "trackable_group_detach_forbidden": {403},
    "trackable_group_attach_forbidden": {403},
    "trackable_comment_edit_forbidden": {403},
    "trackable_comment_delete_forbidden": {403},
    "trackable_journey_stop_delete_forbidden": {403},
    "trackable_journey_stop_convert_forbidden": {403},
    "trackable_journey_stop_convert_rejected": {400},
    "trackable_request_rejected": {400, 403},
}


# --- the document ------------------------------------------------------------------------


def resolve(document: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        section, name = node["$ref"].split("/")[-2:]
        node = document["components"][section][name]
    return node


def required_fields(document: dict[str, Any], schema: dict[str, Any]) -> set[str]:
    schema = resolve(document, schema)
    required = set(schema.get("required", []))
    for part in schema.get("allOf", []):
        required |= required_fields(document, part)
    return required


def code_property(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any] | None:
    schema = resolve(document, schema)
    found = schema.get("properties", {}).get("code")
    for part in schema.get("allOf", []):
        found = found or code_property(document, part)
    return found


def test_every_documented_problem_requires_a_code(api):
    document = api.get("/api/openapi.json").get_json()
    checked, failures = 0, []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            for status, response in operation["responses"].items():
                if not status.isdigit() or int(status) < 400:
                    continue
                where = f"{method.upper()} {path} {status}"
                content = resolve(document, response).get("content", {})
                if PROBLEM not in content:
                    failures.append(f"{where}: not problem+json ({sorted(content)})")
                    continue
                schema = content[PROBLEM]["schema"]
                code = code_property(document, schema)
                if "code" not in required_fields(document, schema):
                    failures.append(f"{where}: `code` is not required")
                elif code is None or code.get("type") != "string":
                    failures.append(f"{where}: `code` is not a string: {code}")
                elif "x-error-codes" not in code.get("description", ""):
                    failures.append(f"{where}: `code` does not point to the registry")
                checked += 1
    assert not failures, "\n".join(failures)
    assert checked > 500


def test_every_problem_example_in_the_document_has_a_registered_code(api):
    document = api.get("/api/openapi.json").get_json()
    examples: list[tuple[str, dict[str, Any]]] = []

    def collect(node: Any, where: str) -> None:
        if isinstance(node, dict):
            if {"type", "title", "status", "detail"} <= node.keys() and isinstance(
                node["status"], int
            ):
                examples.append((where, node))
            for key, value in node.items():
                collect(value, f"{where}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                collect(value, f"{where}/{index}")

    collect(document["paths"], "")
    assert len(examples) >= 5
    for where, example in examples:
        assert example.get("code") in ERROR_CODES, where
        assert example["status"] in ERROR_CODES[example["code"]].statuses, where


def test_the_document_publishes_the_registry(api):
    published = api.get("/api/openapi.json").get_json()["x-error-codes"]
    assert list(published) == list(ERROR_CODES)
    for code, entry in ERROR_CODES.items():
        assert published[code] == {"statuses": list(entry.statuses), "description": entry.meaning}


def test_registered_codes_are_snake_case_with_a_status_and_a_meaning():
    for code, entry in ERROR_CODES.items():
        assert entry.code == code
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", code), code
        assert entry.statuses, code
        assert all(400 <= status < 600 for status in entry.statuses), code
        assert entry.meaning.endswith("."), code
        assert "\n" not in entry.meaning, code


# --- the source: no code outside the registry --------------------------------------------


def _module_constants(tree: ast.Module) -> dict[str, ast.expr]:
    constants: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                constants[target.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            constants[node.target.id] = node.value
    return constants


def _strings(node: ast.expr | None, constants: dict[str, ast.expr], depth: int = 0) -> set[str]:
    """The string values an expression in a code position can have: a literal, a Code, either
    branch of a conditional, a module constant, or the values of a constant dict that is
    subscripted. Other expressions (parameters, attributes) name no code of their own."""
    if node is None or depth > 4:
        return set()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    named = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
    if named and node.value.id == "Code":  # type: ignore[attr-defined]
        member = Code.__members__.get(node.attr)  # type: ignore[attr-defined]
        return {member.value if member is not None else f"Code.{node.attr}"}  # type: ignore[attr-defined]
    if isinstance(node, ast.IfExp):
        return _strings(node.body, constants, depth + 1) | _strings(
            node.orelse, constants, depth + 1
        )
    if isinstance(node, ast.Name) and node.id in constants:
        return _strings(constants[node.id], constants, depth + 1)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        table = constants.get(node.value.id)
        if isinstance(table, ast.Dict):
            return {text for value in table.values for text in _strings(value, constants, depth)}
    return set()


def codes_named_in_the_source() -> dict[str, set[str]]:
    """code -> files naming it: `code=` arguments, `code = ...` in class bodies and
    TrackableError's first argument, everywhere in app/ but the registry itself."""
    trees = {
        path: ast.parse(path.read_text(), str(path))
        for path in APP.rglob("*.py")
        if path.name != "error_codes.py"
    }
    everywhere: dict[str, ast.expr] = {}
    for tree in trees.values():  # constants imported from another module resolve too
        everywhere.update(_module_constants(tree))
    named: dict[str, set[str]] = {}
    for path, tree in trees.items():
        constants = {**everywhere, **_module_constants(tree)}
        places: list[ast.expr | None] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                places += [keyword.value for keyword in node.keywords if keyword.arg == "code"]
                function = node.func
                name = function.attr if isinstance(function, ast.Attribute) else None
                name = function.id if isinstance(function, ast.Name) else name
                if name == "TrackableError" and node.args:
                    places.append(node.args[0])
            elif isinstance(node, ast.ClassDef):
                for statement in node.body:
                    if isinstance(statement, ast.Assign) and any(
                        isinstance(target, ast.Name) and target.id == "code"
                        for target in statement.targets
                    ):
                        places.append(statement.value)
        for place in places:
            for code in _strings(place, constants):
                named.setdefault(code, set()).add(str(path.relative_to(APP.parent)))
    return named


def test_every_code_named_in_the_source_is_registered():
    named = codes_named_in_the_source()
    assert len(named) > 40  # the scan finds the raise sites
    unknown = {code: sorted(files) for code, files in named.items() if code not in ERROR_CODES}
    assert not unknown, unknown


def codes_the_proxy_answers() -> set[str]:
    """The `code`s of the problem+json bodies the nginx site answers itself."""
    site = (APP.parent / "deploy" / "nginx" / "app.conf").read_text()
    return set(re.findall(r'"code":"([a-z_]+)"', site))


def test_every_registered_code_can_be_answered():
    reachable = set(codes_named_in_the_source()) | set(HTTP_STATUS_CODES.values()) | {"http_error"}
    reachable |= codes_the_proxy_answers()
    assert set(ERROR_CODES) - reachable == set()


def test_an_unregistered_code_is_refused_where_it_is_named():
    from app.error_codes import UnknownErrorCode
    from app.errors import ApiError, NotFound, problem

    with pytest.raises(UnknownErrorCode):
        NotFound("Nothing.", code="no_such_code_anywhere")
    with pytest.raises(UnknownErrorCode):
        ApiError("Nothing.", code="Not Snake Case")

    class Misnamed(ApiError):
        code = "misnamed_default"

    with pytest.raises(UnknownErrorCode):
        Misnamed("Nothing.")
    with pytest.raises(UnknownErrorCode):
        problem(400, code="no_such_code_anywhere")


# --- each kind of error, through HTTP ----------------------------------------------------


def test_the_request_itself(api):
    user = make_user()
    signed_in = api.as_user(user)
    assert_problem(api.get("/api/does-not-exist"), 404, code="route_not_found")
    assert_problem(api.get("/api/trackables/not-a-guid"), 404, code="route_not_found")
    assert_problem(api.delete("/api/system/status"), 405, code="method_not_allowed")
    assert_problem(
        signed_in.post("/api/notes/mine", data="title=x", content_type="text/plain"),
        415,
        code="unsupported_media_type",
    )
    assert_problem(
        signed_in.post("/api/notes/mine", data='{"title": ', content_type="application/json"),
        400,
        code="invalid_json",
    )
    assert_problem(
        signed_in.post("/api/notes/mine", data='{"title": NaN}', content_type="application/json"),
        400,
        code="invalid_json",
    )
    body = assert_problem(
        signed_in.post("/api/notes/mine", json={"title": 5}), 400, code="validation_failed"
    )
    assert "title" in body["errors"]
    assert_problem(
        api.get("/api/notes/public/nearby", query_string={"latitude": "north"}),
        400,
        code="validation_failed",
    )
    assert_problem(
        api.post("/api/sync/pull", json={}, headers={"X-Android-Version-Code": "x"}),
        400,
        code="validation_failed",
    )


class TestLimits:
    @pytest.fixture
    def app_overrides(self):
        return {
            "MAX_CONTENT_LENGTH": 10_000,
            "RATE_LIMIT_REGISTER": "2 per minute",
            "ANDROID_MIN_VERSION_CODE": "50",
        }

    def test_a_body_over_the_limit(self, api):
        response = api.as_user(make_user()).post(
            "/api/notes/mine", json={"title": "x", "description": "y" * 20_000}
        )
        assert_problem(response, 413, code="payload_too_large")

    def test_a_rate_limit(self, api):
        for _ in range(2):
            assert_problem(api.post("/api/auth/register", json={}), 400, code="validation_failed")
        response = api.post("/api/auth/register", json={})
        assert_problem(response, 429, code="rate_limited")
        assert int(response.headers["Retry-After"]) > 0

    def test_an_old_mobile_build(self, api):
        response = api.as_user(make_user()).post(
            "/api/sync/pull", json={}, headers={"X-Android-Version-Code": "7"}
        )
        body = assert_problem(response, 400, code="mobile_version_unsupported")
        assert body["minimumVersionCode"] == "50"


def test_the_bearer_token(app, api):
    user = make_user()
    private = "/api/auth/manage/info"
    assert_problem(api.get(private), 401, code="authentication_required")
    for garbage in ("not-a-jwt", "a.b.c"):
        assert_problem(api.with_token(garbage).get(private), 401, code="invalid_token")
    # An optional route still refuses a broken token.
    assert_problem(api.with_token("not-a-jwt").get("/api/system/status"), 401, code="invalid_token")
    expired = create_access_token(
        identity=str(user.id),
        additional_claims={"stamp": user.security_stamp},
        expires_delta=timedelta(seconds=-10),
    )
    response = api.with_token(expired).get(private)
    assert_problem(response, 401, code="token_expired")
    assert response.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'
    revoked = create_access_token(identity=str(user.id), additional_claims={"stamp": "old"})
    assert_problem(api.with_token(revoked).get(private), 401, code="token_revoked")
    gone = make_user()
    token = create_access_token(identity=str(gone.id), additional_claims={"stamp": "s"})
    db.session.delete(gone)
    db.session.commit()
    assert_problem(api.with_token(token).get(private), 401, code="account_deleted")


def image_part() -> tuple[io.BytesIO, str]:
    return io.BytesIO(b"\xff\xd8\xff not really a JPEG"), "photo.jpg"


def test_the_not_found_of_each_area(api):
    missing = uuid.uuid4()
    user, staff = make_user(), make_user(is_superadmin=True)
    team = make_team(user)
    signed_in = api.as_user(user)
    cases = [
        (api.get(f"/api/public/notes/{missing}"), "note_not_found"),
        (signed_in.delete(f"/api/notes/mine/{missing}"), "note_not_found"),
        (signed_in.delete(f"/api/categories/mine/{missing}"), "category_not_found"),
        (signed_in.put(f"/api/teams/{missing}/settings", json={}), "team_not_found"),
        (
            signed_in.post(f"/api/teams/{team.id}/memberships/{missing}/approve"),
            "membership_not_found",
        ),
        (
            signed_in.post(f"/api/teams/invite-links/{team.slug}/{'a' * 26}/join"),
            "invite_link_not_found",
        ),
        (api.get(f"/api/trackables/{missing}"), "trackable_not_found"),
        (api.get(f"/api/images/{missing}/small"), "image_not_found"),
        (api.get(f"/api/images/{missing}/huge"), "image_variant_not_found"),
        (
            signed_in.post(f"/api/images/notes/{missing}", data={"file": image_part()}),
            "note_not_found",
        ),
        (api.as_user(staff).get(f"/api/compliance/reports/{missing}"), "report_not_found"),
        (
            api.post("/api/compliance/errors", json={"ticketNumber": "ERR-2345678A"}),
            "error_ticket_not_found",
        ),
        (
            api.get(
                "/api/public/profiles/nobody_here/notes/nearby",
                query_string={"latitude": 1, "longitude": 1},
            ),
            "profile_not_found",
        ),
    ]
    for response, code in cases:
        assert_problem(response, 404, code=code)


def test_what_a_caller_may_not_do(api):
    admin, member, other, outsider = make_user(), make_user(), make_user(), make_user()
    team = make_team(admin, members=(member, other))
    others = make_membership(make_team(admin), other)
    team_note = make_note(admin, team_id=team.id, visibility=NoteVisibility.PUBLIC)
    closed = make_note(
        admin, visibility=NoteVisibility.PUBLIC, comment_policy=CommentPolicy.TEAM_MEMBERS
    )
    invite_only = make_team(admin, join_policy=JoinPolicy.INVITE_ONLY)
    invited = make_membership(team, make_user(), status=MembershipStatus.INVITED)
    cases = [
        (
            api.as_user(member).put(f"/api/teams/{team.id}/settings", json={}),
            "team_admin_required",
        ),
        (api.as_user(outsider).get(f"/api/teams/{team.id}/notes"), "team_membership_required"),
        (
            api.as_user(member).delete(f"/api/teams/{team.id}/notes/{team_note.id}"),
            "note_change_forbidden",
        ),
        (
            api.as_user(outsider).post(
                f"/api/public/notes/{closed.id}/comments", json={"body": "Hello"}
            ),
            "note_comment_forbidden",
        ),
        (
            api.as_user(outsider).post(f"/api/teams/{invite_only.id}/memberships/request"),
            "team_invite_only",
        ),
        (
            api.as_user(admin).post(f"/api/teams/{team.id}/memberships/{invited.id}/accept"),
            "membership_action_forbidden",
        ),
        (
            api.as_user(other).post(
                f"/api/teams/{others.team_id}/memberships/{others.id}/promote-admin"
            ),
            "team_admin_required",
        ),
        (api.as_user(member).get("/api/compliance/reports"), "superadmin_required"),
        (
            api.as_user(member).post(
                f"/api/images/notes/{team_note.id}", data={"file": image_part()}
            ),
            "image_change_forbidden",
        ),
    ]
    for response, code in cases:
        assert_problem(response, 403, code=code)


def test_conflicts_of_state(api):
    admin, member = make_user(), make_user()
    team = make_team(admin, members=(member,))
    response = api.as_user(member).post(f"/api/teams/{team.id}/memberships/request")
    assert_problem(response, 409, code="membership_state_conflict")
    own = db.session.scalar(
        select(TeamMembership.id).where(
            TeamMembership.team_id == team.id, TeamMembership.user_id == admin.id
        )
    )
    response = api.as_user(admin).delete(f"/api/teams/{team.id}/memberships/{own}")
    assert_problem(response, 409, code="team_last_admin")


def test_an_unexpected_failure(app, api, monkeypatch):
    endpoint = next(
        rule.endpoint for rule in app.url_map.iter_rules() if rule.rule == "/api/system/status"
    )

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("an unexpected failure")

    monkeypatch.setitem(app.view_functions, endpoint, fail)
    body = assert_problem(api.get("/api/system/status"), 500, code="internal_error")
    assert body["ticketNumber"].startswith("ERR-")


def test_a_deadlock_run_twice(api, monkeypatch):
    from tests.platform.test_database import deadlocking

    deadlocking(monkeypatch, times=2)
    response = api.as_user(make_user()).post("/api/notes/mine", json={"title": "Twice"})
    assert_problem(response, 503, code="database_deadlock")


def test_a_database_out_of_reach(tmp_path):
    from tests.hostile.test_outage_statuses import refused_database_url

    app = make_test_app(refused_database_url(), tmp_path, DATABASE_CONNECT_TIMEOUT_SECONDS=1)
    client = app.test_client()
    try:
        for url in ("/api/notes/public/nearby?latitude=1&longitude=1", "/readyz"):
            response = client.get(url)
            assert_problem(response, 503, code="database_unavailable")
            assert response.headers["Retry-After"]
    finally:
        with app.app_context():
            db.engine.dispose()


# --- the contract's trackable codes -------------------------------------------------------


def test_the_contract_trackable_codes_are_unchanged(api):
    from app.errors import TRACKABLE_ERROR_STATUS

    assert set(TRACKABLE_ERROR_STATUS) == set(CONTRACT_TRACKABLE_CODES)
    for code, statuses in CONTRACT_TRACKABLE_CODES.items():
        assert TRACKABLE_ERROR_STATUS[code] in statuses, code
        assert statuses <= set(ERROR_CODES[code].statuses), code
    published = api.get("/api/openapi.json").get_json()["x-error-codes"]
    assert set(CONTRACT_TRACKABLE_CODES) <= set(published)
    signed_in = api.as_user(make_user())
    assert_problem(
        signed_in.post(f"/api/trackables/{uuid.uuid4()}/activate", json={}),
        404,
        code="trackable_not_found",
    )


# --- the specific codes a client acts on --------------------------------------------------

LOGIN = "/api/auth/login?useCookies=false&useSessionCookies=false"


def sign_in(api: Any, email: str, password: str) -> Any:
    return api.post(LOGIN, json={"email": email, "password": password})


def test_a_wrong_password_is_invalid_credentials_and_the_fifth_locks_out(api):
    user = make_user()
    for _ in range(4):
        body = assert_problem(sign_in(api, user.email, "wrong-password-1"), 401)
        assert (body["code"], body["detail"]) == ("invalid_credentials", "Failed")
    body = assert_problem(sign_in(api, user.email, "wrong-password-1"), 401)
    assert (body["code"], body["detail"]) == ("account_locked_out", "LockedOut")


def test_a_wrong_refresh_token_and_a_taken_email(api):
    response = api.post("/api/auth/refresh", json={"refreshToken": "made-up"})
    assert_problem(response, 401, code="invalid_refresh_token")
    taken = make_user()
    response = api.post(
        "/api/auth/register",
        json={"email": taken.email, "userName": "someone_new", "password": "x"},
    )
    body = assert_problem(response, 400, code="email_taken")
    assert {"email", "password"} <= set(body["errors"])  # the other fields are still named


def test_a_used_invite_link_and_an_unknown_confirmation_code(api):
    admin = make_user()
    team = make_team(admin)
    link = make_invite_link(team, admin, is_single_use=True)
    url = f"/api/teams/invite-links/{team.slug}/{link.code}/join"
    assert api.as_user(make_user()).post(url).status_code == 200
    assert_problem(api.as_user(make_user()).post(url), 404, code="invite_link_not_found")
    response = api.get(
        "/api/auth/confirmEmail", query_string={"userId": str(admin.id), "code": "nothing"}
    )
    assert_problem(response, 400, code="invalid_email_code")


def test_no_error_class_names_a_title_of_its_own(app):
    """A problem's title is its status's phrase (app.errors.status_title); an error class
    says what went wrong in its detail and code, never in a title that nothing reads."""
    from app.errors import ApiError

    def subclasses(cls: type) -> list[type]:
        return [cls, *(one for sub in cls.__subclasses__() for one in subclasses(sub))]

    found = subclasses(ApiError)
    assert len(found) > 10
    assert [cls.__qualname__ for cls in found if "title" in vars(cls)] == []
