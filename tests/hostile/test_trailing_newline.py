"""A pattern checks the whole value: a final newline is not part of a user name, a team
or group name, a language tag or a ticket number. (Python's `$` also matches before a
final newline, and marshmallow's Regexp matches from the start only.)"""

from __future__ import annotations

import pytest

from tests.conftest import assert_problem
from tests.factories import make_user


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (
            "/api/auth/register",
            {"email": "nl@example.com", "userName": "ada_walks\n", "password": "Str0ng-pass!"},
            "userName",
        ),
        ("/api/teams", {"name": "Night walkers\n"}, "name"),
        ("/api/trackables/groups", {"name": "Summer hike\n", "trackableCount": 1}, "name"),
        ("/api/notes/mine", {"title": "Lighthouse", "contentLanguage": "en\n"}, "contentLanguage"),
        ("/api/compliance/errors", {"ticketNumber": "ERR-7K3M9Q2T\n"}, "ticketNumber"),
    ],
)
def test_a_final_newline_is_refused(app, api, path, body, field):
    user = make_user()
    caller = api if path == "/api/auth/register" else api.as_user(user)
    problem = assert_problem(caller.post(path, json=body), 400, code="validation_failed")
    assert field in problem["errors"]
