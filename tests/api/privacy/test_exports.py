"""Personal data export through HTTP, with the worker run in-process: what the
ZIP holds, that no secret is in it, who may read it, one at a time and the daily limit,
expiry and the sweep, the mail, and runs that fail or die."""

from __future__ import annotations

import io
import json
import os
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

import gpxpy
import pytest

from app.extensions import db
from app.models.base import utcnow
from app.models.privacy import AccountExport, ExportState
from app.platform.mail import outbox
from app.services import privacy
from app.services.privacy.catalogue import FILES, file_names
from tests.api.privacy.conftest import EXPORT_URL, export_ready, ok, open_zip, start
from tests.conftest import assert_problem
from tests.factories import make_user
from tests.jobs import run_jobs


def download(client, record):
    return client.get(record["downloadUrl"])


def stored_files(app) -> list[str]:
    root = Path(app.config["EXPORT_ROOT"])
    return sorted(path.name for path in root.iterdir()) if root.is_dir() else []


def export_row(export_id: str) -> AccountExport:
    db.session.expire_all()
    found = db.session.get(AccountExport, uuid.UUID(export_id))
    assert found is not None
    return found


# --- what the ZIP holds ----------------------------------------------------------------------


def test_the_zip_holds_a_file_per_kind_of_record_the_gpx_the_images_and_a_readme(app, api, rich):
    me = api.as_user(rich.user)
    archive = open_zip(download(me, export_ready(app, me)))
    names = archive.namelist()
    assert [name for name in names if not name.startswith(("images/", "schemas/"))] == [
        "README.md",
        *[name for name in file_names() if name != "README.md"],
    ]
    assert [name for name in names if name.startswith("schemas/")] == [
        f"schemas/{json_file.name.removesuffix('.json')}.schema.json" for json_file in FILES
    ]
    images = [name for name in names if name.startswith("images/")]
    assert images == [f"images/Large/{rich.ids['image']}-1024.jpg"]
    assert archive.read(images[0])[:3] == b"\xff\xd8\xff"  # a JPEG


RECORDS = [
    # file, list, the account's record (by the name of its id), the field holding that id
    ("notes.json", "notes", "note", "id"),
    ("notes.json", "notes", "deleted_note", "id"),
    ("note_comments.json", "comments", "note_comment", "id"),
    ("teams.json", "teams", "team", "id"),
    ("teams.json", "memberships", "team", "teamId"),
    ("teams.json", "inviteLinks", "invite_link", "id"),
    ("trackables.json", "trackables", "trackable", "id"),
    ("trackables.json", "groups", "group", "id"),
    ("trackables.json", "unlocks", "unlocked", "trackableId"),
    ("trackable_comments.json", "comments", "trackable_comment", "id"),
    ("journey_stops.json", "journeyStops", "journey_stop", "id"),
    ("images.json", "images", "image", "id"),
    ("watches.json", "trackableWatches", "unlocked", "trackableId"),
    ("watches.json", "groupWatches", "group", "groupId"),
    ("watches.json", "areaWatches", "area_watch", "id"),
    ("reports.json", "reports", "report", "id"),
    ("notifications.json", "events", "trackable", "trackableId"),
    ("webhooks.json", "webhooks", "webhook", "id"),
]


def test_each_kind_of_record_is_exported(app, api, rich):
    me = api.as_user(rich.user)
    archive = open_zip(download(me, export_ready(app, me)))
    missing = []
    for file, key, id_name, field in RECORDS:
        body = json.loads(archive.read(file))
        assert body["accountId"] == str(rich.user.id)
        if rich.ids[id_name] not in [record[field] for record in body[key]]:
            missing.append(f"{file} {key}: no {field} {id_name}")
    assert not missing


def test_the_account_sessions_inbox_and_settings_are_exported(app, api, rich):
    me = api.as_user(rich.user)
    archive = open_zip(download(me, export_ready(app, me)))
    account = json.loads(archive.read("account.json"))
    (record,) = account["account"]
    assert record["userName"] == "ada_exports"
    assert record["email"] == rich.user.email
    assert record["isTwoFactorEnabled"] is True
    assert [code["purpose"] for code in account["pendingEmailCodes"]]
    assert {use["budget"] for use in account["limitUses"]} >= {"account-export", "image-upload"}
    assert json.loads(archive.read("sessions.json"))["sessions"]
    notifications = json.loads(archive.read("notifications.json"))
    assert notifications["inbox"]
    assert notifications["settings"] == [
        {**notifications["settings"][0], "mail": "each", "language": "en"}
    ]
    image = json.loads(archive.read("images.json"))["images"][0]
    assert image["targetKind"] == "note"
    assert image["file"] == f"images/Large/{rich.ids['image']}-1024.jpg"
    assert [variant["name"] for variant in image["variants"]] == [
        "thumbnail",
        "small",
        "medium",
        "large",
    ]


