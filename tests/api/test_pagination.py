"""Cursor pagination of every growing list (docs/contract/wire.md, Pagination), through
HTTP: walking the pages gives the unpaged list; rows added and deleted between pages
cause no duplicate and no gap among the rows present throughout; the last page has no
`Link`; bad `limit` and `cursor` are 400 naming them; the unpaged answer is unchanged;
a page shows nothing the unpaged list would not.

Each list is built by a `Listed` case: who reads it, where, and how to add a row to it
or take one out of it between two pages. Rows share timestamps on purpose, so the
primary key has ties to settle."""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from itsdangerous import URLSafeSerializer
from sqlalchemy import delete, insert, select, update

from app.extensions import db
from app.models.category import Category
from app.models.compliance import ContentReport
from app.models.enums import NoteVisibility
from app.models.note import Note, NoteComment
from app.models.team import MembershipStatus, TeamInviteLink, TeamMembership
from app.models.trackable import (
    JourneyStop,
    Trackable,
    TrackableAccessSession,
    TrackableComment,
    note_trackables,
)
from tests.conftest import ApiClient, assert_problem
from tests.factories import (
    codes_of,
    make_category,
    make_comment,
    make_invite_link,
    make_membership,
    make_note,
    make_team,
    make_trackable,
    make_user,
)

