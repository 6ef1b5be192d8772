"""Notes (contract: Note; Personal notes and GPX; Public note discovery; Public note pages):
personal and scoped notes, comments, discovery in map areas, text search over public
notes, GPX import and export, and many note changes written together (a sync push)."""

from app.services.notes.batch import NoteBatch, NoteWrites, WriteEach
from app.services.notes.discovery import (
    NoteList,
    note_records,
    page_notes,
    profile_notes,
    public_notes,
)
from app.services.notes.gpx import ImportReport, export_waypoints, import_waypoints
from app.services.notes.notes import (
    add_comment,
    attach_trackable,
    create_note,
    delete_account_notes,
    delete_note,
    get_managed,
    get_note,
    list_comments,
    list_note_trackables,
    list_notes,
    move_note,
)
from app.services.notes.search import SEARCH_QUERY_MAX_LENGTH, search_public_notes

__all__ = [
    "SEARCH_QUERY_MAX_LENGTH",
    "ImportReport",
    "NoteBatch",
    "NoteList",
    "NoteWrites",
    "WriteEach",
    "add_comment",
    "attach_trackable",
    "create_note",
    "delete_account_notes",
    "delete_note",
    "export_waypoints",
    "get_managed",
    "get_note",
    "import_waypoints",
    "list_comments",
    "list_note_trackables",
    "list_notes",
    "move_note",
    "note_records",
    "page_notes",
    "profile_notes",
    "public_notes",
    "search_public_notes",
]