def test_no_secret_and_nobody_elses_text_is_in_the_zip(app, api, rich):
    me = api.as_user(rich.user)
    archive = open_zip(download(me, export_ready(app, me)))
    contents = b"".join(archive.read(name) for name in archive.namelist())
    for name, secret in rich.secrets.items():
        assert secret.encode() not in contents, f"the {name} is in the export"
    for text in rich.others:
        assert text.encode() not in contents, text
    for column in ("passwordHash", "securityStamp", "twoFactorSharedKey", "tokenHash", "nonceHash"):
        assert f'"{column}"'.encode() not in contents


def test_the_readme_explains_each_file_and_what_is_left_out(app, api):
    me = api.as_user(make_user())
    readme = open_zip(download(me, export_ready(app, me))).read("README.md").decode()
    for name in file_names():
        assert f"### {name}" in readme, name
    assert "### images/" in readme
    assert "### schemas/" in readme
    for json_file in FILES:
        for part in json_file.parts:
            assert f"- `{part.key}`: {part.about}" in readme
    assert "`users.password_hash`:" in readme
    assert "`webhook_subscriptions.secret_encrypted`:" in readme


def test_the_notes_are_in_the_gpx_too(app, api, rich):
    me = api.as_user(rich.user)
    archive = open_zip(download(me, export_ready(app, me)))
    gpx = gpxpy.parse(archive.read("notes.gpx").decode())
    assert [(point.name, point.latitude, point.longitude) for point in gpx.waypoints] == [
        ("Old oak by the gate", 52.48, 13.40)
    ]  # not the deleted note, nor one without coordinates


def test_an_empty_account_exports_empty_lists(app, api):
    me = api.as_user(make_user())
    archive = open_zip(download(me, export_ready(app, me)))
    notes = json.loads(archive.read("notes.json"))
    assert notes["notes"] == []
    assert notes["attachedTrackables"] == []
    assert [name for name in archive.namelist() if name.startswith("images/")] == []


def test_image_files_stop_at_the_cap_and_are_listed_without_a_file(app, api, rich):
    app.config["EXPORT_IMAGE_FILES_MAX_BYTES"] = 100
    me = api.as_user(rich.user)
    archive = open_zip(download(me, export_ready(app, me)))
    assert [name for name in archive.namelist() if name.startswith("images/")] == []
    image = json.loads(archive.read("images.json"))["images"][0]
    assert image["file"] is None
    assert image["variants"][3]["url"] == f"/Images/Large/{rich.ids['image']}-1024.jpg"


# --- the export's life -------------------------------------------------------------------------


def test_an_export_is_queued_then_done_with_a_download_link_for_a_day(app, api):
    me = api.as_user(make_user())
    response = me.post(EXPORT_URL)
    started = ok(response, 202)
    assert response.headers["Location"] == f"{EXPORT_URL}/{started['exportId']}"
    assert started["state"] == "queued"
    assert started["downloadUrl"] is None
    assert_problem(me.get(f"{EXPORT_URL}/{started['exportId']}/download"), 409)
    run_jobs(app)
    done = ok(me.get(f"{EXPORT_URL}/{started['exportId']}"))
    assert done["state"] == "done"
    assert done["downloadUrl"] == f"{EXPORT_URL}/{started['exportId']}/download"
    finished = datetime.fromisoformat(done["finishedUtc"])
    assert datetime.fromisoformat(done["expiresUtc"]) - finished == timedelta(hours=24)
    response = download(me, done)
    assert len(response.data) == done["sizeBytes"]
    assert response.headers["Cache-Control"] == "private, no-store"
    assert response.headers["Content-Disposition"].startswith("attachment; filename=")
    assert stored_files(app) == [f"{done['exportId']}.zip"]


@pytest.mark.parametrize("who", ["stranger", "superadmin"])
def test_someone_elses_export_is_not_found(app, api, who):
    owner = api.as_user(make_user())
    record = export_ready(app, owner)
    other = api.as_user(make_user(is_superadmin=who == "superadmin"))
    assert_problem(
        other.get(f"{EXPORT_URL}/{record['exportId']}"), 404, code="account_export_not_found"
    )
    assert_problem(download(other, record), 404, code="account_export_not_found")
    assert_problem(other.get(f"{EXPORT_URL}/{uuid.uuid4()}"), 404, code="account_export_not_found")


