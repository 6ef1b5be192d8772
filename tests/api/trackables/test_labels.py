"""POST /api/trackables/labels (docs/contract/trackables.md, Printable labels): PDF
sheets of labels, each QR code read back from the rendered page to exactly its item's
scan URL; page counts and paper sizes per layout; who may print; every item's codes
checked against their stored hashes, any refusal refusing the whole request without a
PDF and without echoing a code; the guess budget and the rate limit."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Base
from app.models.team import TeamMembership
from app.models.trackable import Trackable, TrackableVisibility
from app.services.trackables.labels.label_sheets import LAYOUTS
from tests.conftest import assert_problem
from tests.factories import (
    codes_of,
    count_guess_misses,
    make_team,
    make_trackable,
    make_user,
)
from tests.labels_pdf import page_count, read_sheets

LABELS = "/api/trackables/labels"
BASE = "https://notes.example.org"
A4, LETTER = (595.28, 841.89), (612.0, 792.0)


@pytest.fixture
def app_overrides():
    return {"PUBLIC_BASE_URL": BASE}


@pytest.fixture
def owner(app):
    return make_user("olga")


def item(trackable: Trackable, **fields: Any) -> dict[str, Any]:
    """A label of `trackable` with the codes it was made with."""
    secret, token = codes_of(trackable)
    return {"trackableId": str(trackable.id), "secretCode": secret, "qrToken": token, **fields}


def scan_url(trackable: Trackable) -> str:
    return f"{BASE}/trackable/{codes_of(trackable)[1]}"


def body(items: list[dict[str, Any]], layout: str = "avery-l7160", **fields: Any) -> dict:
    return {"layout": layout, "items": items, **fields}


def print_labels(api: Any, user: Any, payload: dict) -> Any:
    return api.as_user(user).post(LABELS, json=payload)


def assert_pdf(response: Any) -> bytes:
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "application/pdf"
    assert response.data.startswith(b"%PDF-")
    return response.data


def rounded(size: tuple[float, float]) -> tuple[float, float]:
    return round(size[0], 2), round(size[1], 2)


# --- what is printed ---------------------------------------------------------------------


@pytest.mark.parametrize("layout_name", list(LAYOUTS))
def test_every_qr_code_reads_back_as_its_items_scan_url(api, owner, layout_name):
    layout = LAYOUTS[layout_name]
    made = [make_trackable(owner) for _ in range(layout.per_page + 3)]
    payload = body([item(t, text=f"Bug {n}") for n, t in enumerate(made)], layout_name)

    sheet = read_sheets(assert_pdf(print_labels(api, owner, payload)), layout)

    expected = {divmod(n, layout.per_page): scan_url(t) for n, t in enumerate(made)}
    assert sheet.codes == expected
    assert sheet.decoded == len(made)
    paper = A4 if layout.paper == "a4" else LETTER
    assert [rounded(size) for size in sheet.page_sizes] == [paper, paper]


def test_a_group_of_100_made_through_the_api_prints_on_five_a4_sheets(api, owner):
    created = api.as_user(owner).post(
        "/api/trackables/groups", json={"name": "Summer Hike", "trackableCount": 100}
    )
    assert created.status_code == 201, created.get_data(as_text=True)
    issued = created.get_json()["items"]
    items = [
        {"trackableId": i["trackableId"], "secretCode": i["secretCode"], "scanUrl": i["scanUrl"]}
        for i in issued
    ]

    pdf = assert_pdf(print_labels(api, owner, body(items, text="Summer hike 2026")))

    layout = LAYOUTS["avery-l7160"]
    sheet = read_sheets(pdf, layout)
    assert len(sheet.page_sizes) == 5  # 21 labels a sheet
    assert sheet.codes == {divmod(n, 21): i["scanUrl"] for n, i in enumerate(issued)}
    text = "\n".join(sheet.texts)
    for issued_item in issued:
        assert issued_item["publicCode"] in text
        assert issued_item["secretCode"] in text
    assert text.count("Summer hike 2026") == 100


def test_a_label_shows_the_public_code_the_secret_and_its_own_text(api, owner):
    first, second = make_trackable(owner), make_trackable(owner)
    payload = body(
        [item(first), item(second, text="Second's own line")], "avery-5163", text="Shared"
    )

    (text,) = read_sheets(
        assert_pdf(print_labels(api, owner, payload)), LAYOUTS["avery-5163"]
    ).texts

    for trackable in (first, second):
        assert trackable.public_code in text
        assert codes_of(trackable)[0] in text
    assert text.count("Shared") == 1
    assert "Second's own line" in text


ENGLISH = ("Public code", "Secret code", "Scan the QR code")
GERMAN = ("Öffentlicher Code", "Geheimer Code", "QR-Code scannen")


@pytest.mark.parametrize(
    ("language", "captions", "layout_name"),
    [
        (None, ENGLISH, "avery-l7160"),
        ("en", ENGLISH, "avery-5160"),
        *(("de", GERMAN, name) for name in LAYOUTS),  # the longer words, on every sheet
    ],
)
def test_each_code_on_a_label_says_which_code_it_is(api, owner, language, captions, layout_name):
    made = [make_trackable(owner), make_trackable(owner)]
    chosen = {} if language is None else {"language": language}
    payload = body([item(t, text="Take me along") for t in made], layout_name, **chosen)

    layout = LAYOUTS[layout_name]
    sheet = read_sheets(assert_pdf(print_labels(api, owner, payload)), layout)

    (text,) = sheet.texts
    for caption in captions:
        assert text.count(caption) == len(made), (caption, text)
    public, secret = captions[:2]
    for trackable in made:  # each caption just before its code
        at = text.index(trackable.public_code)
        assert text.rindex(public, 0, at) > text.rfind(secret, 0, at)
        secret_at = text.index(codes_of(trackable)[0])
        assert text.rindex(secret, 0, secret_at) > at
    assert sheet.codes == {(0, n): scan_url(t) for n, t in enumerate(made)}  # still read back


def test_a_scan_url_sent_instead_of_the_token_prints_the_same_code(api, owner):
    trackable = make_trackable(owner)
    secret, token = codes_of(trackable)
    sent = {"trackableId": str(trackable.id), "secretCode": secret}
    by_url = {**sent, "scanUrl": f"https://old-host.example/trackable/{token}"}

    sheet = read_sheets(
        assert_pdf(print_labels(api, owner, body([by_url]))), LAYOUTS["avery-l7160"]
    )

    assert sheet.codes == {(0, 0): scan_url(trackable)}  # under this service's base URL


def test_a_system_secret_typed_loosely_prints_in_its_normal_form(api, owner):
    trackable = make_trackable(owner, secret_code="LN4K7Q2MZX")
    loose = item(trackable, secretCode=" ln 4k7q-2mzx ")

    (text,) = read_sheets(
        assert_pdf(print_labels(api, owner, body([loose]))), LAYOUTS["avery-l7160"]
    ).texts

    assert "LN4K7Q2MZX" in text


def test_an_own_secret_prints_as_its_creator_wrote_it_even_when_sent_in_another_case(api, owner):
    created = api.as_user(owner).post(
        "/api/trackables", json={"name": "Kite", "secretCode": "Kestrel-Vault_73"}
    )
    issued = created.get_json()["items"][0]
    label = {
        "trackableId": issued["trackableId"],
        "secretCode": "Kestrel-Vault_73",
        "scanUrl": issued["scanUrl"],
    }
    (text,) = read_sheets(
        assert_pdf(print_labels(api, owner, body([label], "avery-l7165"))), LAYOUTS["avery-l7165"]
    ).texts
    assert "Kestrel-Vault_73" in text

    shouted = {**label, "secretCode": "KESTREL-VAULT_73"}  # compared ignoring case
    assert_pdf(print_labels(api, owner, body([shouted])))


def test_a_long_text_is_cut_to_fit_with_an_ellipsis(api, owner):
    trackable = make_trackable(owner)
    long_text = " ".join(["Wanderlust"] * 9)  # 98 characters

    (text,) = read_sheets(
        assert_pdf(print_labels(api, owner, body([item(trackable)], text=long_text))),
        LAYOUTS["avery-l7160"],
    ).texts

    assert "Wanderlust" in text
    assert "..." in text
    assert long_text not in " ".join(text.split())


def test_text_in_a_script_the_built_in_fonts_lack_prints_as_question_marks(api, owner):
    trackable = make_trackable(owner)

    (text,) = read_sheets(
        assert_pdf(print_labels(api, owner, body([item(trackable)], text="Grüße 漢字"))),
        LAYOUTS["avery-l7160"],
    ).texts

    assert "Grüße ??" in text


# --- sheets and pages --------------------------------------------------------------------


@pytest.mark.parametrize("layout_name", list(LAYOUTS))
@pytest.mark.parametrize("extra", [-1, 0, 1])
def test_pages_hold_a_sheet_of_labels_each(api, owner, layout_name, extra):
    layout = LAYOUTS[layout_name]
    trackable = make_trackable(owner)  # one item may be printed many times
    count = 2 * layout.per_page + extra

    pdf = assert_pdf(print_labels(api, owner, body([item(trackable)] * count, layout_name)))

    assert page_count(pdf) == (3 if extra > 0 else 2)


def test_a_partly_used_sheet_is_filled_from_the_first_free_position(api, owner):
    layout = LAYOUTS["avery-5160"]  # 30 a sheet
    made = [make_trackable(owner) for _ in range(3)]
    payload = body([item(t) for t in made], "avery-5160", skipLabels=28)

    sheet = read_sheets(assert_pdf(print_labels(api, owner, payload)), layout)

    assert sheet.codes == {
        (0, 28): scan_url(made[0]),
        (0, 29): scan_url(made[1]),
        (1, 0): scan_url(made[2]),
    }


@pytest.mark.parametrize(
    ("layout_name", "paper"), [("avery-l7160", "a4"), ("avery-5160", "letter")]
)
def test_the_layouts_own_paper_may_be_named(api, owner, layout_name, paper):
    trackable = make_trackable(owner)
    pdf = assert_pdf(print_labels(api, owner, body([item(trackable)], layout_name, paper=paper)))
    expected = A4 if paper == "a4" else LETTER
    assert [rounded(size) for size in read_sheets(pdf, LAYOUTS[layout_name]).page_sizes] == [
        expected
    ]


@pytest.mark.parametrize(
    ("fields", "error_field"),
    [
        ({"layout": "avery-l7160", "paper": "letter"}, "paper"),
        ({"layout": "avery-5160", "paper": "a4"}, "paper"),
        ({"layout": "avery-l7160", "skipLabels": 21}, "skipLabels"),
        ({"layout": "avery-l7160", "text": "x" * 101}, "text"),
        ({"layout": "avery-l7160", "text": "two\nlines"}, "text"),
        ({"layout": "dymo-99012"}, "layout"),
        ({"layout": "avery-l7160", "paper": "a3"}, "paper"),
        ({"layout": "avery-l7160", "language": "fr"}, "language"),
    ],
)
def test_a_sheet_that_does_not_fit_is_refused(api, owner, fields, error_field):
    trackable = make_trackable(owner)
    response = print_labels(api, owner, {"items": [item(trackable)], **fields})
    problem = assert_problem(response, 400, code="validation_failed")
    assert error_field in problem["errors"]


@pytest.mark.parametrize(
    ("change", "error_field"),
    [
        (lambda i: {k: v for k, v in i.items() if k != "qrToken"}, "items.0.qrToken"),
        (lambda i: {**i, "scanUrl": "https://x.example/trackable/abc"}, "items.0.qrToken"),
        (lambda i: {**i, "secretCode": "  "}, "items.0.secretCode"),
        (lambda i: {**i, "trackableId": "not-a-guid"}, "items.0.trackableId"),
        (lambda i: {**i, "publicCode": "LN-AAAAAA"}, "items.0.publicCode"),
    ],
)
def test_an_item_without_its_codes_is_refused(api, owner, change, error_field):
    trackable = make_trackable(owner)
    response = print_labels(api, owner, body([change(item(trackable))]))
    problem = assert_problem(response, 400, code="validation_failed")
    assert error_field in problem["errors"]


def test_at_most_200_labels_a_request(api, owner):
    trackable = make_trackable(owner)
    assert_pdf(print_labels(api, owner, body([item(trackable)] * 200)))
    response = print_labels(api, owner, body([item(trackable)] * 201))
    assert "items" in assert_problem(response, 400, code="validation_failed")["errors"]
    assert "items" in assert_problem(print_labels(api, owner, body([])), 400)["errors"]


def test_the_answer_is_an_attachment_never_cached(api, owner):
    response = print_labels(api, owner, body([item(make_trackable(owner))]))
    assert_pdf(response)
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["Content-Disposition"] == 'attachment; filename="trackable-labels.pdf"'


# --- who may print -----------------------------------------------------------------------


def test_anonymous_callers_are_refused(api, owner):
    response = api.post(LABELS, json=body([item(make_trackable(owner))]))
    assert_problem(response, 401)


def test_a_stranger_holding_the_codes_may_not_print_them(api, owner):
    trackable = make_trackable(owner)  # visible to everyone
    response = print_labels(api, make_user("sam"), body([item(trackable)]))
    problem = assert_problem(response, 403, code="trackable_request_rejected")
    assert problem["refusedItems"] == [
        {"index": 0, "code": "trackable_request_rejected", "fields": []}
    ]


def test_a_hidden_or_unknown_trackable_is_not_found(api, owner):
    hidden = make_trackable(owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    unknown = {**item(hidden), "trackableId": str(uuid.uuid4())}
    stranger = make_user("sam")
    response = print_labels(api, stranger, body([item(hidden), unknown]))
    problem = assert_problem(response, 404, code="trackable_not_found")
    assert [i["index"] for i in problem["refusedItems"]] == [0, 1]


def test_team_admins_and_the_activator_print_a_team_trackable_plain_members_do_not(api, owner):
    admin, member = make_user("tara"), make_user("bob")
    team = make_team(admin, members=(owner, member))
    trackable = make_trackable(owner, team_id=team.id)
    payload = body([item(trackable)])

    assert_pdf(print_labels(api, owner, payload))
    assert_pdf(print_labels(api, admin, payload))
    assert_problem(print_labels(api, member, payload), 403, code="trackable_request_rejected")

    # The activator who left the team no longer manages it.
    db.session.query(TeamMembership).filter_by(user_id=owner.id).delete()
    db.session.commit()
    assert_problem(print_labels(api, owner, payload), 403, code="trackable_request_rejected")


def test_the_creator_prints_an_unactivated_trackable(api, owner):
    trackable = make_trackable(None, created_by_user_id=owner.id)
    assert_pdf(print_labels(api, owner, body([item(trackable)])))
    response = print_labels(api, make_user("sam"), body([item(trackable)]))
    assert_problem(response, 404, code="trackable_not_found")


# --- the codes ---------------------------------------------------------------------------


def test_a_wrong_secret_refuses_the_whole_request_naming_its_index(api, owner):
    good, bad = make_trackable(owner), make_trackable(owner)
    wrong = item(bad, secretCode="LN7777777Z")

    response = print_labels(api, owner, body([item(good), wrong, item(good)]))

    problem = assert_problem(response, 403, code="trackable_access_code_invalid")
    assert problem["refusedItems"] == [
        {"index": 1, "code": "trackable_access_code_invalid", "fields": ["secretCode"]}
    ]
    assert problem["detail"] == (
        "Item 1: the code does not belong to this trackable. Nothing was printed."
    )
    text = response.get_data(as_text=True)
    for code in (*codes_of(good), *codes_of(bad), "LN7777777Z"):
        assert code.casefold() not in text.casefold()
    assert count_guess_misses() == 1  # one per refused request, kept after the refusal


@pytest.mark.parametrize("field", ["qrToken", "scanUrl"])
def test_a_wrong_qr_token_is_refused(api, owner, field):
    trackable, other = make_trackable(owner), make_trackable(owner)
    label = {k: v for k, v in item(trackable).items() if k != "qrToken"}
    other_token = codes_of(other)[1]
    label[field] = other_token if field == "qrToken" else f"{BASE}/trackable/{other_token}"

    response = print_labels(api, owner, body([label]))

    problem = assert_problem(response, 403, code="trackable_access_code_invalid")
    assert problem["refusedItems"][0]["fields"] == [field]


@pytest.mark.parametrize(
    "secret_of",
    [
        pytest.param(lambda t, other: t.public_code, id="its public code"),
        pytest.param(lambda t, other: codes_of(t)[1], id="its QR token"),
        pytest.param(lambda t, other: codes_of(other)[0], id="another trackable's secret"),
    ],
)
def test_only_the_trackables_own_secret_code_counts(api, owner, secret_of):
    trackable, other = make_trackable(owner), make_trackable(owner)
    response = print_labels(
        api, owner, body([item(trackable, secretCode=secret_of(trackable, other))])
    )
    problem = assert_problem(response, 403, code="trackable_access_code_invalid")
    assert problem["refusedItems"][0]["fields"] == ["secretCode"]


def test_refusals_of_every_kind_are_listed_and_the_hidden_one_decides_the_status(api, owner):
    stranger = make_user("sam")
    own = make_trackable(stranger)
    others = make_trackable(owner)
    items = [
        item(own),
        item(own, secretCode="LN7777777Z", qrToken="x" * 100),
        item(others),
        {**item(own), "trackableId": str(uuid.uuid4())},
    ]

    problem = assert_problem(
        print_labels(api, stranger, body(items)), 404, code="trackable_not_found"
    )

    assert problem["refusedItems"] == [
        {"index": 1, "code": "trackable_access_code_invalid", "fields": ["secretCode", "qrToken"]},
        {"index": 2, "code": "trackable_request_rejected", "fields": []},
        {"index": 3, "code": "trackable_not_found", "fields": []},
    ]
    assert problem["detail"].startswith("Item 3: no trackable you can see has this id; item 2:")


def test_codes_replaced_by_a_rotation_no_longer_print(api, owner):
    trackable = make_trackable(owner)
    rotated = api.as_user(owner).post(f"/api/trackables/{trackable.id}/secret/rotate", json={})
    fresh = rotated.get_json()

    old = print_labels(api, owner, body([item(trackable)]))
    assert_problem(old, 403, code="trackable_access_code_invalid")
    new = {
        "trackableId": str(trackable.id),
        "secretCode": fresh["secretCode"],
        "scanUrl": fresh["scanUrl"],
    }
    pdf = assert_pdf(print_labels(api, owner, body([new])))
    assert read_sheets(pdf, LAYOUTS["avery-l7160"]).codes == {(0, 0): fresh["scanUrl"]}


def test_over_the_guess_budget_even_right_codes_get_429(app, api, owner):
    app.config.update(SECRET_GUESS_LIMIT=2, SECRET_GUESS_ACCOUNT_LIMIT=2)
    trackable = make_trackable(owner)
    wrong = body([item(trackable, secretCode="LN7777777Z")])
    for _ in range(2):
        assert_problem(print_labels(api, owner, wrong), 403)

    response = print_labels(api, owner, body([item(trackable)]))

    assert_problem(response, 429, code="secret_guess_limit_reached")
    assert int(response.headers["Retry-After"]) > 0
    assert count_guess_misses() == 2


def test_label_sheets_are_rate_limited_per_address(app, api, owner):
    app.config["RATE_LIMIT_TRACKABLE_LABELS"] = "2 per hour"
    payload = body([item(make_trackable(owner))])
    for _ in range(2):
        assert_pdf(print_labels(api, owner, payload))
    response = print_labels(api, owner, payload)
    assert_problem(response, 429, code="rate_limited")
    assert "Retry-After" in response.headers


def test_the_label_limit_is_published_in_the_status(app, api):
    app.config["RATE_LIMIT_TRACKABLE_LABELS"] = "7 per hour"
    limits = api.get("/api/system/status").get_json()["limits"]
    assert limits["rateLimits"]["trackableLabels"] == "7 per hour"


def row_counts() -> dict[str, int]:
    return {
        table.name: db.session.scalar(select(func.count()).select_from(table)) or 0
        for table in Base.metadata.sorted_tables
    }


def test_printing_writes_nothing(api, owner):
    trackable = make_trackable(owner)
    updated = trackable.updated_utc
    before = row_counts()

    assert_pdf(print_labels(api, owner, body([item(trackable)])))

    db.session.expire_all()
    assert row_counts() == before
    assert db.session.get(Trackable, trackable.id).updated_utc == updated
