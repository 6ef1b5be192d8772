"""Website forms in tests: the code box posted as a browser posts it, with the CSRF token
of a page the same client opened first."""

from __future__ import annotations

import re
from typing import Any

TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_token(api: Any, page: str = "/trackable", **kwargs: Any) -> str:
    """The token of `page`'s forms for this client (its pages cookie is set on the way)."""
    response = api.get(page, **kwargs)
    found = TOKEN.search(response.get_data(as_text=True))
    assert found is not None, response.get_data(as_text=True)
    return found.group(1)


def post_code(api: Any, code: str | None, **kwargs: Any) -> Any:
    """Type `code` into the code box and send it (None: the field left out)."""
    token = csrf_token(api, **{k: v for k, v in kwargs.items() if k == "environ_base"})
    data = {"csrf_token": token} if code is None else {"csrf_token": token, "code": code}
    return api.post("/trackable", data=data, **kwargs)