def test_the_routes_need_a_bearer_token(app, api):
    record = export_ready(app, api.as_user(make_user()))
    assert_problem(api.post(EXPORT_URL), 401)
    assert_problem(api.get(f"{EXPORT_URL}/{record['exportId']}"), 401)
    assert_problem(download(api, record), 401)


def test_one_export_at_a_time(app, api):
    me = api.as_user(make_user())
    first = start(me)
    body = assert_problem(me.post(EXPORT_URL), 409, code="account_export_in_progress")
    assert body["exportId"] == first["exportId"]
    run_jobs(app)
    assert start(me)["exportId"] != first["exportId"]  # done: the next one may start


def test_the_daily_limit_answers_429_with_retry_after(app, api):
    app.config["EXPORTS_PER_USER_PER_DAY"] = 2
    me = api.as_user(make_user())
    export_ready(app, me)
    export_ready(app, me)
    response = me.post(EXPORT_URL)
    assert_problem(response, 429, code="account_export_daily_limit_reached")
    assert 0 < int(response.headers["Retry-After"]) <= 86400
    assert db.session.query(AccountExport).count() == 2  # nothing was started
    other = api.as_user(make_user())
    assert start(other)["state"] == "queued"  # the limit is per account


def test_an_expired_export_answers_410_then_the_sweep_removes_its_file_and_later_its_record(
    app, api
):
    me = api.as_user(make_user())
    record = export_ready(app, me)
    row = export_row(record["exportId"])
    row.expires_utc = utcnow() - timedelta(seconds=1)
    db.session.commit()
    seen = ok(me.get(f"{EXPORT_URL}/{record['exportId']}"))
    assert (seen["state"], seen["downloadUrl"]) == ("expired", None)
    assert_problem(download(me, record), 410, code="account_export_expired")
    now = utcnow()
    assert privacy.sweep_exports(now, app.config) == 1
    db.session.commit()
    assert stored_files(app) == []
    assert export_row(record["exportId"]).state is ExportState.EXPIRED
    assert_problem(download(me, record), 410, code="account_export_expired")
    assert privacy.sweep_exports(now + timedelta(days=6), app.config) == 0
    assert privacy.sweep_exports(now + timedelta(days=7, seconds=1), app.config) == 1
    db.session.commit()
    assert_problem(me.get(f"{EXPORT_URL}/{record['exportId']}"), 404)


def test_the_sweep_removes_stray_and_temporary_files_once_old(app, api):
    me = api.as_user(make_user())
    record = export_ready(app, me)
    root = Path(app.config["EXPORT_ROOT"])
    old = time.time() - 3 * 3600
    for name in (f"{uuid.uuid4()}.zip", ".tmp-abc-x.zip"):
        (root / name).write_bytes(b"PK")
        os.utime(root / name, (old, old))
    fresh = root / f"{uuid.uuid4()}.zip"
    fresh.write_bytes(b"PK")  # perhaps a run's upload waiting for its commit
    os.utime(root / f"{record['exportId']}.zip", (old, old))
    assert privacy.sweep_exports(utcnow(), app.config) == 2
    assert stored_files(app) == sorted([fresh.name, f"{record['exportId']}.zip"])


def test_an_export_no_worker_finished_in_a_day_fails_and_frees_the_account(app, api):
    me = api.as_user(make_user())
    started = start(me)
    assert privacy.sweep_exports(utcnow() + timedelta(days=1, seconds=1), app.config) == 1
    db.session.commit()
    assert ok(me.get(f"{EXPORT_URL}/{started['exportId']}"))["state"] == "failed"
    assert start(me)["state"] == "queued"


def test_account_deletion_removes_the_exports_and_their_files(app, api):
    me = api.as_user(make_user())
    record = export_ready(app, me)
    assert stored_files(app)
    ok(me.delete("/api/account"))
    assert db.session.query(AccountExport).count() == 0
    assert stored_files(app) == []
    assert record["exportId"]


# --- the mail -------------------------------------------------------------------------------


