"""The pages' style sheet covers what the pages render: every kind of input a form has is
styled (sign-in's email, password and two-factor code as the find form's fields are). The
computed styles, and the bar's one line at a phone's width: test_browser_page_bar.py."""

from __future__ import annotations

import re

from tests.api.identity.helpers import totp
from tests.factories import make_user
from tests.web.conftest import text_of
from tests.web.test_sign_in import sign_in

NOT_TYPED_INTO = {"hidden", "submit", "radio", "checkbox"}


def input_kinds(page: str) -> set[str]:
    """The `type` of every input one types into or picks a file with ("" for none)."""
    kinds = set()
    for tag in re.findall(r"<input\b[^>]*>", page):
        kind = re.search(r'\btype="(\w+)"', tag)
        kinds.add(kind.group(1) if kind else "")
    return kinds - NOT_TYPED_INTO


def test_every_input_of_the_forms_is_styled_by_the_style_sheet(api, finder):
    kim = make_user("kim")
    key = api.as_user(kim).post("/api/auth/manage/2fa", json={}).get_json()["sharedKey"]
    enabled = {"enable": True, "twoFactorCode": totp(key)}
    assert api.as_user(kim).post("/api/auth/manage/2fa", json=enabled).status_code == 200
    pages = [
        text_of(api.get("/en/sign-in")),
        text_of(sign_in(api, kim)),  # asks for the two-factor code
        text_of(api.get(finder.landing)),
        text_of(api.get("/de/")),
    ]
    assert 'name="code"' in pages[1]
    kinds = set().union(*(input_kinds(page) for page in pages))
    assert {"email", "password", "text", "file", "date"} <= kinds
    css = text_of(api.get("/static/pages/pages.css"))
    for kind in kinds:
        selector = "input:not([type])" if kind == "" else f"input[type={kind}]"
        assert selector in css, kind


def test_the_sign_in_fields_are_of_the_kinds_the_sheet_styles(api):
    page = text_of(api.get("/de/sign-in"))
    email = re.search(r'<input[^>]*id="email"[^>]*>', page)
    password = re.search(r'<input[^>]*id="password"[^>]*>', page)
    assert email is not None
    assert password is not None
    assert 'type="email"' in email.group(0)
    assert 'type="password"' in password.group(0)
