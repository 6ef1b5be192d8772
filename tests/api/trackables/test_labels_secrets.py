"""Printing labels keeps no secret: after trackables are made and printed through
the API (and refused prints with right, rotated and made-up codes, as the owner, a
stranger and nobody), no secret code or QR token, in any letter case, is in any column of
any table, in any log record (SQL with its parameters included, as plain and JSON lines),
in the access log (the project's format, every atom, and JSON records) or in a refusal.
The PDF is the one place they are: that is checked too, so the crawl is known to look
for the right strings."""

from __future__ import annotations

import logging
import runpy
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Base
from app.models.ratelimit import RateLimitCounter
from app.platform.logs import JsonFormatter
from app.services.trackables.labels.label_sheets import LAYOUTS
from tests.api.trackables.test_secrets_never_shown import (
    GUNICORN_CONF,
    WIDE_ACCESS_FORMAT,
    Exchange,
    access_log_lines,
    browser,
    leaks,
    shown,
)
from tests.conftest import ApiClient
from tests.factories import count_guess_misses, make_user
from tests.labels_pdf import read_sheets

LABELS = "/api/trackables/labels"
OWN_SECRET = "Kestrel-Vault_73"
MADE_UP = ("LN7777777Z", "Heron-Plover-99", "q" * 100)


@pytest.fixture
def app_overrides():
    # Rate limits counted in the database (the production default), so the crawl reads
    # their rows too; the guess budget out of the way of the refused prints.
    return {
        "PUBLIC_BASE_URL": "https://notes.example.org",
        "RATELIMIT_STORAGE_URI": "database://",
        "SECRET_GUESS_LIMIT": 1000,
        "SECRET_GUESS_ACCOUNT_LIMIT": 1000,
    }


@dataclass
class Printing:
    owner: ApiClient
    stranger: ApiClient
    anonymous: ApiClient
    secrets: set[str] = field(default_factory=set)  # every secret and token ever issued
    current: list[dict[str, str]] = field(default_factory=list)  # the create answers' items
    exchanges: list[Exchange] = field(default_factory=list)
    pdfs: list[bytes] = field(default_factory=list)

    def call(self, label: str, client: ApiClient, payload: dict[str, Any]) -> Any:
        response = client.post(LABELS, json=payload)
        self.exchanges.append(Exchange(label, response))
        return response

    def issued(self, response: Any) -> None:
        assert response.status_code in (200, 201), response.get_data(as_text=True)
        for item in response.get_json().get("items", [response.get_json()]):
            self.secrets.update((item["secretCode"], item["scanUrl"].rsplit("/", 1)[1]))
            self.current = [c for c in self.current if c["trackableId"] != item["trackableId"]]
            self.current.append(item)


def label(item: dict[str, str], by_url: bool = False) -> dict[str, str]:
    token = item["scanUrl"].rsplit("/", 1)[1]
    codes = {"scanUrl": item["scanUrl"]} if by_url else {"qrToken": token}
    return {"trackableId": item["trackableId"], "secretCode": item["secretCode"], **codes}


def print_everything(api: ApiClient) -> Printing:
    """Make trackables through the API, rotate one, print them, and try to print them
    wrongly in every way."""
    run = Printing(browser(api, make_user("olga")), browser(api, make_user("sam")), browser(api))
    run.issued(
        run.owner.post(
            "/api/trackables",
            json={"name": "Kite", "secretCode": OWN_SECRET, "activateImmediately": True},
        )
    )
    run.issued(run.owner.post("/api/trackables/groups", json={"name": "Dune", "trackableCount": 3}))
    leaked = run.current[1]
    run.issued(run.owner.post(f"/api/trackables/{leaked['trackableId']}/secret/rotate", json={}))

    items = [label(item, by_url=n % 2 == 1) for n, item in enumerate(run.current)]
    printed = run.call(
        "print", run.owner, {"layout": "avery-l7160", "text": "Shelf 4", "items": items}
    )
    assert printed.status_code == 200, printed.get_data(as_text=True)
    run.pdfs.append(printed.data)
    refusals = [
        ("rotated codes", run.owner, [label(leaked)]),
        ("made-up secret", run.owner, [{**items[0], "secretCode": MADE_UP[0]}]),
        ("made-up own secret", run.owner, [{**items[0], "secretCode": MADE_UP[1]}]),
        ("made-up token", run.owner, [{**items[0], "qrToken": MADE_UP[2]}]),
        ("stranger", run.stranger, items),
        ("anonymous", run.anonymous, items),
        ("both token forms", run.owner, [{**items[0], "scanUrl": leaked["scanUrl"]}]),
    ]
    for name, client, refused in refusals:
        response = run.call(name, client, {"layout": "avery-5160", "items": refused})
        assert response.status_code in (400, 401, 403, 404), (name, response.status_code)
    return run


