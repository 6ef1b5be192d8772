"""The nginx site of deploy/nginx, run by Debian's nginx in front of the app under
gunicorn: the production file passes `nginx -t` (with a throwaway certificate), requests
pass through with the request id and the client's address, every error nginx answers
itself is problem+json with a registered code, never nginx's HTML, and the image upload
POSTs go to the uploads' own pool (a second gunicorn) while everything else, GETs of the
same paths included, goes to the app's.

Those that run nginx and gunicorn are marked `processes` (CI runs them). Without
/usr/sbin/nginx these tests skip, saying why; with REQUIRE_DEPLOY_TESTS=1 (CI sets it and
installs nginx) they fail instead."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from flask import Flask
from PIL import Image
from sqlalchemy import create_engine

from app.error_codes import ERROR_CODES
from app.models import Base
from tests.serving import free_port, gunicorn_serving

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "deploy" / "nginx"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
PROBLEM = "application/problem+json"


@pytest.fixture(scope="module", autouse=True)
def nginx_present() -> None:
    if Path(NGINX).exists():
        return
    message = "Debian's nginx is not installed (apt-get install nginx)"
    if os.environ.get("REQUIRE_DEPLOY_TESTS") == "1":
        pytest.fail(message)
    pytest.skip(message)


def main_config(prefix: Path, body: str) -> Path:
    """An nginx main file under `prefix` (its own pid, logs and temp paths) around `body`."""
    for name in ("logs", "body", "proxy", "cache"):
        (prefix / name).mkdir(exist_ok=True)
    config = prefix / "nginx.conf"
    # As root, nginx's workers would run as `nobody`, who cannot enter pytest's directories.
    user = "user root root;" if os.geteuid() == 0 else ""
    config.write_text(
        f"""
{user}
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/logs/error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log {prefix}/logs/access.log;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/proxy;
    uwsgi_temp_path {prefix}/proxy;
    scgi_temp_path {prefix}/proxy;
{body}
}}
"""
    )
    return config


def upstreams(prefix: Path, app_port: int, uploads_port: int) -> Path:
    """upstream.conf as shipped, its addresses (the app's 8000, the uploads' 8001) moved."""
    text = (SITE / "upstream.conf").read_text()
    assert "127.0.0.1:8000" in text
    assert "127.0.0.1:8001" in text
    text = text.replace("127.0.0.1:8000", f"127.0.0.1:{app_port}")
    text = text.replace("127.0.0.1:8001", f"127.0.0.1:{uploads_port}")
    path = prefix / "upstream.conf"
    path.write_text(text)
    return path


def site_file(prefix: Path) -> Path:
    """app.conf as shipped, its logs written under `prefix` instead of /var/log/nginx."""
    text = (SITE / "app.conf").read_text()
    assert "/var/log/nginx/access.log" in text
    path = prefix / "app.conf"
    path.write_text(text.replace("/var/log/nginx/", f"{prefix}/logs/"))
    return path


def site_body(prefix: Path, listen: int, app_port: int, uploads_port: int) -> str:
    """The site's app.conf behind a plain listener, upstream.conf's pools at the ports."""
    return f"""
    include {SITE / "logging.conf"};
    proxy_cache_path {prefix}/cache keys_zone=location_notes_static:1m;
    include {upstreams(prefix, app_port, uploads_port)};
    server {{
        listen 127.0.0.1:{listen};
        include {site_file(prefix)};
    }}
"""


def wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError("nginx exited")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("nginx did not listen")


@contextmanager
def nginx_serving(prefix: Path, app_port: int, uploads_port: int) -> Iterator[str]:
    """nginx with the site in front of the two pools; yields its base URL."""
    listen = free_port()
    config = main_config(prefix, site_body(prefix, listen, app_port, uploads_port))
    process = subprocess.Popen([NGINX, "-p", str(prefix), "-c", str(config)])  # noqa: S603 - our own config
    try:
        wait_for_port(listen, process)
        yield f"http://127.0.0.1:{listen}"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two pools' shared database (tables made) and images; each logs its requests."""
    directory = tmp_path_factory.mktemp("nginx-app")
    engine = create_engine(f"sqlite:///{directory / 'app.db'}")
    Base.metadata.create_all(engine)
    engine.dispose()
    return directory


