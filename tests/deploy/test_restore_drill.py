"""The restore drill of docs/operations.md (Backup and restore), end to end on PostgreSQL.

A database migrated as production migrates it, an image and export store and keys of its
own; an account, notes, an image, a trackable, a webhook and a data export made through
the API; backed up as operators are told (`pg_dump -Fc`, then `tar` of the store, the keys
kept apart) and restored into a new database and store. Started with the same keys,
every printed code, finder's unlock, image, note, export, token and signing secret still
works; started with another code key, webhook secrets key or records key, the start is
refused."""

from __future__ import annotations

import io
import os
import subprocess
import threading
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from alembic.config import Config as AlembicConfig
from alembic.script import ScriptDirectory
from flask import Flask
from flask_migrate import upgrade
from PIL import Image
from sqlalchemy import make_url, text

from app import InsecureConfiguration
from app.extensions import db
from config import normalize_database_url
from tests.conftest import ApiClient, fresh_postgresql_database, make_test_app
from tests.jobs import run_jobs
from tests.receivers import Receiver, reachable, verify

pytestmark = pytest.mark.processes

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"
# The keys and settings an operator keeps in the secret store, not beside the dumps.
KEYS = {
    "SECRET_KEY": "drill-secret-key-" + "s" * 40,
    "JWT_SECRET_KEY": "drill-jwt-key-" + "j" * 40,
    "TRACKABLE_CODE_KEY": "drill-code-key-" + "c" * 40,
    "WEBHOOK_SECRETS_KEY": "drill-webhook-key-" + "w" * 40,
    "RECORDS_KEY": "drill-records-key-" + "r" * 40,
}
PUBLIC_BASE_URL = "https://notes.example.org"
VARIANTS = ("thumbnail", "small", "medium", "large")
PLACE = {"latitude": 52.52, "longitude": 13.405}


@dataclass(frozen=True)
class Made:
    """What the clients were given before the backup, as the API returned it."""

    email: str
    password: str
    access_token: str
    refresh_token: str
    notes: dict[str, str]  # note id -> title
    public_note_id: str
    image_id: str
    variants: dict[str, bytes]  # variant name -> the JPEG downloaded before
    trackable_id: str
    public_code: str
    secret_code: str
    qr_token: str
    finder_cookie: tuple[str, str]  # a finder's unlock cookie (name, value) from the secret code
    webhook_id: str
    webhook_secret: str
    export_id: str
    export_zip: bytes


@dataclass(frozen=True)
class Drill:
    app: Flask  # started on the restored database and store, with the same keys
    url: str  # the restored database
    root: Path  # the restored store's parent directory
    made: Made


