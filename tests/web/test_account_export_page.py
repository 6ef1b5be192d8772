"""The data export's page on the website, where the "ready" mail links: behind
the website's sign-in (to sign in and back), the export's owner alone sees it and
downloads the ZIP; anyone else gets the 404 page, and a bearer token opens nothing."""

from __future__ import annotations

import io
import uuid
import zipfile
from datetime import timedelta

import pytest

from app.extensions import db
from app.models.base import utcnow
from app.models.privacy import AccountExport
from tests.api.privacy.conftest import export_ready, start
from tests.factories import make_user
from tests.pages import csrf_token
from tests.web.conftest import text_of
from tests.web.test_sign_in import SIGN_IN, sign_in


@pytest.fixture
def ada(app):
    return make_user("ada_pages", is_email_confirmed=True)


@pytest.fixture
def record(app, api, ada):
    return export_ready(app, api.as_user(ada))


def page_of(record, lang: str = "en") -> str:
    return f"/{lang}/account/export/{record['exportId']}"


def test_a_visitor_who_is_not_signed_in_is_sent_to_sign_in_and_back(api, ada, record):
    page = page_of(record)
    for address in (page, f"{page}/download"):
        response = api.get(address)
        assert response.status_code == 303
        assert response.headers["Location"] == f"{SIGN_IN}?next={page}"
    token = csrf_token(api, f"{SIGN_IN}?next={page}")
    signed_in = api.post(
        SIGN_IN,
        data={"csrf_token": token, "email": ada.email, "password": "correct-horse-battery-9"}
        | {"next": page},
    )
    assert signed_in.status_code == 303
    assert signed_in.headers["Location"] == page
    assert "Your export is ready." in text_of(api.get(page))


def test_the_owner_sees_the_page_and_downloads_the_zip(api, ada, record):
    sign_in(api, ada)
    page = api.get(page_of(record))
    assert page.status_code == 200
    assert page.headers["Cache-Control"] == "private, no-store"
    html = text_of(page)
    assert f'href="{page_of(record)}/download"' in html
    assert f'href="/de/account/export/{record["exportId"]}"' in html  # the other language
    response = api.get(f"{page_of(record)}/download")
    assert response.status_code == 200
    assert response.mimetype == "application/zip"
    assert response.headers["Cache-Control"] == "private, no-store"
    assert "README.md" in zipfile.ZipFile(io.BytesIO(response.data)).namelist()


def test_the_page_speaks_the_language_of_its_address(api, ada, record):
    sign_in(api, ada)
    html = text_of(api.get(page_of(record, "de")))
    assert "Dein Export ist fertig." in html
    assert "ZIP-Datei herunterladen" in html


def test_another_signed_in_account_gets_the_404_page(api, record):
    sign_in(api, make_user("kim_pages"))
    for address in (page_of(record), f"{page_of(record)}/download"):
        response = api.get(address)
        assert response.status_code == 404
        assert response.mimetype == "text/html"
        assert record["exportId"] not in text_of(response)


def test_a_bearer_token_opens_nothing_on_the_website(api, ada, record):
    owner = api.as_user(ada)
    for address in (page_of(record), f"{page_of(record)}/download"):
        response = owner.get(address)
        assert response.status_code == 303
        assert response.headers["Location"].startswith(SIGN_IN)


def test_an_export_being_made_says_so_and_its_download_goes_back_to_the_page(app, api, ada):
    started = start(api.as_user(ada))
    sign_in(api, ada)
    assert "Your export is being made." in text_of(api.get(page_of(started)))
    response = api.get(f"{page_of(started)}/download")
    assert response.status_code == 303
    assert response.headers["Location"] == page_of(started)


def test_an_expired_export_says_so(api, ada, record):
    export = db.session.get(AccountExport, uuid.UUID(record["exportId"]))
    export.expires_utc = utcnow() - timedelta(seconds=1)
    db.session.commit()
    sign_in(api, ada)
    assert "download time ran out" in text_of(api.get(page_of(record)))
    response = api.get(f"{page_of(record)}/download")
    assert response.status_code == 303
    assert response.headers["Location"] == page_of(record)


def test_an_unknown_export_is_the_404_page(api, ada):
    sign_in(api, ada)
    assert api.get(f"/en/account/export/{uuid.uuid4()}").status_code == 404


@pytest.mark.parametrize(
    ("size_bytes", "en", "de"),
    [(12_000, "(12 KB)", "(12 KB)"), (1, "(1 KB)", "(1 KB)"), (1_572_864, "(1.5 MB)", "(1,5 MB)")],
)
def test_the_zips_size_is_written_in_the_unit_and_language_of_the_page(
    api, ada, record, size_bytes, en, de
):
    db.session.get(AccountExport, uuid.UUID(record["exportId"])).size_bytes = size_bytes
    db.session.commit()
    sign_in(api, ada)
    assert en in text_of(api.get(page_of(record)))
    assert de in text_of(api.get(page_of(record, "de")))
