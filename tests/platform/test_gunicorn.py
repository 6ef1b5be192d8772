"""The service under gunicorn with its own settings: what gunicorn answers itself (a
request line or headers over its limits, a request it cannot parse) is problem+json like
every other error, and echoes nothing of the request."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.serving import free_port, gunicorn_serving

ROOT = Path(__file__).resolve().parents[2]
SECRET_LOOKING = "LNK7M2Q9XT"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    database = tmp_path_factory.mktemp("gunicorn") / "app.db"
    with gunicorn_serving({"APP_ENV": "testing", "DATABASE_URL": f"sqlite:///{database}"}) as port:
        yield port


def exchange(port: int, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(raw)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split()[1]), headers, body


def assert_problem(
    answer: tuple[int, dict[str, str], bytes], status: int, code: str | None = None
) -> dict:
    """Problem+json with this status, and its registered `code` (exactly `code` if given)."""
    from app.error_codes import ERROR_CODES

    answered, headers, body = answer
    assert answered == status, body
    assert headers["content-type"] == "application/problem+json"
    assert int(headers["content-length"]) == len(body)
    problem = json.loads(body)
    assert problem["status"] == status
    assert problem["title"]
    assert problem["detail"]
    assert status in ERROR_CODES[problem["code"]].statuses, problem
    assert code is None or problem["code"] == code, problem
    assert SECRET_LOOKING not in body.decode()
    return problem


@pytest.mark.processes
def test_a_request_line_over_the_limit_is_414_problem_json(server):
    path = f"/trackable/{SECRET_LOOKING}?pad=" + "a" * 5000
    answer = exchange(server, f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert_problem(answer, 414, "uri_too_long")


@pytest.mark.processes
def test_a_header_over_the_limit_is_431_problem_json(server):
    raw = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n"
    assert_problem(exchange(server, raw), 431, "request_headers_too_large")


@pytest.mark.processes
def test_too_many_headers_are_431_problem_json(server):
    headers = "".join(f"X-H{number}: {number}\r\n" for number in range(120))
    raw = f"GET /healthz HTTP/1.1\r\nHost: x\r\n{headers}\r\n".encode()
    assert_problem(exchange(server, raw), 431, "request_headers_too_large")


@pytest.mark.processes
def test_a_request_gunicorn_cannot_parse_is_400_problem_json_without_echo(server):
    raw = f"GET /trackable/{SECRET_LOOKING} HTTP/9.9\r\nHost: x\r\n\r\n".encode()
    assert_problem(exchange(server, raw), 400, "bad_request")


@pytest.mark.processes
def test_ordinary_requests_still_reach_the_app(server):
    code, headers, _body = exchange(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert code == 200
    assert headers["content-type"].startswith("application/json")
    missing = exchange(server, b"GET /api/no-such-route HTTP/1.1\r\nHost: x\r\n\r\n")
    assert_problem(missing, 404, "route_not_found")


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        (None, "-"),
        ("-", "-"),
        ("", "-"),
        ("off", None),
        ("OFF", None),
        ("logs/access.log", "logs/access.log"),
    ],
)
def test_the_access_log_is_a_setting(monkeypatch, setting, expected):
    """ACCESS_LOG: stdout by default, a file, or off."""
    import runpy

    if setting is None:
        monkeypatch.delenv("ACCESS_LOG", raising=False)
    else:
        monkeypatch.setenv("ACCESS_LOG", setting)
    settings = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    assert settings["accesslog"] == expected
    assert settings["errorlog"] == "-"


@contextmanager
def gunicorn_logging_to(tmp_path: Path, **settings: str) -> Iterator[tuple[int, Path, Path]]:
    """A gunicorn of its own whose access log (ACCESS_LOG) and stdout (the error log and
    the app's log) are files: (port, access log, stdout), read once it has stopped."""
    access, output = tmp_path / "access.log", tmp_path / "stdout.log"
    environment = {
        "APP_ENV": "testing",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'app.db'}",
        "LOG_LEVEL": "INFO",
        "ACCESS_LOG": str(access),
        **settings,
    }
    with output.open("w") as stdout, gunicorn_serving(environment, output=stdout) as port:
        yield port, access, output


@pytest.mark.processes
def test_an_access_log_file_gets_one_line_per_request(tmp_path):
    """With ACCESS_LOG set to a file, gunicorn writes its request lines there."""
    with gunicorn_logging_to(tmp_path) as (_port, log, _output):
        pass
    assert '"GET /healthz HTTP/1.1" 200' in log.read_text()