def everything_stored() -> str:
    """Every value of every column of every table, as text."""
    values = []
    for table in Base.metadata.sorted_tables:
        for row in db.session.execute(select(table)).all():
            for value in row:
                if isinstance(value, bytes | memoryview):
                    value = bytes(value).decode("latin-1")
                values.append(f"{table.name}: {value}")
    return "\n".join(values)


@pytest.fixture
def printing(api) -> Printing:
    return print_everything(api)


def test_the_crawl_looks_for_what_the_pdf_carries(printing):
    assert len(printing.secrets) == 2 * 5  # 4 trackables, one of them rotated
    sheet = read_sheets(printing.pdfs[0], LAYOUTS["avery-l7160"])
    assert set(sheet.codes.values()) == {item["scanUrl"] for item in printing.current}
    for item in printing.current:
        assert item["secretCode"] in sheet.texts[0]


def test_no_table_holds_a_code_after_printing(printing):
    stored = everything_stored()
    assert leaks(stored, printing.secrets | set(MADE_UP)) == []
    # The crawl sees the rows printing touched: the public codes, the code hashes, the
    # rate limit's counter and the spent guesses of the refused prints.
    for item in printing.current:
        assert item["publicCode"] in stored
    assert "trackable_codes: " in stored
    hits = db.session.scalars(select(RateLimitCounter.hits)).all()
    assert hits == [len(printing.exchanges)]  # the only limited route here, by address
    assert count_guess_misses() == 4  # rotated, made-up secret, own secret and token


def test_refusals_do_not_echo_a_code(printing):
    refused = [e for e in printing.exchanges if e.response.status_code >= 400]
    assert len(refused) == 7
    for exchange in refused:
        assert exchange.response.mimetype == "application/problem+json", exchange.label
        assert leaks(shown(exchange.response), printing.secrets | set(MADE_UP)) == [], (
            exchange.label
        )


def test_no_log_record_holds_a_code(api, caplog):
    caplog.set_level(logging.DEBUG)
    # Every logger that sets its own level (app at LOG_LEVEL, sqlalchemy at WARNING) too:
    # the SQL with its parameters shows what reaches the database.
    for name, logger in list(logging.root.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger) and logger.level != logging.NOTSET:
            caplog.set_level(logging.DEBUG, logger=name)
    printing = print_everything(api)
    assert any("trackable_codes" in record.getMessage() for record in caplog.records)
    plain = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    for record in caplog.records:
        lines = (record.getMessage(), str(record.args), plain.format(record))
        lines += (JsonFormatter().format(record),)
        assert leaks("\n".join(lines), printing.secrets | set(MADE_UP)) == [], record.name


@pytest.mark.parametrize("access_format", ["project", "wide", "json"])
def test_no_access_log_line_holds_a_code(printing, tmp_path, monkeypatch, access_format):
    if access_format == "json":
        monkeypatch.setenv("LOG_FORMAT", "json")
        access_format = "unused"
    elif access_format == "project":
        access_format = runpy.run_path(str(GUNICORN_CONF))["access_log_format"]
    else:
        access_format = WIDE_ACCESS_FORMAT
    text = access_log_lines(printing.exchanges, access_format, tmp_path / "access.log")
    assert len(text.splitlines()) == len(printing.exchanges)
    assert "/api/trackables/labels" in text
    assert leaks(text, printing.secrets | set(MADE_UP)) == []