def libpq(url: str) -> str:
    """The address as pg_dump and pg_restore take it (no SQLAlchemy driver name)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def run(*command: str | Path) -> None:
    done = subprocess.run(  # noqa: S603 - the PostgreSQL client and tar, on our own files
        [str(part) for part in command], capture_output=True, text=True
    )
    assert done.returncode == 0, f"{command[0]}: {done.stderr}"


def start(url: str, root: Path, receiver: Receiver, **keys: str) -> Flask:
    """The app as a real start makes it: not a test app, so the start compares the keys
    with the database (app.check_code_keys, check_webhook_secrets_key) and records the code
    key's fingerprint on the first. Development rather than production only so that
    deliveries may reach the receiver on 127.0.0.1."""
    app = make_test_app(
        url,
        root,
        TESTING=False,
        ENV_NAME="development",
        DEV_KEYS_FILE=root / "dev-keys.json",  # never written: every key is set
        PUBLIC_BASE_URL=PUBLIC_BASE_URL,
        **{**KEYS, **keys},
    )
    reachable(app, receiver.port, 2.0)
    return app


def stop(app: Flask) -> None:
    with app.app_context():
        db.engine.dispose()


def migrate(url: str, root: Path) -> None:
    """`flask db upgrade`, as the migration unit runs it before the first start."""
    app = make_test_app(url, root)
    with app.app_context():
        upgrade(directory=str(MIGRATIONS))
        db.session.remove()
        db.engine.dispose()


def jpeg() -> bytes:
    """A real photo-sized JPEG (Pillow draws it in C, in milliseconds)."""
    picture = Image.effect_mandelbrot((1200, 900), (-2.0, -1.2, 1.0, 1.2), 64).convert("RGB")
    out = io.BytesIO()
    picture.save(out, format="JPEG", quality=90)
    return out.getvalue()


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.get_data(as_text=True)
    return response.get_json()


def make_data(app: Flask, receiver: Receiver) -> Made:
    """An account and its notes, image, trackable, webhook and export, through the API."""
    api = ApiClient(app.test_client())
    name = f"drill_{uuid.uuid4().hex[:8]}"
    email, password = f"{name}@example.org", "restore-" + uuid.uuid4().hex
    account = {"email": email, "userName": name, "password": password}
    ok(api.post("/api/auth/register", json=account))
    login = "/api/auth/login?useCookies=false&useSessionCookies=false"
    tokens = ok(api.post(login, json={"email": email, "password": password}))
    me = api.with_token(tokens["accessToken"])
    public = {"title": "A fountain", "body": "Cold water.", "visibility": "Public", **PLACE}
    private = {"title": "My bench", "visibility": "Private", **PLACE}
    notes = [ok(me.post("/api/notes/mine", json=body), 201) for body in (public, private)]
    photo = {"file": (io.BytesIO(jpeg()), "fountain.jpg")}
    uploaded = me.post(
        f"/api/images/notes/{notes[0]['noteId']}", data=photo, content_type="multipart/form-data"
    )
    image_id = ok(uploaded, 201)["image"]["contentImageId"]
    variants = {each: me.get(f"/api/images/{image_id}/{each}").get_data() for each in VARIANTS}
    created = ok(
        me.post(
            "/api/trackables",
            json={
                "name": "Blue travel bug",
                "visibility": "AlwaysVisibleToEveryone",
                "activateImmediately": True,
            },
        ),
        201,
    )
    (item,) = created["items"]
    finder = app.test_client()
    ok(ApiClient(finder).post("/api/trackables/lookup", json={"code": item["secretCode"]}))
    cookie = finder.get_cookie(app.config["TRACKABLE_ACCESS_COOKIE_NAME"])
    assert cookie is not None
    hook = ok(me.post("/api/webhooks", json={"url": receiver.url()}), 201)
    export = ok(me.post("/api/account/export"), 202)
    run_jobs(app)  # the worker makes the export's ZIP in the export store
    download = me.get(f"/api/account/export/{export['exportId']}/download")
    assert download.status_code == 200, download.get_data(as_text=True)
    return Made(
        email=email,
        password=password,
        access_token=tokens["accessToken"],
        refresh_token=tokens["refreshToken"],
        notes={note["noteId"]: note["title"] for note in notes},
        public_note_id=notes[0]["noteId"],
        image_id=image_id,
        variants=variants,
        trackable_id=item["trackableId"],
        public_code=item["publicCode"],
        secret_code=item["secretCode"],
        qr_token=item["scanUrl"].removeprefix(f"{PUBLIC_BASE_URL}/trackable/"),
        finder_cookie=(cookie.key, cookie.value),
        webhook_id=hook["webhookId"],
        webhook_secret=hook["secret"],
        export_id=export["exportId"],
        export_zip=download.get_data(),
    )


def back_up(url: str, root: Path, into: Path) -> None:
    """The database first, then the store: every row of the dump has its files."""
    into.mkdir()
    run("pg_dump", "-Fc", "-f", into / "database.dump", libpq(url))
    run("tar", "-C", root, "-cf", into / "store.tar", "images", "exports")


def restore(backup: Path, url: str, root: Path) -> None:
    """The store, then the database, each into a new empty place."""
    root.mkdir()
    run("tar", "-C", root, "-xf", backup / "store.tar")
    run("pg_restore", "--no-owner", "--exit-on-error", "-d", libpq(url), backup / "database.dump")


@pytest.fixture(scope="module")
def server_url() -> str:
    configured = normalize_database_url(os.environ.get("TEST_DATABASE_URL", ""))
    if not configured.startswith("postgresql"):
        pytest.skip("the drill backs up with pg_dump: PostgreSQL only (TEST_DATABASE_URL)")
    return configured


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    """A webhook receiver on 127.0.0.1, up before the webhook is made and after the restore."""
    server = Receiver()
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def drill(
    server_url: str, receiver: Receiver, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Drill]:
    """Made, backed up, the original database dropped, restored, started again."""
    tmp = tmp_path_factory.mktemp("drill")
    name = f"{make_url(server_url).database}_drill_{uuid.uuid4().hex[:8]}"
    with ExitStack() as stack:
        with fresh_postgresql_database(server_url, f"{name}_lost") as lost_url:
            migrate(lost_url, tmp / "lost")
            app = start(lost_url, tmp / "lost", receiver)
            made = make_data(app, receiver)
            stop(app)
            back_up(lost_url, tmp / "lost", tmp / "backup")
        url = stack.enter_context(fresh_postgresql_database(server_url, f"{name}_restored"))
        restore(tmp / "backup", url, tmp / "restored")
        migrate(url, tmp / "restored")  # into a newer release: its migrations; here none
        app = start(url, tmp / "restored", receiver)
        yield Drill(app=app, url=url, root=tmp / "restored", made=made)
        stop(app)


def client(drill: Drill, token: str | None = None) -> ApiClient:
    return ApiClient(drill.app.test_client(), token)


def lookup(drill: Drill, code: str) -> dict[str, Any]:
    """A new client's lookup of `code` (no session from an earlier one)."""
    return ok(client(drill).post("/api/trackables/lookup", json={"code": code}))