def pool_settings(directory: Path, pool: str) -> dict[str, str]:
    return {
        "APP_ENV": "testing",
        "DATABASE_URL": f"sqlite:///{directory / 'app.db'}",
        "IMAGE_ROOT": str(directory / "images"),
        "TRUSTED_PROXIES": "127.0.0.1",
        "ACCESS_LOG": str(directory / f"{pool}-access.log"),
    }


@pytest.fixture(scope="module")
def app_port(served: Path) -> Iterator[int]:
    with gunicorn_serving(pool_settings(served, "app")) as port:
        yield port


@pytest.fixture(scope="module")
def uploads_port(served: Path, app_port: int) -> Iterator[int]:
    """The image uploads' pool: the same app and data, a gunicorn of its own."""
    with gunicorn_serving(pool_settings(served, "uploads")) as port:
        yield port


@pytest.fixture(scope="module")
def proxy(
    tmp_path_factory: pytest.TempPathFactory, app_port: int, uploads_port: int
) -> Iterator[str]:
    with nginx_serving(tmp_path_factory.mktemp("nginx"), app_port, uploads_port) as url:
        yield url


@pytest.fixture(scope="module")
def proxy_without_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The site with its upstreams on ports nothing listens on."""
    prefix = tmp_path_factory.mktemp("nginx-down")
    with nginx_serving(prefix, free_port(), free_port()) as url:
        yield url


@pytest.fixture(scope="module")
def proxy_without_uploads(tmp_path_factory: pytest.TempPathFactory, app_port: int) -> Iterator[str]:
    """The site with the app's pool up and no uploads' pool answering."""
    prefix = tmp_path_factory.mktemp("nginx-no-uploads")
    with nginx_serving(prefix, app_port, free_port()) as url:
        yield url


def assert_nginx_problem(response: requests.Response, status: int, code: str) -> None:
    assert response.status_code == status
    assert response.headers["Content-Type"] == PROBLEM
    body = response.json()
    assert body["status"] == status
    assert body["code"] == code
    assert "nginx" not in response.text.lower()


def self_signed(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "notes.example.org")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + dt.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "fullchain.pem", directory / "privkey.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_the_production_site_passes_nginx_t(tmp_path):
    """location-notes.conf as shipped, its paths pointed at this test's directory."""
    cert, key = self_signed(tmp_path)
    site = (SITE / "location-notes.conf").read_text()
    site = site.replace("/etc/nginx/location-notes/", f"{SITE}/")
    site = site.replace("/etc/ssl/location-notes/fullchain.pem", str(cert))
    site = site.replace("/etc/ssl/location-notes/privkey.pem", str(key))
    site = site.replace("/var/cache/nginx/location-notes", str(tmp_path / "cache"))
    site = site.replace(f"{SITE}/app.conf", str(site_file(tmp_path)))
    site = re.sub(r"listen (\[::\]:)?(80|443)", lambda m: f"listen 127.0.0.1:{free_port()}", site)
    (tmp_path / "site.conf").write_text(site)
    config = main_config(tmp_path, f"    include {tmp_path / 'site.conf'};")
    result = subprocess.run(  # noqa: S603 - our own config
        [NGINX, "-t", "-p", str(tmp_path), "-c", str(config)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_every_problem_nginx_answers_is_json_with_a_registered_code():
    site = (SITE / "app.conf").read_text()
    bodies = re.findall(r"return (\d{3}) '(.*?)\\n';", site)
    statuses = {int(status) for status, _ in bodies}
    assert statuses == {400, 403, 404, 408, 413, 414, 431, 500, 502, 503, 504}
    for status, raw in bodies:
        body = json.loads(raw.replace("\\'", "'"))
        assert body["status"] == int(status)
        assert int(status) in ERROR_CODES[body["code"]].statuses


@pytest.mark.processes
def test_requests_pass_through_with_the_request_id(proxy):
    response = requests.get(f"{proxy}/healthz", timeout=10)
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    # nginx names each request ($request_id) and the app logs and echoes that name.
    assert re.fullmatch(r"[0-9a-f]{32}", response.headers["X-Request-ID"])


@pytest.mark.processes
def test_an_api_error_passes_through_untouched(proxy):
    response = requests.get(f"{proxy}/api/does-not-exist", timeout=10)
    assert_nginx_problem(response, 404, "route_not_found")


@pytest.mark.processes
def test_a_body_over_the_limit_is_problem_json_from_nginx(proxy):
    big = b"x" * (22 * 1024 * 1024)
    response = requests.post(
        f"{proxy}/api/images/upload",
        data=big,
        headers={"Content-Type": "application/octet-stream"},
        timeout=30,
    )
    assert_nginx_problem(response, 413, "payload_too_large")


@pytest.mark.processes
def test_headers_over_the_limit_are_problem_json(proxy):
    response = requests.get(f"{proxy}/healthz", headers={"X-Big": "a" * 9000}, timeout=10)
    assert response.status_code in {400, 431}
    assert response.headers["Content-Type"] == PROBLEM
    assert "nginx" not in response.text.lower()


@pytest.mark.processes
def test_no_app_instance_is_problem_json(proxy_without_app):
    response = requests.get(f"{proxy_without_app}/api/system/status", timeout=10)
    assert_nginx_problem(response, 502, "service_unavailable")


@pytest.mark.processes
def test_the_internal_image_location_cannot_be_asked_for(proxy):
    response = requests.get(f"{proxy}/_protected_images/anything.jpg", timeout=10)
    assert_nginx_problem(response, 404, "route_not_found")


@pytest.mark.processes
def test_public_files_are_cached_as_long_as_the_app_allows(proxy):
    tile = f"{proxy}/maps/tiles/1/0/0.png"
    requests.get(tile, timeout=30)
    again = requests.get(tile, timeout=30)
    assert again.status_code == 200
    assert again.headers["X-Cache-Status"] == "HIT"
    # The pages' styles say no-cache (same name in every release): never served stale.
    styles = f"{proxy}/static/pages/pages.css"
    requests.get(styles, timeout=10)
    assert requests.get(styles, timeout=10).headers["X-Cache-Status"] != "HIT"


# --- the image uploads' own pool ------------------------------------------------------

NOTE = "6f1c1a52-6d43-4a43-9a55-2c8f0f7d9b10"  # any id: only the routing is looked at
FIND_FORM = f"/en/trackables/active/{NOTE}/find"


def served_by(served: Path, response: requests.Response) -> str:
    """Which pool's access log has the response's request id ("app" or "uploads")."""
    request_id = response.headers["X-Request-ID"]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # gunicorn logs the line after the answer is sent
        logs = {pool: served / f"{pool}-access.log" for pool in ("app", "uploads")}
        # A pool that never answered (the uploads' one, stopped) may have no log yet.
        found = [
            pool for pool, log in logs.items() if log.exists() and request_id in log.read_text()
        ]
        if found:
            assert len(found) == 1, found
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"no pool logged request {request_id}")


def small_jpeg() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (640, 480), (40, 120, 200)).save(buffer, "JPEG")
    return buffer.getvalue()


