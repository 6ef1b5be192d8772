"""Helpers of the website page tests: open a trackable as a finder does (its QR URL),
read a page's forms and errors, post a form with its CSRF token."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

import pytest

from app.models.trackable import Trackable, TrackableVisibility
from app.models.user import User
from tests.factories import codes_of, make_trackable, make_user

TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
MUTATION = re.compile(r'name="clientMutationId" value="([^"]+)"')
ERROR = re.compile(r'<p class="error"[^>]*>([^<]*)</p>')
NOTICE = re.compile(r'<p class="notice"[^>]*>([^<]*)</p>')


def text_of(response: Any) -> str:
    return response.get_data(as_text=True)


def errors_of(response: Any) -> list[str]:
    return [html.unescape(message) for message in ERROR.findall(text_of(response))]


def notices_of(response: Any) -> list[str]:
    return [html.unescape(message) for message in NOTICE.findall(text_of(response))]


def form_fields(response: Any) -> dict[str, str]:
    """The CSRF token and a fresh clientMutationId from a rendered landing."""
    page = text_of(response)
    token = TOKEN.search(page)
    assert token is not None, page
    mutation = MUTATION.search(page)
    return {
        "csrf_token": token.group(1),
        **({"clientMutationId": mutation.group(1)} if mutation else {}),
    }


@dataclass
class Finder:
    """A browser that scanned a trackable's QR code: it holds the access session."""

    api: Any
    trackable: Trackable
    lang: str = "en"

    @property
    def landing(self) -> str:
        return f"/{self.lang}/trackables/active/{self.trackable.id}"

    @property
    def public(self) -> str:
        return f"/{self.lang}/trackables/{self.trackable.public_code}"

    def scan(self) -> Any:
        response = self.api.get(f"/trackable/{codes_of(self.trackable)[1]}")
        assert response.status_code == 302, text_of(response)
        return response

    def post(self, form: str, data: dict[str, str], **kwargs: Any) -> Any:
        fields = form_fields(self.api.get(self.landing))
        return self.api.post(f"{self.landing}/{form}", data={**fields, **data}, **kwargs)


@pytest.fixture
def owner(app) -> User:
    return make_user("olga", display_name="Olga O.")


@pytest.fixture
def trackable(owner) -> Trackable:
    return make_trackable(
        owner,
        name="Blue bug",
        description="A blue toy bug travelling from lake to lake.",
        status_message="Heading north",
        visibility=TrackableVisibility.ALWAYS_VISIBLE,
    )


@pytest.fixture
def finder(api, trackable) -> Finder:
    found = Finder(api, trackable)
    found.scan()
    return found