ROWS = 7  # each list starts with this many rows
NEXT = re.compile(r'^<(/[^>]*)>; rel="next"$')
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def moment(index: int) -> datetime:
    """Two rows per instant: every other pair of rows ties on its time."""
    return T0 + timedelta(minutes=index // 2)


@dataclass
class Listed:
    """One list under test."""

    client: ApiClient
    url: str  # the list's URL, with any filter it is read with
    id_field: str
    add: Callable[[], None]  # a new row that belongs in the list
    remove: Callable[[str], None]  # the row with this id leaves the list
    keep: frozenset[str] = frozenset()  # rows the walk must not remove (the reader's own)

    def ids(self, items: list[dict[str, Any]]) -> list[str]:
        return [item[self.id_field] for item in items]

    def unpaged(self) -> list[str]:
        response = self.client.get(self.url)
        assert response.status_code == 200, response.get_data(as_text=True)
        assert "Link" not in response.headers
        return self.ids(response.get_json())


CASES: dict[str, Callable[[ApiClient], Listed]] = {}


def case(name: str) -> Callable[[Callable[[ApiClient], Listed]], Callable[[ApiClient], Listed]]:
    def register(build: Callable[[ApiClient], Listed]) -> Callable[[ApiClient], Listed]:
        CASES[name] = build
        return build

    return register


def _gone(model: Any, row_id: str) -> None:
    db.session.execute(delete(model).where(model.id == uuid.UUID(row_id)))
    db.session.commit()


def _tombstone(model: Any, row_id: str) -> None:
    db.session.execute(update(model).where(model.id == uuid.UUID(row_id)).values(is_deleted=True))
    db.session.commit()


# --- the lists ---------------------------------------------------------------------------


@case("notes/mine")
def _my_notes(api: ApiClient) -> Listed:
    owner = make_user()
    make_note(make_user())  # someone else's
    for index in range(ROWS):
        make_note(owner, last_activity_utc=moment(index))
    return Listed(
        api.as_user(owner),
        "/api/notes/mine",
        "noteId",
        add=lambda: make_note(owner),
        remove=lambda row: _tombstone(Note, row),
    )


@case("teams/notes")
def _team_notes(api: ApiClient) -> Listed:
    member = make_user()
    team = make_team(members=(member,))
    make_note(member)  # a personal note: not the team's
    for index in range(ROWS):
        make_note(member, team_id=team.id, last_activity_utc=moment(index))
    return Listed(
        api.as_user(member),
        f"/api/teams/{team.id}/notes",
        "noteId",
        add=lambda: make_note(member, team_id=team.id),
        remove=lambda row: _tombstone(Note, row),
    )


@case("notes/comments")
def _note_comments(api: ApiClient) -> Listed:
    note = make_note(visibility=NoteVisibility.PUBLIC)
    make_comment(make_note(visibility=NoteVisibility.PUBLIC))  # another note's
    for index in range(ROWS):
        make_comment(note, created_utc=moment(index))
    return Listed(
        api,
        f"/api/public/notes/{note.id}/comments",
        "commentId",
        add=lambda: make_comment(note),
        remove=lambda row: _gone(NoteComment, row),
    )


@case("notes/trackables")
def _note_trackables(api: ApiClient) -> Listed:
    owner = make_user()
    note = make_note(owner, visibility=NoteVisibility.PUBLIC)

    def attach(when: datetime | None = None) -> None:
        trackable = make_trackable(owner)
        db.session.execute(
            insert(note_trackables).values(
                note_id=note.id, trackable_id=trackable.id, attached_utc=when or datetime.now(UTC)
            )
        )
        db.session.commit()

    for index in range(ROWS):
        attach(moment(index))

    def detach(row: str) -> None:
        db.session.execute(
            delete(note_trackables).where(note_trackables.c.trackable_id == uuid.UUID(row))
        )
        db.session.commit()

    return Listed(
        api, f"/api/public/notes/{note.id}/trackables", "trackableId", add=attach, remove=detach
    )


@case("categories/mine")
def _my_categories(api: ApiClient) -> Listed:
    owner = make_user()
    make_category(make_user())  # someone else's
    # Case-folded names tie (`river`, `River`): the id settles them.
    for index in range(ROWS):
        name = ["river", "River", "lake", "Lake", "Zeta", "alpha", "ALPHA"][index]
        make_category(owner, name=name, content_language="de" if index == 4 else "en")
    return Listed(
        api.as_user(owner),
        "/api/categories/mine",
        "categoryId",
        add=lambda: make_category(owner),
        remove=lambda row: _tombstone(Category, row),
    )


@case("teams/categories")
def _team_categories(api: ApiClient) -> Listed:
    member = make_user()
    team = make_team(members=(member,))
    for index in range(ROWS):
        make_category(team_id=team.id, name=f"Folder {index % 3}")
    return Listed(
        api.as_user(member),
        f"/api/teams/{team.id}/categories",
        "categoryId",
        add=lambda: make_category(team_id=team.id, name="Folder 1"),
        remove=lambda row: _tombstone(Category, row),
    )


@case("teams")
def _my_teams(api: ApiClient) -> Listed:
    user = make_user()
    make_team()  # a team without the user
    for index in range(ROWS):
        title = ["Hikers", "hikers", "Anglers", "Zoo", "anglers", "Birders", "Hikers"][index]
        team = make_team(title=title)
        status = MembershipStatus.INVITED if index == 3 else MembershipStatus.MEMBER
        make_membership(team, user, status=status)

    def leave(row: str) -> None:
        db.session.execute(
            delete(TeamMembership).where(
                TeamMembership.team_id == uuid.UUID(row), TeamMembership.user_id == user.id
            )
        )
        db.session.commit()

    return Listed(
        api.as_user(user),
        "/api/teams",
        "teamId",
        add=lambda: make_team(user, title="Hikers"),
        remove=leave,
    )


@case("teams/memberships")
def _memberships(api: ApiClient) -> Listed:
    admin = make_user("ada")
    team = make_team(admin)
    own = db.session.scalar(select(TeamMembership.id).where(TeamMembership.user_id == admin.id))
    statuses = [MembershipStatus.MEMBER] * 3 + [MembershipStatus.INVITED] * 2
    statuses += [MembershipStatus.REQUESTING] * (ROWS - 6)
    for index, status in enumerate(statuses):
        make_membership(team, make_user(f"m{index}"), status=status, is_admin=index == 0)
    return Listed(
        api.as_user(admin),
        f"/api/teams/{team.id}/memberships",
        "membershipId",
        add=lambda: make_membership(team, make_user()),
        remove=lambda row: _gone(TeamMembership, row),
        keep=frozenset({str(own)}),
    )


@case("teams/invite-links")
def _invite_links(api: ApiClient) -> Listed:
    admin = make_user()
    team = make_team(admin)
    make_invite_link(make_team(admin), admin)  # another team's
    for index in range(ROWS):
        make_invite_link(team, admin, created_utc=moment(index))
    return Listed(
        api.as_user(admin),
        f"/api/teams/{team.id}/invite-links",
        "inviteLinkId",
        add=lambda: make_invite_link(team, admin),
        remove=lambda row: _gone(TeamInviteLink, row),
    )


@case("trackables/mine")
def _my_trackables(api: ApiClient) -> Listed:
    owner, other = make_user(), make_user()
    make_trackable(other)
    for index in range(ROWS):
        make_trackable(owner, last_activity_utc=moment(index))

    def hand_over(row: str) -> None:
        db.session.execute(
            update(Trackable).where(Trackable.id == uuid.UUID(row)).values(owner_user_id=other.id)
        )
        db.session.commit()

    return Listed(
        api.as_user(owner),
        "/api/trackables/mine",
        "trackableId",
        add=lambda: make_trackable(owner),
        remove=hand_over,
    )


@case("trackables/active")
def _active_sessions(api: ApiClient) -> Listed:
    owner = make_user()

    def unlock() -> None:
        trackable = make_trackable(owner)
        response = api.post("/api/trackables/lookup", json={"code": codes_of(trackable)[0]})
        assert response.get_json()["usesSecretAccess"] is True

    for _ in range(ROWS):
        unlock()
    # Sessions opened at the same instant: the public code settles their order.
    db.session.execute(update(TrackableAccessSession).values(created_utc=T0))
    db.session.commit()

    def end(row: str) -> None:
        assert api.delete(f"/api/trackables/active/{row}").status_code == 204

    return Listed(api, "/api/trackables/active", "trackableId", add=unlock, remove=end)


@case("trackables/comments")
def _trackable_comments(api: ApiClient) -> Listed:
    owner = make_user()
    trackable = make_trackable(owner)

    def comment(when: datetime | None = None) -> None:
        db.session.add(
            TrackableComment(
                trackable_id=trackable.id,
                author_user_id=owner.id,
                body="Seen it",
                created_utc=when or datetime.now(UTC),
            )
        )
        db.session.commit()

    for index in range(ROWS):
        comment(moment(index))
    return Listed(
        api.as_user(owner),
        f"/api/trackables/{trackable.id}/comments",
        "trackableCommentId",
        add=comment,
        remove=lambda row: _gone(TrackableComment, row),
    )


@case("trackables/journey")
def _journey(api: ApiClient) -> Listed:
    owner = make_user()
    trackable = make_trackable(owner)

    def stop(when: datetime | None = None) -> None:
        db.session.add(
            JourneyStop(
                trackable_id=trackable.id,
                coordinate_id=uuid.uuid4(),
                latitude=47.0,
                longitude=8.0,
                created_by_user_id=owner.id,
                associated_utc=when or datetime.now(UTC),
            )
        )
        db.session.commit()

    for index in range(ROWS):
        stop(moment(index))
    return Listed(
        api.as_user(owner),
        f"/api/trackables/{trackable.id}/journey",
        "journeyStopId",
        add=stop,
        remove=lambda row: _gone(JourneyStop, row),
    )


def _report(reporter: Any, when: datetime | None = None) -> None:
    db.session.add(
        ContentReport(
            reporter_user_id=reporter.id,
            page_type=2,
            content_type=1,
            report_title="Spam",
            created_utc=when or datetime.now(UTC),
        )
    )
    db.session.commit()


@case("compliance/reports/mine")
def _my_reports(api: ApiClient) -> Listed:
    reporter = make_user()
    _report(make_user())  # someone else's
    for index in range(ROWS):
        _report(reporter, moment(index))
    return Listed(
        api.as_user(reporter),
        "/api/compliance/reports/mine",
        "contentReportId",
        add=lambda: _report(reporter),
        remove=lambda row: _gone(ContentReport, row),
    )


@case("compliance/reports")
def _review_list(api: ApiClient) -> Listed:
    reporter = make_user()
    for index in range(ROWS):
        _report(reporter, moment(index))
    return Listed(
        api.as_user(make_user(is_superadmin=True)),
        "/api/compliance/reports?status=0",
        "contentReportId",
        add=lambda: _report(reporter),
        remove=lambda row: _gone(ContentReport, row),
    )


NAMES = sorted(CASES)


@pytest.fixture(params=NAMES)
def listed(request: pytest.FixtureRequest, api: ApiClient) -> Listed:
    return CASES[request.param](api)


# --- walking -----------------------------------------------------------------------------


def with_query(url: str, **query: Any) -> str:
    extra = "&".join(f"{name}={value}" for name, value in query.items())
    return f"{url}{'&' if '?' in url else '?'}{extra}"


def walk(
    listed: Listed, limit: int, between: Callable[[list[list[str]]], None] | None = None
) -> list[list[str]]:
    """Every page, following `Link`; `between(the pages read)` runs before each next
    page."""
    pages: list[list[str]] = []
    url: str | None = with_query(listed.url, limit=limit)
    while url is not None:
        response = listed.client.get(url)
        assert response.status_code == 200, response.get_data(as_text=True)
        assert "X-Result-Truncated" not in response.headers
        body = response.get_json()
        assert isinstance(body, list)
        assert len(body) <= limit
        pages.append(listed.ids(body))
        link = response.headers.get("Link")
        if link is None:
            break
        assert len(body) == limit, "only the last page is short"
        match = NEXT.match(link)
        assert match, link
        url = match.group(1)
        assert urlsplit(url).path == urlsplit(listed.url).path
        assert len(pages) < 50
        if between is not None:
            between(pages)
    return pages


def test_the_pages_walk_the_whole_list_in_its_order(listed):
    whole = listed.unpaged()
    assert len(whole) == ROWS
    for limit in (1, 3, ROWS - 1):
        pages = walk(listed, limit)
        assert [row for page in pages for row in page] == whole
        assert len(pages) == math.ceil(ROWS / limit)


def test_a_page_that_ends_the_list_has_no_link(listed):
    response = listed.client.get(with_query(listed.url, limit=ROWS))
    assert len(response.get_json()) == ROWS
    assert "Link" not in response.headers
    response = listed.client.get(with_query(listed.url, limit=ROWS + 1))
    assert len(response.get_json()) == ROWS
    assert "Link" not in response.headers


def test_rows_added_and_deleted_between_pages_leave_no_gap_and_no_duplicate(listed):
    before = listed.unpaged()
    seen: list[str] = []
    removed: set[str] = set()

    def churn(pages: list[list[str]]) -> None:
        seen[:] = [row for page in pages for row in page]
        listed.add()
        unseen = [row for row in before if row not in seen and row not in removed]
        if len(unseen) > 1:  # one the walk has not reached yet
            removed.add(unseen[-1])
            listed.remove(unseen[-1])
        earlier = [row for row in seen if row not in removed and row not in listed.keep]
        if earlier:  # and one it has passed
            removed.add(earlier[0])
            listed.remove(earlier[0])

    walked = [row for page in walk(listed, 2, between=churn) for row in page]
    assert len(walked) == len(set(walked)), "a row was listed twice"
    throughout = [row for row in before if row not in removed]
    assert [row for row in walked if row in throughout] == throughout
    assert not {row for row in removed if row not in seen} & set(walked)
    assert removed, "the walk changed nothing: the test tests nothing"


def test_a_request_without_limit_answers_as_before(listed):
    response = listed.client.get(listed.url)
    assert "Link" not in response.headers
    assert "X-Result-Truncated" not in response.headers
    assert len(response.get_json()) == ROWS


def test_a_bad_limit_is_400_naming_it(listed):
    # Every bad value on one list's rows: its requests change nothing, and building the
    # list again for each value cost six times as much.
    for limit in ("0", "-1", "101", "abc", "1.5", ""):
        response = listed.client.get(with_query(listed.url, limit=limit))
        assert response.status_code == 400, f"limit={limit!r}: {response.status_code}"
        assert "limit" in assert_problem(response, 400)["errors"], limit


def test_a_tampered_or_foreign_cursor_is_400_naming_it(listed, app):
    response = listed.client.get(with_query(listed.url, limit=2))
    cursor = parse_qs(urlsplit(NEXT.match(response.headers["Link"]).group(1)).query)["cursor"][0]
    tampered = cursor[:-2] + ("AA" if not cursor.endswith("AA") else "BB")
    other_path = URLSafeSerializer(
        app.config["SECRET_KEY"], salt="location-notes.page-cursor:/api/notes/mine"
    ).dumps([["s", "x"]])
    path = urlsplit(listed.url).path
    same_path = URLSafeSerializer(
        app.config["SECRET_KEY"], salt=f"location-notes.page-cursor:{path}"
    )
    for bad in (
        tampered,
        "not-a-cursor",
        other_path if path != "/api/notes/mine" else "x.y",
        same_path.dumps({"not": "a key"}),  # signed, but not a key
        same_path.dumps([["s", "x"], ["s", "y"], ["s", "z"], ["s", "w"], ["s", "v"]]),
        same_path.dumps([["d", "not a time"]]),
        same_path.dumps([["q", 1]]),
    ):
        body = assert_problem(listed.client.get(with_query(listed.url, limit=2, cursor=bad)), 400)
        assert "cursor" in body["errors"], bad


# --- one list at a time ------------------------------------------------------------------


def test_a_cursor_without_limit_pages_at_the_largest_size(api, app):
    listed = CASES["notes/mine"](api)
    app.config["PAGE_SIZE_MAX"] = 3
    first = listed.client.get(with_query(listed.url, limit=3))
    following = NEXT.match(first.headers["Link"]).group(1)
    cursor = parse_qs(urlsplit(following).query)["cursor"][0]
    response = listed.client.get(with_query(listed.url, cursor=cursor))
    assert len(response.get_json()) == 3
    assert "Link" in response.headers
    assert_problem(listed.client.get(with_query(listed.url, limit=4)), 400)


def test_the_link_carries_the_same_query(api):
    owner = make_user()
    for index in range(5):
        make_note(owner, content_language="de" if index % 2 else "en")
    client = api.as_user(owner)
    response = client.get("/api/notes/mine?contentLanguage=en&limit=1")
    following = NEXT.match(response.headers["Link"]).group(1)
    query = parse_qs(urlsplit(following).query)
    assert query["contentLanguage"] == ["en"]
    assert query["limit"] == ["1"]
    listed = Listed(client, "/api/notes/mine?contentLanguage=en", "noteId", print, print)
    pages = walk(listed, 1)
    assert [row for page in pages for row in page] == listed.unpaged()
    assert len(pages) == 3


@pytest.mark.parametrize("app_overrides", [{"PUBLIC_LIST_CAP": 3, "REPORT_LIST_CAP": 3}])
@pytest.mark.parametrize("name", ["notes/comments", "trackables/comments", "compliance/reports"])
def test_pages_reach_past_the_cap_of_a_capped_list(api, name):
    listed = CASES[name](api)
    response = listed.client.get(listed.url)
    assert len(response.get_json()) == 3
    assert response.headers["X-Result-Truncated"] == "true"
    assert len([row for page in walk(listed, 2) for row in page]) == ROWS


def test_a_member_walks_the_memberships_a_member_sees(api):
    listed = CASES["teams/memberships"](api)
    team_path = urlsplit(listed.url).path
    member = make_user()
    team_id = uuid.UUID(team_path.split("/")[3])
    db.session.add(
        TeamMembership(team_id=team_id, user_id=member.id, status=MembershipStatus.MEMBER)
    )
    db.session.commit()
    as_member = Listed(api.as_user(member), listed.url, "membershipId", print, print)
    seen = as_member.unpaged()
    assert len(seen) == 5  # the admin, three members and the caller: no pending record
    assert [row for page in walk(as_member, 2) for row in page] == seen


def test_a_cursor_opens_nothing_the_caller_may_not_see(api):
    listed = CASES["teams/notes"](api)
    response = listed.client.get(with_query(listed.url, limit=2))
    following = NEXT.match(response.headers["Link"]).group(1)
    stranger = api.as_user(make_user())
    refused = stranger.get(listed.url).status_code
    assert refused in (403, 404)
    assert_problem(stranger.get(following), refused)
    assert_problem(api.get(following), 401)

    owner = make_user()
    note = make_note(owner)  # private
    for _ in range(3):
        make_comment(note, author=owner)
    url = f"/api/public/notes/{note.id}/comments"
    following = NEXT.match(api.as_user(owner).get(f"{url}?limit=1").headers["Link"]).group(1)
    assert_problem(api.get(following), 404)


def test_status_publishes_the_page_size_cap(api, app):
    assert api.get("/api/system/status").get_json()["limits"]["pageSizeMax"] == 100
    app.config["PAGE_SIZE_MAX"] = 7
    assert api.get("/api/system/status").get_json()["limits"]["pageSizeMax"] == 7


def test_cors_exposes_the_link_header(api, app):
    app.config["CORS_ALLOWED_ORIGINS"] = "https://app.example"
    response = api.get("/api/system/status", headers={"Origin": "https://app.example"})
    exposed = [
        name.strip() for name in response.headers["Access-Control-Expose-Headers"].split(",")
    ]
    assert "Link" in exposed


# --- the document ------------------------------------------------------------------------

PAGED = {
    "/api/notes/mine",
    "/api/teams/{teamId}/notes",
    "/api/public/notes/{noteId}/comments",
    "/api/public/notes/{noteId}/trackables",
    "/api/categories/mine",
    "/api/teams/{teamId}/categories",
    "/api/teams",
    "/api/teams/{teamId}/memberships",
    "/api/teams/{teamId}/invite-links",
    "/api/trackables/mine",
    "/api/trackables/active",
    "/api/trackables/{trackableId}/comments",
    "/api/trackables/{trackableId}/journey",
    "/api/compliance/reports",
    "/api/compliance/reports/mine",
    "/api/notifications",  # its walk is in tests/api/notifications/test_inbox.py
    "/api/watches/areas",  # its walk is in tests/api/notifications/test_area_watch_routes.py
    "/api/webhooks",  # its walk is in tests/api/webhooks/test_subscriptions.py
    "/api/webhooks/{webhookId}/deliveries",  # tests/api/webhooks/test_delivery.py
}
# Public windows keep their cap and are not paged (decisions: Lists).
WINDOWS = {
    "/api/notes/public/bounds",
    "/api/notes/public/nearby",
    "/api/notes/public/search",
    "/api/public/profiles/{userName}/notes/nearby",
    "/api/public/teams/{teamName}/notes/nearby",
    "/api/trackables/public",
}


def test_the_document_states_limit_cursor_and_link_on_each_paged_list(api):
    document = api.get("/api/openapi.json").get_json()
    for path, operations in document["paths"].items():
        operation = operations.get("get")
        if operation is None:
            continue
        query = {p["name"]: p for p in operation.get("parameters", []) if p["in"] == "query"}
        headers = operation["responses"].get("200", {}).get("headers", {})
        if path in PAGED:
            assert query["limit"]["schema"]["minimum"] == 1, path
            assert query["limit"]["schema"]["maximum"] == 100, path
            assert query["cursor"]["schema"]["type"] == "string", path
            assert "Link" in headers, path
            assert "400" in operation["responses"], path
        else:
            assert "limit" not in query, path
            assert "cursor" not in query, path
            assert "Link" not in headers, path
    assert set(document["paths"]) >= PAGED | WINDOWS