def signed_in(proxy: str) -> dict[str, str]:
    account = {"email": "uploader@example.org", "userName": "uploader"}
    password = "a long enough passphrase 7"
    registered = requests.post(
        f"{proxy}/api/auth/register", json={**account, "password": password}, timeout=10
    )
    assert registered.status_code == 200, registered.text
    login = requests.post(
        f"{proxy}/api/auth/login?useCookies=false&useSessionCookies=false",
        json={"email": account["email"], "password": password},
        timeout=10,
    )
    assert login.status_code == 200, login.text
    return {"Authorization": f"Bearer {login.json()['accessToken']}"}


@pytest.mark.processes
def test_an_image_upload_goes_to_the_uploads_pool_and_its_list_to_the_app(proxy, served):
    headers = signed_in(proxy)
    note = requests.post(
        f"{proxy}/api/notes/mine",
        json={"title": "Pictured", "latitude": 52.5, "longitude": 13.4, "visibility": "Public"},
        headers=headers,
        timeout=10,
    )
    assert note.status_code in {200, 201}, note.text
    assert served_by(served, note) == "app"
    path = f"/api/images/notes/{note.json()['noteId']}"
    uploaded = requests.post(
        f"{proxy}{path}",
        files={"file": ("photo.jpg", small_jpeg(), "image/jpeg")},
        headers=headers,
        timeout=30,
    )
    assert uploaded.status_code in {200, 201}, uploaded.text
    assert served_by(served, uploaded) == "uploads"
    # The same path's GET (the note's images) is the app's, and sees the upload.
    listed = requests.get(f"{proxy}{path}", headers=headers, timeout=10)
    assert listed.status_code == 200
    assert served_by(served, listed) == "app"
    image_id = uploaded.json()["image"]["contentImageId"]
    assert image_id in listed.text
    variant = requests.get(f"{proxy}/api/images/{image_id}/small", headers=headers, timeout=10)
    assert variant.status_code == 200
    assert served_by(served, variant) == "app"