def test_the_trackables_public_code_still_finds_it(drill):
    found = lookup(drill, drill.made.public_code)
    assert found["found"] is True, found
    assert found["trackableId"] == drill.made.trackable_id
    assert found["isPublicCodeMatch"] is True


@pytest.mark.parametrize("code", ["secret_code", "qr_token"])
def test_the_printed_secret_code_and_qr_token_still_open_it(drill, code):
    found = lookup(drill, getattr(drill.made, code))
    assert found["found"] is True, found
    assert found["trackableId"] == drill.made.trackable_id
    assert found["usesSecretAccess"] is True


def test_the_scanned_qr_address_still_leads_to_the_trackable(drill):
    response = client(drill).get(f"/trackable/{drill.made.qr_token}")
    assert response.status_code == 302, response.get_data(as_text=True)
    assert response.headers["Location"].endswith(f"/trackables/active/{drill.made.trackable_id}")


def test_a_finders_unlock_from_before_still_opens_the_trackable(drill):
    name, value = drill.made.finder_cookie
    url = f"/api/trackables/active/{drill.made.trackable_id}"
    landing = ok(client(drill).get(url, cookies={name: value}))
    assert landing["trackableId"] == drill.made.trackable_id
    assert client(drill).get(url).status_code == 404  # not without the cookie


def test_every_image_variant_downloads_byte_identical(drill):
    me = client(drill, drill.made.access_token)
    for variant, before in drill.made.variants.items():
        response = me.get(f"/api/images/{drill.made.image_id}/{variant}")
        assert response.status_code == 200, (variant, response.get_data(as_text=True))
        assert response.mimetype == "image/jpeg"
        assert response.get_data() == before, variant


def test_the_notes_are_there_for_their_owner_and_the_public(drill):
    listed = ok(client(drill, drill.made.access_token).get("/api/notes/mine"))
    assert {note["noteId"]: note["title"] for note in listed} == drill.made.notes
    public = ok(client(drill).get(f"/api/public/notes/{drill.made.public_note_id}"))
    assert public["body"] == "Cold water."


def test_the_data_export_downloads_byte_identical(drill):
    me = client(drill, drill.made.access_token)
    response = me.get(f"/api/account/export/{drill.made.export_id}/download")
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_data() == drill.made.export_zip


def test_the_account_signs_in_and_its_tokens_from_before_still_work(drill):
    api = client(drill)
    login = "/api/auth/login?useCookies=false&useSessionCookies=false"
    ok(api.post(login, json={"email": drill.made.email, "password": drill.made.password}))
    refreshed = ok(api.post("/api/auth/refresh", json={"refreshToken": drill.made.refresh_token}))
    assert refreshed["accessToken"]
    ok(client(drill, drill.made.access_token).get("/api/auth/manage/info"))


@pytest.mark.usefixtures("only_loopback")
def test_a_delivery_after_the_restore_verifies_with_the_secret_shown_before(drill, receiver):
    me = client(drill, drill.made.access_token)
    sent = ok(me.post(f"/api/webhooks/{drill.made.webhook_id}/test"), 202)
    run_jobs(drill.app)
    (got,) = [one for one in receiver.received if one.headers["webhook-id"] == sent["deliveryId"]]
    assert verify(drill.made.webhook_secret, got)["type"] == "webhook.test"


@pytest.mark.parametrize(
    ("setting", "beginning", "what_breaks"),
    [
        ("TRACKABLE_CODE_KEY", "is not the key", "printed would be answered as a miss"),
        ("WEBHOOK_SECRETS_KEY", "", "deliveries of 1 subscription would all fail"),
        ("RECORDS_KEY", "is not the key", "every recovery code would fail"),
    ],
)
def test_a_start_with_another_key_is_refused_and_says_why(
    drill, receiver, setting, beginning, what_breaks
):
    with pytest.raises(InsecureConfiguration) as refused:
        start(drill.url, drill.root, receiver, **{setting: "another-key-" + "x" * 40})
    message = str(refused.value)
    assert message.startswith(f"Refusing to start: {setting} {beginning}".rstrip())
    assert what_breaks in message


def test_the_restored_database_is_ready_and_at_the_migrations_head(drill):
    assert ok(client(drill).get("/readyz"))["status"] == "ready"
    config = AlembicConfig(str(MIGRATIONS / "alembic.ini"))
    config.set_main_option("script_location", str(MIGRATIONS))
    with drill.app.app_context():
        revision = db.session.scalar(text("SELECT version_num FROM alembic_version"))
        db.session.remove()
    assert revision == ScriptDirectory.from_config(config).get_current_head()
