"""GPX export and import of personal notes through HTTP, with real export files."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
import xmlschema

from app.storage.gpx import parse_waypoints
from tests.conftest import assert_problem
from tests.factories import make_note, make_user

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "gpx"
IMPORTABLE = [
    "garmin_basecamp.gpx",
    "garmin_etrex.gpx",
    "osmand_favourites.gpx",
    "locus_points.gpx",
    "gpx10_geocaches.gpx",
    "tracks_routes_waypoints.gpx",
    "unnamed_waypoints.gpx",
    "utf8_names.gpx",
]
BIG = 10 * 1024 * 1024


def upload(api, data: bytes, *, visibility: str | None = "Public", **form: str):
    fields = {"file": (io.BytesIO(data), "export.gpx")} if data is not None else {}
    if visibility is not None:
        fields["visibility"] = visibility
    fields.update(form)
    return api.post("/api/notes/mine/gpx", data=fields, content_type="multipart/form-data")


def sample(name: str) -> bytes:
    return (SAMPLES / name).read_bytes()


def my_notes(api) -> list[dict]:
    response = api.get("/api/notes/mine")
    assert response.status_code == 200
    return response.get_json()


@pytest.fixture
def me(api):
    return api.as_user(make_user())


@pytest.mark.parametrize("name", IMPORTABLE)
def test_real_exports_import_cleanly(me, name):
    data = sample(name)
    parsed = parse_waypoints(data, max_bytes=BIG)
    response = upload(me, data)
    assert response.status_code == 200, response.get_data(as_text=True)
    report = response.get_json()
    assert report["created"] == len(parsed.waypoints) > 0
    assert report["rejected"] == len(parsed.rejected)
    assert len(report["waypoints"]) == len(parsed.waypoints) + len(parsed.rejected)
    assert len(my_notes(me)) == report["created"]


def test_imported_waypoints_become_mapped_notes_with_the_chosen_visibility(me):
    report = upload(me, sample("garmin_basecamp.gpx"), contentLanguage="de").get_json()
    created = {item["noteId"] for item in report["waypoints"] if item["outcome"] == "created"}
    notes = {note["noteId"]: note for note in my_notes(me)}
    assert set(notes) == created
    zurich = next(note for note in notes.values() if note["title"] == "Zurich HB")
    assert (zurich["latitude"], zurich["longitude"]) == (47.376887, 8.541694)
    assert zurich["body"] == "Meet at the big clock"
    assert zurich["visibility"] == "Public"
    assert zurich["contentLanguage"] == "de"


def test_reimporting_the_same_file_reports_duplicates_and_creates_nothing(me):
    first = upload(me, sample("osmand_favourites.gpx")).get_json()
    second = upload(me, sample("osmand_favourites.gpx")).get_json()
    assert second["created"] == 0
    assert second["duplicates"] == first["created"]
    originals = {item["noteId"] for item in first["waypoints"]}
    assert {item["noteId"] for item in second["waypoints"]} == originals
    assert len(my_notes(me)) == first["created"]


def test_same_title_and_place_with_other_text_is_skipped_and_not_overwritten(me):
    created = me.post(
        "/api/notes/mine",
        json={
            "title": "Zurich HB",
            "body": "My own words",
            "latitude": 47.376887,
            "longitude": 8.541694,
            "visibility": "Private",
        },
    )
    assert created.status_code == 201
    report = upload(me, sample("garmin_basecamp.gpx")).get_json()
    zurich = next(item for item in report["waypoints"] if item["name"] == "Zurich HB")
    assert zurich["outcome"] == "skipped"
    assert zurich["noteId"] == created.get_json()["noteId"]
    assert report["skipped"] == 1
    mine = [note for note in my_notes(me) if note["title"] == "Zurich HB"]
    assert [note["body"] for note in mine] == ["My own words"]


def test_duplicates_compare_only_the_callers_own_notes(api, me):
    other = api.as_user(make_user())
    upload(other, sample("locus_points.gpx"))
    report = upload(me, sample("locus_points.gpx")).get_json()
    assert report["duplicates"] == 0
    assert report["created"] > 0


def test_unnamed_waypoints_get_a_numbered_title(me):
    report = upload(me, sample("unnamed_waypoints.gpx")).get_json()
    titles = [item["name"] for item in report["waypoints"]]
    assert any(title.startswith("Waypoint ") for title in titles)
    assert all(title for title in titles)


@pytest.mark.parametrize("name", ["billion_laughs.gpx", "xxe.gpx", "malformed.gpx", "not_gpx.kml"])
def test_hostile_or_broken_files_are_refused_and_nothing_is_created(me, name):
    body = assert_problem(upload(me, sample(name)), 400)
    assert body["errors"]["file"]
    assert my_notes(me) == []


class TestLimits:
    @pytest.fixture
    def app_overrides(self):
        return {"GPX_MAX_BYTES": 2000, "GPX_MAX_WAYPOINTS": 2}

    def test_file_over_the_size_limit_is_refused(self, me):
        body = assert_problem(upload(me, sample("garmin_basecamp.gpx")), 400)
        assert "2000" in body["errors"]["file"][0]

    def test_too_many_waypoints_are_refused(self, me):
        small = sample("osmand_favourites.gpx")
        assert len(small) <= 2000
        body = assert_problem(upload(me, small), 400)
        assert "2 waypoints" in body["errors"]["file"][0]
        assert my_notes(me) == []


def test_ten_megabytes_of_empty_elements_are_refused_fast_and_create_nothing(me):
    """Within the byte limit, but 2.6 million elements: the work is bounded too."""
    opening = b'<gpx xmlns="http://www.topografix.com/GPX/1/1" version="1.1">'
    data = opening + b"<a/>" * ((BIG - 100) // 4) + b"</gpx>"
    # Encoded here: the test client spools a body this large to a file it never closes.
    form = (
        b'--B\r\nContent-Disposition: form-data; name="visibility"\r\n\r\nPublic\r\n'
        b'--B\r\nContent-Disposition: form-data; name="file"; filename="big.gpx"\r\n'
        b"Content-Type: application/gpx+xml\r\n\r\n" + data + b"\r\n--B--\r\n"
    )
    started = time.thread_time()  # the test client runs the request in this thread
    response = me.post(
        "/api/notes/mine/gpx", data=form, content_type="multipart/form-data; boundary=B"
    )
    body = assert_problem(response, 400)
    assert time.thread_time() - started < 3  # reading the whole file took 20 s and more
    assert body["errors"]["file"]
    assert my_notes(me) == []


def test_file_and_visibility_are_required(me):
    assert "file" in assert_problem(upload(me, None), 400)["errors"]
    data = sample("garmin_etrex.gpx")
    assert "visibility" in assert_problem(upload(me, data, visibility=None), 400)["errors"]


@pytest.mark.parametrize("content_type", ["multipart/form-data", None])
def test_a_file_sent_as_text_is_400_on_file_and_creates_nothing(me, content_type):
    """A text field (multipart) or a urlencoded value named `file` is not a file part."""
    form = {"file": sample("garmin_etrex.gpx").decode(), "visibility": "Public"}
    kwargs = {"content_type": content_type} if content_type else {}
    response = me.post("/api/notes/mine/gpx", data=form, **kwargs)
    body = assert_problem(response, 400)
    assert "file part" in body["errors"]["file"][0]
    assert my_notes(me) == []


def test_gpx_routes_need_a_token(api):
    assert_problem(api.get("/api/notes/mine/gpx"), 401)
    assert_problem(upload(api, sample("garmin_etrex.gpx")), 401)


def test_export_lists_only_my_live_mapped_notes_as_valid_gpx_1_1(api):
    owner = make_user()
    make_note(owner, title="Bridge", latitude=48.85, longitude=2.35, body="Old stones")
    make_note(owner, title="No place", body="Nowhere")
    make_note(owner, title="Gone", latitude=1.0, longitude=1.0, is_deleted=True)
    make_note(make_user(), title="Someone else's", latitude=2.0, longitude=2.0)
    response = api.as_user(owner).get("/api/notes/mine/gpx")
    assert response.status_code == 200
    assert response.mimetype == "application/gpx+xml"
    assert "attachment" in response.headers["Content-Disposition"]
    data = response.get_data()
    xmlschema.XMLSchema(str(SAMPLES / "gpx11.xsd")).validate(data.decode())
    waypoints = parse_waypoints(data, max_bytes=BIG).waypoints
    assert [(w.name, w.description, w.latitude, w.longitude) for w in waypoints] == [
        ("Bridge", "Old stones", 48.85, 2.35)
    ]


def test_export_of_no_notes_is_an_empty_valid_file(me):
    response = me.get("/api/notes/mine/gpx")
    assert response.status_code == 200
    assert parse_waypoints(response.get_data(), max_bytes=BIG).waypoints == []


def test_round_trip_export_then_import_elsewhere_and_back(api, me):
    upload(me, sample("utf8_names.gpx"))
    exported = me.get("/api/notes/mine/gpx").get_data()
    other = api.as_user(make_user())
    into_other = upload(other, exported).get_json()
    back = upload(me, exported).get_json()
    assert into_other["created"] == len(my_notes(me))
    assert back["created"] == 0
    assert back["duplicates"] == into_other["created"]
    titles = sorted(note["title"] for note in my_notes(other))
    assert titles == sorted(note["title"] for note in my_notes(me))
