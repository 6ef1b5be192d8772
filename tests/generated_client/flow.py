"""The integrator's scripted flow, through a client generated from the OpenAPI document
only: each call is an `api.<tag>.<operation>.sync_detailed` function of the generated
package and each body one of its model classes. The one exception is reading the
confirmation mail, which no API serves.

Each step checks the status and the parsed model. The client raises on any status the
document does not list for the operation (`raise_on_unexpected_status`), and every parsed
record is checked for fields the document does not name (`additional_properties`).
"""

from __future__ import annotations

import importlib
import io
import re
import time
import uuid
from datetime import datetime
from email import message_from_bytes
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from PIL import Image

GPX_FILE = Path(__file__).resolve().parents[1] / "data" / "gpx" / "tracks_routes_waypoints.gpx"
PASSWORD = "correct horse battery staple 42"
# A small window around the flow's coordinates (Zurich).
LATITUDE, LONGITUDE = 47.3769, 8.5417
# Generous: a password hash on a machine busy with the rest of the suite.
TIMEOUT = httpx.Timeout(60.0)


class Flow:
    """One account's way through the API, step by step; `run` takes them all."""

    def __init__(
        self, package: ModuleType, document: dict[str, Any], base_url: str, outbox: Path
    ) -> None:
        self.package = package
        self.document = document
        self.models = importlib.import_module(f"{package.__name__}.models")
        self.types = importlib.import_module(f"{package.__name__}.types")
        self.anonymous = package.Client(
            base_url=base_url, timeout=TIMEOUT, raise_on_unexpected_status=True
        )
        self.base_url = base_url
        self.outbox = outbox
        self.user: Any = None  # the AuthenticatedClient once signed in
        suffix = uuid.uuid4().hex[:8]
        self.email = f"integrator-{suffix}@example.com"
        self.user_name = f"integrator_{suffix}"

    # --- plumbing ----------------------------------------------------------------------

    def call(self, operation: str, status: int, **kwargs: Any) -> Any:
        """`api.<operation>.sync_detailed(**kwargs)`: asserts the status, that the answer's
        media type is documented, and that its parsed body names only documented fields;
        returns the parsed body."""
        module = importlib.import_module(f"{self.package.__name__}.api.{operation}")
        kwargs.setdefault("client", self.user)
        response = module.sync_detailed(**kwargs)
        assert response.status_code == status, (
            f"{operation}: {response.status_code} {response.content[:2000]!r}"
        )
        request = module._get_kwargs(**{k: v for k, v in kwargs.items() if k != "client"})
        self.assert_documented_content(request["method"], request["url"], response)
        assert_documented_fields(response.parsed, operation)
        return response.parsed

    def assert_documented_content(self, method: str, url: str, response: Any) -> None:
        """The answer's media type is one the document lists for its operation and
        status, and an answer documented without content has no body."""
        operation = self.operation(method, urlsplit(url).path)
        answer = operation["responses"][str(int(response.status_code))]
        if "$ref" in answer:
            answer = self.document["components"]["responses"][answer["$ref"].rsplit("/", 1)[-1]]
        declared = set(answer.get("content", {}))
        served = response.headers.get("content-type", "").split(";")[0].strip()
        if declared:
            assert served in declared, f"{method.upper()} {url}: {served}, documented {declared}"
        else:
            assert response.content == b"", f"{method.upper()} {url}: a body, none documented"

    def operation(self, method: str, path: str) -> dict[str, Any]:
        """The document's operation for a request path; a literal segment wins over a
        parameter (`/api/trackables/lookup` before `/api/trackables/{trackableId}`)."""
        matches = [
            (template.count("{"), item[method])
            for template, item in self.document["paths"].items()
            if method in item and re.fullmatch(path_pattern(template), path)
        ]
        assert matches, f"{method.upper()} {path} is not in the document"
        return min(matches, key=lambda match: match[0])[1]

    def model(self, model: str, /, **fields: Any) -> Any:
        return getattr(self.models, model)(**fields)

    def enum(self, enum: str, value: str) -> Any:
        return getattr(self.models, enum)(value)

    # --- the steps -----------------------------------------------------------------------

    def run(self) -> None:
        try:
            self.edits_send_only_what_they_name()
            self.register()
            self.confirm()
            self.sign_in()
            category = self.category()
            note = self.discovery(self.note(category))
            trackable = self.trackable()
            self.group()
            self.activation(trackable)
            self.comment(trackable)
            self.stop(trackable)
            self.image(note)
            self.gpx()
            self.sync(note, category)
        finally:
            for client in (self.anonymous, self.user):
                if client is not None:
                    client.get_httpx_client().close()

    def edits_send_only_what_they_name(self) -> None:
        """A body left empty sends nothing: a generated client sends a field's documented
        `default` whenever the caller leaves it out, so an edit's fields must have none
        (or every partial edit would reset them)."""
        for edit in ("NoteMove", "TeamSettings", "CategoryMove", "InfoUpdate"):
            assert self.model(edit).to_dict() == {}, edit
        record = self.model("SyncNoteIn", note_id=uuid.uuid4()).to_dict()
        assert set(record) - {"noteId", "isDeleted", "applyExternalLinkChanges"} == set()

    def register(self) -> None:
        body = self.model("Register", email=self.email, user_name=self.user_name, password=PASSWORD)
        self.call("identity.register", 200, client=self.anonymous, body=body)

    def confirmation_link(self) -> tuple[uuid.UUID, str]:
        """The confirmation mail's link, read from the mail backend's folder (not the API)
        once the worker has sent it."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            for path in sorted(self.outbox.glob("*.eml")):
                message = message_from_bytes(path.read_bytes())
                if message["To"] != self.email:
                    continue
                text = message.get_payload(decode=True).decode()
                link = re.search(r"\S+/api/auth/confirmEmail\?\S+", text)
                assert link, text
                query = parse_qs(urlsplit(link.group(0)).query)
                return uuid.UUID(query["userId"][0]), query["code"][0]
            time.sleep(0.2)
        raise AssertionError(f"no confirmation mail to {self.email} in {self.outbox}")

    def confirm(self) -> None:
        user_id, code = self.confirmation_link()
        self.call(
            "identity.confirm_email",
            200,
            client=self.anonymous,
            user_id=user_id,
            code=code,
        )

    def sign_in(self) -> None:
        token = self.call(
            "identity.login",
            200,
            client=self.anonymous,
            body=self.model("Login", email=self.email, password=PASSWORD),
            use_cookies=False,
            use_session_cookies=False,
        )
        assert token.token_type == "Bearer"
        assert token.access_token
        assert token.refresh_token
        assert token.expires_in > 0
        self.user = self.package.AuthenticatedClient(
            base_url=self.base_url,
            token=token.access_token,
            timeout=TIMEOUT,
            raise_on_unexpected_status=True,
        )
        info = self.call("identity.get_account_info", 200)
        assert info.email == self.email
        assert info.is_email_confirmed is True

    def category(self) -> Any:
        body = self.model("CategoryCreate", name="Walks", content_language="en-US")
        category = self.call("categories.categories_create_category", 201, body=body)
        assert isinstance(category.category_id, uuid.UUID)
        assert category.name == "Walks"
        assert category.content_language == "en-US"
        assert category.parent_category_id is None
        listed = self.call("categories.categories_list_categories", 200)
        assert category.category_id in [each.category_id for each in listed]
        return category

    def note(self, category: Any) -> Any:
        body = self.model(
            "NoteCreate",
            title="Fountain by the lake",
            body="Cold water all year.",
            category_id=category.category_id,
            content_language="en-US",
            latitude=LATITUDE,
            longitude=LONGITUDE,
        )
        note = self.call("notes.create_my_note", 201, body=body)
        assert isinstance(note.note_id, uuid.UUID)
        assert note.title == "Fountain by the lake"
        assert note.category_id == category.category_id
        assert note.visibility.value == "Private"  # left out on create
        assert note.comment_policy.value == "LoggedInUsers"
        assert (note.latitude, note.longitude) == (LATITUDE, LONGITUDE)
        assert isinstance(note.updated_utc, datetime)
        assert isinstance(note.last_activity_utc, datetime)
        mine = self.call("notes.list_my_notes", 200)
        assert [each.note_id for each in mine] == [note.note_id]
        return note

    def discovery(self, note: Any) -> Any:
        """Private, the note is not discovered; made public by an edit, it is. Each edit
        names only what changes: what it leaves out stays as it was."""
        assert self.discovered() == []
        public = self.call(
            "notes.move_my_note",
            200,
            note_id=note.note_id,
            body=self.model("NoteMove", visibility=self.enum("NoteMoveVisibility", "Public")),
        )
        assert public.visibility.value == "Public"
        assert (public.title, public.body) == (note.title, note.body)
        renamed = self.call(
            "notes.move_my_note",
            200,
            note_id=note.note_id,
            body=self.model("NoteMove", title="Fountain by the old lake"),
        )
        assert renamed.title == "Fountain by the old lake"
        assert renamed.visibility.value == "Public"
        assert renamed.comment_policy.value == "LoggedInUsers"
        found = self.discovered()
        assert [each.note_id for each in found] == [note.note_id]
        assert found[0].title == renamed.title
        assert found[0].owner_user_name == self.user_name
        nearby = self.call(
            "notes.list_public_notes_nearby",
            200,
            client=self.anonymous,
            latitude=LATITUDE,
            longitude=LONGITUDE,
        )
        assert [each.note_id for each in nearby] == [note.note_id]
        page = self.call("notes.get_public_note", 200, client=self.anonymous, note_id=note.note_id)
        assert (page.note_id, page.body) == (note.note_id, note.body)
        return renamed

    def discovered(self) -> list[Any]:
        """Anonymous discovery in a window around the flow's coordinates."""
        return self.call(
            "notes.list_public_notes_in_bounds",
            200,
            client=self.anonymous,
            min_latitude=LATITUDE - 0.1,
            min_longitude=LONGITUDE - 0.1,
            max_latitude=LATITUDE + 0.1,
            max_longitude=LONGITUDE + 0.1,
        )

    def trackable(self) -> Any:
        body = self.model("TrackableCreate", name="Blue travel bug", description="Pass it on.")
        created = self.call("trackables.create_trackable", 201, body=body)
        assert isinstance(created.trackable_id, uuid.UUID)
        [item] = created.items
        assert item.trackable_id == created.trackable_id
        assert re.fullmatch(r"LN-\w+", item.public_code)
        assert re.fullmatch(r"LN\w+", item.secret_code)
        assert item.scan_url == item.qr_payload
        assert item.scan_url.startswith(f"{self.base_url}/trackable/")
        return item

    def group(self) -> None:
        body = self.model(
            "TrackableGroupCreate",
            name="Summer Hike 2026",
            trackable_count=2,
            default_trackable_title="Summer hike tag",
            activate_immediately=True,
        )
        group = self.call("trackables.create_trackable_group", 201, body=body)
        assert isinstance(group.trackable_group_id, uuid.UUID)
        assert group.slug == "summer_hike_2026"
        assert group.trackable_count == 2
        assert len(group.items) == 2
        assert all(item.secret_code and item.public_code for item in group.items)
        shown = self.call(
            "trackables.get_trackable",
            200,
            trackable_id=group.items[0].trackable_id,
        )
        assert shown.is_activated is True

    def activation(self, item: Any) -> None:
        # The secret code unlocks the trackable (signed in: stored against the account)...
        lookup = self.call(
            "trackables.lookup_trackable",
            200,
            body=self.model("Lookup", code=item.secret_code.lower()),
        )
        assert lookup.found is True
        assert lookup.trackable_id == item.trackable_id
        assert lookup.uses_secret_access is True
        assert lookup.is_public_code_match is False
        # ...and whoever holds it activates it, with its first journey stop.
        body = self.model(
            "TrackableActivate",
            name="Blue travel bug",
            status_message="Heading north",
            initial_journey_stop_latitude=LATITUDE,
            initial_journey_stop_longitude=LONGITUDE,
        )
        activated = self.call(
            "trackables.activate_trackable",
            200,
            trackable_id=item.trackable_id,
            body=body,
        )
        assert activated.is_activated is True
        assert activated.public_code == item.public_code
        assert activated.status_message == "Heading north"
        assert isinstance(activated.initial_journey_stop_id, uuid.UUID)
        assert activated.team_id is None

    def comment(self, item: Any) -> None:
        body = self.model("TrackableCommentCreate", body="Found it by the fountain.")
        comment = self.call(
            "trackables.create_trackable_comment",
            201,
            trackable_id=item.trackable_id,
            body=body,
        )
        assert isinstance(comment.trackable_comment_id, uuid.UUID)
        assert comment.body == "Found it by the fountain."
        assert comment.is_anonymous is False
        assert comment.author_profile_user_name == self.user_name
        comments = self.call(
            "trackables.list_trackable_comments",
            200,
            client=self.anonymous,
            trackable_id=item.trackable_id,
        )
        assert [each.trackable_comment_id for each in comments] == [comment.trackable_comment_id]

    def stop(self, item: Any) -> None:
        body = self.model("JourneyStopCreate", latitude=46.948, longitude=7.4474)
        stop = self.call(
            "trackables.create_journey_stop",
            201,
            trackable_id=item.trackable_id,
            body=body,
        )
        assert isinstance(stop.journey_stop_id, uuid.UUID)
        assert stop.is_location_only is True
        assert stop.is_anonymous is False
        journey = self.call(
            "trackables.get_trackable_journey",
            200,
            client=self.anonymous,
            trackable_id=item.trackable_id,
        )
        # Oldest first: the activation's stop, then this one.
        assert len(journey) == 2
        assert journey[-1].journey_stop_id == stop.journey_stop_id
        assert (journey[0].latitude, journey[0].longitude) == (LATITUDE, LONGITUDE)

    def image(self, note: Any) -> None:
        picture = io.BytesIO()
        Image.new("RGB", (40, 30), (200, 60, 30)).save(picture, format="PNG")
        picture.seek(0)
        form = self.model(
            "ImageUploadForm",
            file=self.types.File(payload=picture, file_name="fountain.png", mime_type="image/png"),
        )
        envelope = self.call("images.upload_note_image", 201, note_id=note.note_id, body=form)
        image = envelope.image
        assert image.note_id == note.note_id
        assert image.target_type == 1
        assert (image.original_width, image.original_height) == (40, 30)
        assert image.thumbnail_url.endswith("-64.jpg")
        listed = self.call(
            "images.list_note_images",
            200,
            client=self.anonymous,
            note_id=note.note_id,
        )
        assert [each.content_image_id for each in listed] == [image.content_image_id]
        thumbnail = self.call(
            "images.download_image",
            200,
            client=self.anonymous,
            content_image_id=image.content_image_id,
            variant="thumbnail",
        )
        with Image.open(io.BytesIO(thumbnail.payload.read())) as decoded:
            assert (decoded.format, decoded.size) == ("JPEG", (64, 64))

    def gpx(self) -> None:
        form = self.model(
            "GpxImportForm",
            file=self.types.File(
                payload=io.BytesIO(GPX_FILE.read_bytes()),
                file_name=GPX_FILE.name,
                mime_type="application/gpx+xml",
            ),
            visibility=self.enum("GpxImportFormVisibility", "Private"),
            content_language="en-US",
        )
        report = self.call("notes.import_my_notes_gpx", 200, body=form)
        assert (report.created, report.duplicates, report.skipped, report.rejected) == (2, 0, 0, 0)
        assert [waypoint.name for waypoint in report.waypoints] == ["Trailhead", "Lunch spot"]
        assert all(isinstance(waypoint.note_id, uuid.UUID) for waypoint in report.waypoints)
        exported = self.call("notes.export_my_notes_gpx", 200)
        text = (
            exported.decode() if isinstance(exported, bytes) else exported.payload.read().decode()
        )
        assert "<gpx" in text
        for name in ("Trailhead", "Lunch spot", "Fountain by the old lake"):
            assert name in text

    def sync(self, note: Any, category: Any) -> None:
        device = uuid.uuid4()
        new_category_id, new_note_id = uuid.uuid4(), uuid.uuid4()
        body = self.model(
            "SyncPush",
            device_id=device,
            categories=[
                self.model(
                    "SyncCategoryIn",
                    category_id=new_category_id,
                    name="Offline finds",
                    content_language="en-US",
                    parent_category_id=category.category_id,
                )
            ],
            notes=[
                self.model(
                    "SyncNoteIn",
                    note_id=new_note_id,
                    title="Bench with a view",
                    body="Written offline.",
                    category_id=new_category_id,
                    latitude=LATITUDE + 0.01,
                    longitude=LONGITUDE,
                ),
                # An edit of a note the server sent: the record as the client holds it,
                # with the server copy it was edited from.
                self.model(
                    "SyncNoteIn",
                    note_id=note.note_id,
                    title=note.title,
                    body="Cold water all year; closed in winter.",
                    category_id=note.category_id,
                    content_language=note.content_language,
                    latitude=note.latitude,
                    longitude=note.longitude,
                    visibility=self.enum("SyncNoteInVisibility", note.visibility.value),
                    comment_policy=self.enum("SyncNoteInCommentPolicy", note.comment_policy.value),
                    updated_utc=note.updated_utc,
                ),
            ],
        )
        pushed = self.call("sync.push_changes", 200, body=body)
        assert pushed.conflicts == [], [each.to_dict() for each in pushed.conflicts]
        assert set(pushed.applied_note_ids) == {new_note_id, note.note_id}
        assert pushed.applied_category_ids == [new_category_id]
        area = self.model(
            "PublicArea",
            min_latitude=LATITUDE - 0.1,
            min_longitude=LONGITUDE - 0.1,
            max_latitude=LATITUDE + 0.1,
            max_longitude=LONGITUDE + 0.1,
        )
        pulled = self.call(
            "sync.pull_changes",
            200,
            body=self.model("SyncPull", last_sync_utc=None, public_area=area),
        )
        assert isinstance(pulled.server_sync_utc, datetime)
        notes = {each.note_id: each for each in pulled.user_notes}
        assert notes[new_note_id].title == "Bench with a view"
        assert notes[new_note_id].category_id == new_category_id
        assert notes[note.note_id].body == "Cold water all year; closed in winter."
        assert notes[note.note_id].visibility.value == "Public"
        assert len(notes) == 4  # the note, the pushed one and the two GPX waypoints
        categories = {each.category_id: each for each in pulled.user_categories}
        assert categories[new_category_id].parent_category_id == category.category_id
        assert [each.note_id for each in pulled.public_notes] == [note.note_id]
        later = self.call(
            "sync.pull_changes",
            200,
            body=self.model("SyncPull", last_sync_utc=pulled.server_sync_utc),
        )
        assert later.user_notes == []
        assert later.user_categories == []


def path_pattern(template: str) -> str:
    """`/api/notes/{noteId}` as a regular expression with one segment per parameter."""
    return "[^/]+".join(re.escape(piece) for piece in re.split(r"\{[^}]*\}", template))


def assert_documented_fields(parsed: Any, where: str) -> None:
    """No field the document does not name: a generated model keeps those in
    `additional_properties`, which must stay empty on every record (free-form objects, which
    are models with no declared field, excepted)."""
    if isinstance(parsed, list):
        for each in parsed:
            assert_documented_fields(each, where)
        return
    extra = getattr(parsed, "additional_properties", None)
    if extra is None:
        return
    declared = [
        name for name in type(parsed).__attrs_attrs__ if name.name != "additional_properties"
    ]
    if declared:
        assert not extra, (
            f"{where}: {type(parsed).__name__} has undocumented fields {sorted(extra)}"
        )
    for attribute in declared:
        assert_documented_fields(getattr(parsed, attribute.name), where)