def upload_paths(app: Flask) -> list[str]:
    """Every route that takes an image body: the API's image POSTs and the find form."""
    paths = []
    for rule in app.url_map.iter_rules():
        if "POST" in (rule.methods or set()) and (
            rule.rule.startswith("/api/images/") or rule.endpoint == "pages.post_find"
        ):
            path = re.sub(r"<uuid:[a-z_]+>", NOTE, rule.rule)
            paths.append(re.sub(r"<string\(length=2\):lang>", "en", path))
    return sorted(paths)


@pytest.mark.processes
def test_every_image_upload_route_is_sent_to_the_uploads_pool(app, proxy, served):
    paths = upload_paths(app)
    assert FIND_FORM in paths
    assert len([path for path in paths if path.startswith("/api/images/")]) == 7
    for path in paths:
        assert "<" not in path, path
        response = requests.post(
            f"{proxy}{path}", files={"file": ("photo.jpg", b"not read", "image/jpeg")}, timeout=10
        )
        assert response.status_code < 500, (path, response.status_code)
        assert served_by(served, response) == "uploads", path


@pytest.mark.processes
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", f"/api/images/notes/{NOTE}"),
        ("GET", f"/api/images/journey-stops/{NOTE}"),
        ("GET", f"/api/images/profiles/{NOTE}"),
        ("GET", f"/api/images/{NOTE}/small"),
        ("DELETE", f"/api/images/{NOTE}"),
        ("GET", FIND_FORM),
        ("GET", f"/en/trackables/active/{NOTE}"),
        ("POST", f"/en/trackables/active/{NOTE}/activate"),
        ("POST", f"/api/images/notes/{NOTE}/extra"),
        ("POST", "/api/notes/mine/gpx"),  # a file upload, but no image to resize
        ("POST", "/api/notes/mine"),
        ("GET", "/healthz"),
    ],
)
def test_everything_else_goes_to_the_app_pool(proxy, served, method, path):
    response = requests.request(method, f"{proxy}{path}", timeout=10)
    assert response.status_code < 500, response.status_code
    assert served_by(served, response) == "app"


@pytest.mark.processes
def test_uploads_fall_back_to_the_app_pool_when_theirs_does_not_answer(
    proxy_without_uploads, served
):
    response = requests.post(
        f"{proxy_without_uploads}/api/images/notes/{NOTE}",
        files={"file": ("photo.jpg", b"not read", "image/jpeg")},
        timeout=10,
    )
    assert response.status_code < 500, response.status_code
    assert served_by(served, response) == "app"


@pytest.mark.processes
def test_nginx_logs_no_request_line_query_or_referer(tmp_path, app_port):
    """A code in the path, the query or the Referer reaches neither of nginx's logs, with
    an instance answering and with none; the access line keeps status, upstream and id."""
    code, other = "LNK7M2Q9XT", "QRTOKEN7788"
    sent = {"Referer": f"https://notes.example.org/trackable/{other}"}
    up, down = tmp_path / "up", tmp_path / "down"
    up.mkdir()
    down.mkdir()
    with nginx_serving(up, app_port, free_port()) as url:
        answer = requests.get(f"{url}/trackable/{code}?c={other}", headers=sent, timeout=10)
        assert answer.status_code in (302, 404)
    with nginx_serving(down, free_port(), free_port()) as url:
        failed = requests.get(f"{url}/trackable/{code}?c={other}", headers=sent, timeout=10)
        assert failed.status_code == 502
    for prefix, response in ((up, answer), (down, failed)):
        access = (prefix / "logs" / "access.log").read_text()
        errors = (prefix / "logs" / "error.log").read_text()
        for secret in (code, other):
            assert secret not in access
            assert secret not in errors
        line = access.strip().splitlines()[-1]
        assert f" GET 127.0.0.1 {response.status_code} " in line, line
        assert f"rid={response.headers['X-Request-ID']}" in line, line
        assert "upstream=127.0.0.1:" in line, line