def test_the_mail_links_to_the_exports_page_on_the_website(app, api):
    ada = make_user(is_email_confirmed=True)
    record = export_ready(app, api.as_user(ada))
    (mail,) = [each for each in outbox(app) if each.to == ada.email]
    assert mail.subject == "Your Location Notes data export is ready"
    base = app.config["PUBLIC_BASE_URL"].rstrip("/")
    assert f"{base}/en/account/export/{record['exportId']}\n" in mail.text
    assert "/download" not in mail.text
    assert "api/" not in mail.text


def test_the_mail_is_in_the_language_of_the_mail_settings(app, api):
    ada = make_user(is_email_confirmed=True)
    me = api.as_user(ada)
    ok(me.put("/api/notifications/settings", json={"language": "de"}))
    record = export_ready(app, me)
    (mail,) = [each for each in outbox(app) if each.to == ada.email]
    assert f"/de/account/export/{record['exportId']}" in mail.text
    assert mail.subject == "Dein Export deiner Location-Notes-Daten ist fertig"


def test_no_mail_goes_to_an_unconfirmed_address(app, api):
    ada = make_user(is_email_confirmed=False)
    export_ready(app, api.as_user(ada))
    assert [each for each in outbox(app) if each.to == ada.email] == []


# --- runs that fail or die --------------------------------------------------------------------


class WorkerKilled(BaseException):
    """Stands for SIGKILL: no handler of the worker sees it."""


def test_a_worker_killed_mid_export_leaves_no_file_and_the_next_run_makes_it(app, api, monkeypatch):
    from app.services.privacy import exports

    real = exports.write_archive

    def dies(target, *args, **kwargs):
        target.write(b"PK\x03\x04 half a zip")
        raise WorkerKilled

    monkeypatch.setattr(exports, "write_archive", dies)
    me = api.as_user(make_user())
    started = start(me)
    with pytest.raises(WorkerKilled):
        run_jobs(app)
    assert ok(me.get(f"{EXPORT_URL}/{started['exportId']}"))["state"] == "running"
    assert_problem(me.get(f"{EXPORT_URL}/{started['exportId']}/download"), 409)
    assert stored_files(app) == []
    monkeypatch.setattr(exports, "write_archive", real)
    assert run_jobs(app) == 0  # the dead worker's lease still holds
    later = utcnow() + timedelta(minutes=31)
    assert run_jobs(app, clock=lambda: later) == 2  # the export, then its mail
    record = ok(me.get(f"{EXPORT_URL}/{started['exportId']}"))
    assert record["state"] == "done"
    assert open_zip(download(me, record)).testzip() is None


def test_a_failed_run_is_tried_again(app, api, monkeypatch):
    from app.services.privacy import exports

    real, calls = exports.write_archive, []

    def fails_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise OSError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(exports, "write_archive", fails_once)
    me = api.as_user(make_user())
    started = start(me)
    assert run_jobs(app) == 1
    assert export_row(started["exportId"]).state is ExportState.RUNNING
    later = utcnow() + timedelta(minutes=5)
    run_jobs(app, clock=lambda: later)
    assert ok(me.get(f"{EXPORT_URL}/{started['exportId']}"))["state"] == "done"


def test_an_export_whose_every_try_fails_is_failed_and_another_may_be_asked(app, api, monkeypatch):
    from app.services.privacy import exports

    def always_fails(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(exports, "write_archive", always_fails)
    me = api.as_user(make_user())
    started = start(me)
    moment = utcnow()
    for hours in range(exports.BUILD_TRIES):
        at = moment + timedelta(hours=hours)
        assert run_jobs(app, clock=lambda at=at: at) == 1
    record = ok(me.get(f"{EXPORT_URL}/{started['exportId']}"))
    assert record["state"] == "failed"
    assert_problem(
        download(me, record | {"downloadUrl": f"{EXPORT_URL}/{record['exportId']}/download"}), 409
    )
    assert stored_files(app) == []
    assert start(me)["state"] == "queued"


def test_a_download_streams_the_stored_file(app, api):
    me = api.as_user(make_user())
    record = export_ready(app, me)
    stored = (Path(app.config["EXPORT_ROOT"]) / f"{record['exportId']}.zip").read_bytes()
    assert download(me, record).data == stored
    assert io.BytesIO(stored).read(2) == b"PK"


def test_the_factory_installs_the_jobs_and_the_sweep(app):
    from app.platform.jobs import job_kinds
    from app.platform.jobs.kinds import job_clean_ups

    assert {"privacy.export", "privacy.export_ready_mail"} <= set(job_kinds(app).names)
    assert privacy.sweep_exports in job_clean_ups(app)
