"""Where a reviewer opens reported content (services.compliance.references.review_url):
each kind of page by id and by the name a page shows, a comment within its note, and
nothing for a reference that names nothing held."""

from __future__ import annotations

import pytest

from app.models.compliance import PageType
from app.services.compliance.references import review_url
from tests.factories import make_comment, make_note, make_team, make_trackable, make_user


def test_a_note_and_a_comment_within_it(app):
    note = make_note(title="Reported")
    comment = make_comment(note)
    other = make_comment(make_note(title="Elsewhere"))
    assert review_url(PageType.NOTE, f" {note.id} ", "") == f"/api/public/notes/{note.id}"
    assert (
        review_url(PageType.NOTE, str(note.id), str(comment.id))
        == f"/api/public/notes/{note.id}/comments#{comment.id}"
    )
    # A comment of another note, or a reference that is no id, leaves the note's own page.
    assert review_url(PageType.NOTE, str(note.id), str(other.id)) == f"/api/public/notes/{note.id}"
    assert review_url(PageType.NOTE, str(note.id), "title") == f"/api/public/notes/{note.id}"


def test_a_trackable_by_id_or_by_its_public_code_in_any_case(app):
    trackable = make_trackable(make_user(), name="Blue bug")
    expected = f"/api/trackables/{trackable.id}"
    assert review_url(PageType.TRACKABLE, str(trackable.id), "") == expected
    assert review_url(PageType.TRACKABLE, trackable.public_code.lower(), "") == expected


def test_a_team_by_id_or_by_its_slug(app):
    team = make_team(make_user())
    expected = f"/api/public/teams/{team.slug}/notes/nearby"
    assert review_url(PageType.TEAM, str(team.id), "") == expected
    assert review_url(PageType.TEAM, team.slug.upper(), "") == expected


def test_a_profile_by_id_or_by_its_user_name(app):
    user = make_user("mira")
    expected = "/api/public/profiles/mira/notes/nearby"
    assert review_url(PageType.PROFILE, str(user.id), "") == expected
    assert review_url(PageType.PROFILE, "MIRA", "") == expected


NOTHING = "0b7e2d4c-6f1a-4e8b-9c3d-5a2f1e0d9c8b"  # an id no row has


@pytest.mark.parametrize(
    ("page_type", "reference"),
    [
        (PageType.NOTE, NOTHING),
        (PageType.NOTE, "not-an-id"),
        (PageType.TRACKABLE, NOTHING),
        (PageType.TRACKABLE, "LNNOSUCH1"),
        (PageType.TEAM, NOTHING),
        (PageType.TEAM, "no-such-team"),
        (PageType.PROFILE, NOTHING),
        (PageType.PROFILE, "nobody"),
        (PageType.NOTE, "   "),
        (PageType.TRACKABLE_GROUP, NOTHING),
        (PageType.SYSTEM_ERROR, "ERR-12345678"),
        (PageType.SUPPORT, "anything"),
    ],
)
def test_a_reference_that_names_nothing_held_gives_no_link(app, page_type, reference):
    assert review_url(page_type, reference, "") is None