# --- what gunicorn answers is in every operation's entry of the document -----------------


def operations_of(port: int) -> list[tuple[str, str, dict]]:
    _code, _headers, body = exchange(port, b"GET /api/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n")
    document = json.loads(body)
    return [
        (method.upper(), path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in {"get", "post", "put", "patch", "delete"}
    ]


def concrete(path: str) -> str:
    """A path of the document with each `{parameter}` filled with a plausible value."""
    return re.sub(r"\{\w+\}", "3f2c8a5e-4b7d-4c1e-9a2f-5d6e7f8a9b0c", path)


@pytest.mark.processes
def test_every_operation_documents_the_request_line_and_header_limits(server):
    """An operation may answer 414 or 431 from the server in front of the app, before any
    route runs: a status an operation can answer and its entry does not list fails here."""
    failures = []
    for method, path, operation in operations_of(server):
        documented = set(operation["responses"])
        long_line = f"{method} {concrete(path)}?pad={'a' * 5000} HTTP/1.1\r\nHost: x\r\n\r\n"
        big_header = f"{method} {concrete(path)} HTTP/1.1\r\nHost: x\r\nX-Big: {'b' * 9000}\r\n\r\n"
        for raw, status in ((long_line, 414), (big_header, 431)):
            answered = assert_problem(exchange(server, raw.encode()), status)["status"]
            if str(answered) not in documented:
                failures.append(f"{method} {path}: {answered} is not documented")
    assert not failures, "\n".join(failures)


@pytest.mark.processes
def test_a_confirmation_code_past_the_request_line_limit_is_a_documented_414(server):
    """The fuzz finding that once failed CI: a very long `code` on the confirmation link."""
    path = "/api/auth/confirmEmail?userId=3f2c8a5e-4b7d-4c1e-9a2f-5d6e7f8a9b0c&code=" + "A" * 6000
    assert_problem(exchange(server, f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()), 414)
    confirm = next(op for _m, p, op in operations_of(server) if p == "/api/auth/confirmEmail")
    assert "414" in confirm["responses"]


def a_trackable_in(database: Path, key: str) -> str:
    """An activated trackable in a new SQLite database: its short secret code."""
    from app.extensions import db
    from app.models import Base
    from tests.conftest import make_test_app
    from tests.factories import codes_of, make_trackable, make_user

    app = make_test_app(f"sqlite:///{database}", database.parent, TRACKABLE_CODE_KEY=key)
    with app.app_context():
        Base.metadata.create_all(db.engine)
        trackable = make_trackable(make_user("gina"))
        db.session.commit()
        secret = codes_of(trackable)[0]
        db.engine.dispose()
    return secret


# The path and query forms the server decodes before routing (also in a Referer).
ENCODED_REQUESTS = [
    "/trackabl%65/{code}",
    "/%74rackable/{code}",
    "/trackable%2F{code}",
    "/trackable%2f{code}",
    "/api/trackables/lookup?%63ode={code}",
    "/api/trackables/lookup?x=1&c%6Fde={code}",
]


@pytest.mark.processes
def test_percent_encoded_codes_unlock_but_never_reach_a_log(tmp_path):
    """Each encoded form reaches its route (the decoded path is what the app sees), and
    neither gunicorn's access line nor its error log nor the app's log carries the code."""
    key = "k" * 48
    code = a_trackable_in(tmp_path / "app.db", key)
    with gunicorn_logging_to(tmp_path, TRACKABLE_CODE_KEY=key) as (port, access, output):
        for form in ENCODED_REQUESTS:
            target = form.format(code=code)
            raw = f"GET {target} HTTP/1.1\r\nHost: x\r\nReferer: http://x{target}\r\n\r\n"
            status, headers, body = exchange(port, raw.encode())
            if target.startswith("/api/"):
                assert status == 200, body
                assert json.loads(body)["found"] is True, body
            else:
                assert status == 302, body
                assert headers["location"].startswith("/en/trackables/active/")
    lines = access.read_text()
    assert lines.count("[redacted]") >= len(ENCODED_REQUESTS)
    assert code not in lines
    assert code not in output.read_text()


@pytest.mark.processes
def test_workers_are_recycled_after_their_requests_and_no_request_is_dropped(tmp_path):
    """GUNICORN_MAX_REQUESTS: a worker is replaced after that many requests; the requests
    around the replacement are all answered."""
    settings = {"GUNICORN_MAX_REQUESTS": "5", "GUNICORN_MAX_REQUESTS_JITTER": "0"}
    with gunicorn_logging_to(tmp_path, **settings) as (port, _access, output):
        answers = [
            exchange(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")[0] for _ in range(12)
        ]
    assert answers == [200] * 12
    text = output.read_text()
    assert text.count("Autorestarting worker after current request") >= 2
    assert text.count("Booting worker with pid") >= 3


def test_recycling_is_a_setting(monkeypatch):
    import runpy

    monkeypatch.delenv("GUNICORN_MAX_REQUESTS", raising=False)
    settings = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    assert (settings["max_requests"], settings["max_requests_jitter"]) == (100000, 10000)
    monkeypatch.setenv("GUNICORN_MAX_REQUESTS", "0")
    assert runpy.run_path(str(ROOT / "gunicorn.conf.py"))["max_requests"] == 0


@pytest.mark.processes
def test_the_json_access_log_names_route_client_and_request_without_secrets(tmp_path):
    """LOG_FORMAT=json: one JSON object per request with its id, the route's template,
    status, bytes, duration and the client behind a trusted proxy; the secret in the
    path redacted as in every log."""
    key = "k" * 48
    code = a_trackable_in(tmp_path / "app.db", key)
    settings = {"LOG_FORMAT": "json", "TRUSTED_PROXIES": "127.0.0.1", "TRACKABLE_CODE_KEY": key}
    with gunicorn_logging_to(tmp_path, **settings) as (port, access, output):
        exchange(
            port,
            f"GET /trackable/{code} HTTP/1.1\r\nHost: x\r\n".encode()
            + b"X-Forwarded-For: 203.0.113.7\r\nX-Request-ID: req-1234567890abcdef\r\n\r\n",
        )
        exchange(port, b"GET /api/nothing-here HTTP/1.1\r\nHost: x\r\n\r\n")
        # A code typed where no route is: nothing of the path or query is logged.
        exchange(port, f"GET /{code}?c={code} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    lines = [json.loads(line) for line in access.read_text().splitlines() if line.strip()]
    entry = next(line for line in lines if line["request_id"] == "req-1234567890abcdef")
    assert entry["route"] == "/trackable/<path:code>"
    assert entry["status"] == 302
    assert entry["client"] == "203.0.113.7"
    assert entry["peer"] == "127.0.0.1"
    assert entry["method"] == "GET"
    assert code not in access.read_text()
    assert entry["path"] == "/trackable/[redacted]"
    assert isinstance(entry["duration_ms"], float)
    assert entry["bytes"] > 0
    unmatched = [line for line in lines if line["route"] is None]
    assert [(line["path"], line["status"]) for line in unmatched] == [("unmatched", 404)] * 2
    assert "nothing-here" not in access.read_text()
    # gunicorn's own lines (the master's and the workers') and the app's are JSON too.
    own = [json.loads(line) for line in output.read_text().splitlines() if line.strip()]
    assert any(line["message"].startswith("Listening at") for line in own)
    assert any(line["message"].startswith("Booting worker") for line in own)


@pytest.mark.processes
def test_unsafe_production_settings_stop_the_server_with_one_refusal(tmp_path):
    """The master refuses before any worker starts: each setting named once, no traceback,
    and gunicorn's boot-failure status (3) rather than workers started again and again."""
    same = "s" * 40
    env = {
        **os.environ,
        "APP_ENV": "production",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'app.db'}",
        "SECRET_KEY": same,
        "JWT_SECRET_KEY": same,
        "TRACKABLE_CODE_KEY": "t" * 40,
        "WEBHOOK_SECRETS_KEY": "w" * 40,
        "PUBLIC_BASE_URL": "https://notes.example.org",
        "MAIL_BACKEND": "smtp",
        "TRUSTED_PROXIES": "10.0.0.0/8,not-a-network",
        "PORT": str(free_port()),
    }
    result = subprocess.run(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 3, output
    assert output.count("Refusing to start in production") == 1, output
    assert output.count("SECRET_KEY and JWT_SECRET_KEY have the same value") == 1, output
    assert output.count("'not-a-network' is not an address") == 1, output
    assert "Traceback" not in output
    assert "Booting worker" not in output
