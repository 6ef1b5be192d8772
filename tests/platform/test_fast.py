"""The shortcuts on library internals (app.platform.fast): one switch turns them all off,
a start on a library version they were not tested with is refused, and the versions they
were tested with are the lock file's. Each shortcut's own tests hold it to the answer of
the long way; CI runs the routes' tests again with FAST_PATHS=off."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask_jwt_extended import JWTManager

from app.extensions import limiter
from app.platform import fast
from tests.conftest import make_test_app, needs_fast_path
from tests.factories import make_user

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def restore_switch(app) -> Iterator[None]:
    """The switch is per process: put back the setting the test run started with."""
    yield
    fast.configure(app.config)


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        (None, set(fast.SHORTCUTS)),
        ("all", set(fast.SHORTCUTS)),
        ("off", set()),
        ("none", set()),
        ("jwt_decode_cache, limiter_hook", {"jwt_decode_cache", "limiter_hook"}),
    ],
)
def test_the_setting_names_the_shortcuts_on(setting, expected):
    assert fast.parse(setting) == expected


def test_an_unknown_shortcut_is_refused_by_name():
    with pytest.raises(ValueError, match="no_such_thing"):
        fast.parse("no_such_thing")


def test_a_start_on_an_untested_library_version_is_refused_naming_it():
    versions = {**fast.TESTED, "flask-limiter": "9.9.9"}
    with pytest.raises(fast.UntestedLibrary) as error:
        fast.check_versions(frozenset(fast.SHORTCUTS), installed=versions.__getitem__)
    message = str(error.value)
    assert "limiter_hook relies on the internals of flask-limiter 4.1.1, and 9.9.9" in message
    assert "FAST_PATHS=off" in message
    fast.check_versions(frozenset({"jwt_decode_cache"}), installed=versions.__getitem__)  # ok
    fast.check_versions(frozenset(), installed=versions.__getitem__)  # all off: no check


def test_the_tested_versions_are_the_runtime_lock_pins():
    text = (ROOT / "requirements" / "runtime.txt").read_text()
    pins = {name.lower(): version for name, version in re.findall(r"^([\w.-]+)==(\S+)", text, re.M)}
    assert {name: pins[name] for name in fast.TESTED} == fast.TESTED


def test_this_environment_runs_the_tested_versions():
    fast.check_versions(frozenset(fast.SHORTCUTS))


def test_off_leaves_the_limiter_check(tmp_path, database_url, restore_switch):
    app = make_test_app(database_url, tmp_path, FAST_PATHS="off")
    assert limiter._check_request_limit in app.before_request_funcs.get(None, [])


def test_off_verifies_the_token_on_every_request(
    tmp_path, database_url, restore_switch, monkeypatch
):
    app = make_test_app(database_url, tmp_path, FAST_PATHS="off")
    calls = []
    verify = JWTManager._decode_jwt_from_config

    def counting(self, *args, **kwargs):
        calls.append(1)
        return verify(self, *args, **kwargs)

    monkeypatch.setattr(JWTManager, "_decode_jwt_from_config", counting)
    with app.app_context():
        from app.auth import issue_access_token

        token = issue_access_token(make_user("ada"))
        client = app.test_client()
        for _ in range(3):
            response = client.get(
                "/api/auth/manage/info", headers={"Authorization": f"Bearer {token}"}
            )
            assert response.status_code == 200
    assert len(calls) == 3


@needs_fast_path("limiter_hook")
def test_a_blueprint_limit_keeps_the_limiter_check(
    tmp_path, database_url, restore_switch, monkeypatch
):
    app = make_test_app(database_url, tmp_path, FAST_PATHS="off")  # the check stays
    fast.configure({"FAST_PATHS": "limiter_hook"})
    monkeypatch.setattr(
        limiter.limit_manager, "blueprint_limits", lambda app, name: ["10 per hour"]
    )
    assert not fast.drop_limiter_hook(app, limiter)
    assert limiter._check_request_limit in app.before_request_funcs.get(None, [])
    monkeypatch.undo()
    assert fast.drop_limiter_hook(app, limiter)
    assert limiter._check_request_limit not in app.before_request_funcs.get(None, [])


# The platform's statements below the ORM; an area reaches them only from its queries.py.
DRIVER_NAMES = frozenset(
    {"execute_by_driver", "insert_by_driver", "cursor_alone", "PreparedStatement", "prepared"}
)
# The token's account read (`get_by_driver`, the `driver_reads` shortcut) is the viewer's,
# not an area's: app/auth.py.
DRIVER_USERS_BEYOND_QUERIES = {"app/auth.py": {"get_by_driver"}}


def driver_names_used(path: Path) -> set[str]:
    """The names of app.platform.database's driver statements a module imports."""
    used = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "app.platform.database"
        ):
            used |= {alias.name for alias in node.names} & (DRIVER_NAMES | {"get_by_driver"})
    return used


def test_areas_run_statements_below_the_orm_only_from_their_queries_module():
    stray = {}
    for path in sorted((ROOT / "app").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("app/platform/") or path.name == "queries.py":
            continue
        used = driver_names_used(path) - DRIVER_USERS_BEYOND_QUERIES.get(relative, set())
        if used:
            stray[relative] = sorted(used)
    assert stray == {}, "move these statements into the area's queries.py"
    queries = sorted(
        path.relative_to(ROOT).as_posix() for path in (ROOT / "app").rglob("queries.py")
    )
    assert queries == [
        "app/services/notes/queries.py",
        "app/services/shared/queries.py",
        "app/services/trackables/queries.py",
    ]
