"""The text search index of notes (contract notes: Public note search): database objects
outside the mapped tables, one set per dialect, created with the `notes` table.

Each exists on one database only, so they are not columns or tables of the models: they are
made after `create_all` makes `notes` (tests, a fresh database); the migration
`public_note_search` makes the same ones from its own copy of this DDL, and
tests/test_migrations.py checks that the two agree. Alembic's comparison leaves them out
(`compared_with_models`). A migration that rebuilds `notes` on SQLite (batch mode) drops its
triggers with it and must make them again (`SQLITE_TRIGGERS`).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import DDL, event

from app.models.note import Note

# Primary language subtag -> the text search configuration PostgreSQL ships for it (every
# one of these is in PostgreSQL 15). Any other language is parsed with `simple`: words
# lower-cased, no stemming, no stop words.
SEARCH_CONFIGS: dict[str, str] = {
    "ar": "arabic",
    "hy": "armenian",
    "eu": "basque",
    "ca": "catalan",
    "da": "danish",
    "nl": "dutch",
    "en": "english",
    "fi": "finnish",
    "fr": "french",
    "de": "german",
    "el": "greek",
    "hi": "hindi",
    "hu": "hungarian",
    "id": "indonesian",
    "ga": "irish",
    "it": "italian",
    "lt": "lithuanian",
    "ne": "nepali",
    "nb": "norwegian",
    "nn": "norwegian",
    "no": "norwegian",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sr": "serbian",
    "es": "spanish",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
    "yi": "yiddish",
}
FALLBACK_CONFIG = "simple"

SEARCH_VECTOR = "search_vector"
SEARCH_INDEX = "ix_notes_search"
FTS_TABLE = "notes_search"
FTS_KEYS = "notes_search_keys"
# What SQLite makes for an FTS5 table besides the table itself.
FTS_SHADOW_TABLES = tuple(
    f"{FTS_TABLE}_{part}" for part in ("data", "idx", "content", "docsize", "config")
)


def config_of(content_language: str | None) -> str:
    """The configuration of a content language (a tag like `de-DE`), as the database
    chooses it for a note."""
    primary = (content_language or "").split("-", 1)[0].lower()
    return SEARCH_CONFIGS.get(primary, FALLBACK_CONFIG)


def language_cases(value: str, branch: str) -> str:
    """SQL: `CASE <primary subtag of value> WHEN 'en' THEN <branch for english> ... END`,
    `branch` a format string with `{config}` (the configuration's name)."""
    whens = " ".join(
        f"WHEN '{subtag}' THEN {branch.format(config=config)}"
        for subtag, config in SEARCH_CONFIGS.items()
    )
    fallback = branch.format(config=FALLBACK_CONFIG)
    return f"CASE lower(split_part({value}, '-', 1)) {whens} ELSE {fallback} END"


def distinct_configs() -> list[str]:
    """Every configuration a note may be parsed with, `simple` last."""
    return [*dict.fromkeys(SEARCH_CONFIGS.values()), FALLBACK_CONFIG]


# --- PostgreSQL ----------------------------------------------------------------------------

_CONFIG = language_cases("content_language", "'{config}'::regconfig")
# PostgreSQL: a stored generated tsvector of the title (weight A) and the body (weight B), each
# parsed with the text search configuration of the note's content language (SEARCH_CONFIGS, else
# simple), and a GIN index on it, partial on is_publicly_discoverable like the other discovery
# indexes.
POSTGRESQL_DDL: Sequence[str] = (
    f"ALTER TABLE notes ADD COLUMN {SEARCH_VECTOR} tsvector GENERATED ALWAYS AS ("
    f"setweight(to_tsvector({_CONFIG}, title), 'A') || "
    f"setweight(to_tsvector({_CONFIG}, body), 'B')) STORED",
    f"CREATE INDEX {SEARCH_INDEX} ON notes USING gin ({SEARCH_VECTOR}) "
    "WHERE is_publicly_discoverable",
)

# --- SQLite --------------------------------------------------------------------------------

# SQLite: the FTS5 table notes_search (unicode61 tokenizer without diacritics), keyed through
# notes_search_keys: FTS5 rows need an integer key and a note's rowid is not stable (VACUUM and
# table rebuilds renumber it). Triggers keep it in step with notes, so every write path is covered.
SQLITE_TABLES: Sequence[str] = (
    "CREATE TABLE notes_search_keys (id INTEGER PRIMARY KEY, note_id CHAR(32) NOT NULL UNIQUE)",
    "CREATE VIRTUAL TABLE notes_search USING fts5(title, body, "
    "tokenize = 'unicode61 remove_diacritics 2')",
)
SQLITE_TRIGGERS: Sequence[str] = (
    "CREATE TRIGGER notes_search_insert AFTER INSERT ON notes BEGIN "
    "INSERT INTO notes_search_keys (note_id) VALUES (new.id); "
    "INSERT INTO notes_search (rowid, title, body) VALUES "
    "((SELECT id FROM notes_search_keys WHERE note_id = new.id), new.title, new.body); END",
    "CREATE TRIGGER notes_search_update AFTER UPDATE OF title, body ON notes BEGIN "
    "UPDATE notes_search SET title = new.title, body = new.body "
    "WHERE rowid = (SELECT id FROM notes_search_keys WHERE note_id = old.id); END",
    "CREATE TRIGGER notes_search_delete AFTER DELETE ON notes BEGIN "
    "DELETE FROM notes_search WHERE rowid = "
    "(SELECT id FROM notes_search_keys WHERE note_id = old.id); "
    "DELETE FROM notes_search_keys WHERE note_id = old.id; END",
)
SQLITE_DROP: Sequence[str] = (
    f"DROP TABLE IF EXISTS {FTS_TABLE}",
    f"DROP TABLE IF EXISTS {FTS_KEYS}",
)


def _on_notes(when: str, statements: Sequence[str], dialect: str) -> None:
    for statement in statements:
        event.listen(Note.__table__, when, DDL(statement).execute_if(dialect=dialect))


_on_notes("after_create", POSTGRESQL_DDL, "postgresql")
# The FTS tables outlive a dropped `notes` (its triggers go with it): dropped with it.
_on_notes("after_create", (*SQLITE_DROP, *SQLITE_TABLES, *SQLITE_TRIGGERS), "sqlite")
_on_notes("after_drop", SQLITE_DROP, "sqlite")


# --- Alembic's comparison ------------------------------------------------------------------

_TABLES = {FTS_TABLE, FTS_KEYS, *FTS_SHADOW_TABLES}


def compared_with_models(name: str | None, type_: str, parent_names: dict[str, str | None]) -> bool:
    """Alembic `include_name` hook: False for the search objects, which the models do not
    describe (so autogenerate neither drops them nor reports them as differences)."""
    if type_ == "table":
        return name not in _TABLES
    if type_ == "column" and parent_names.get("table_name") == "notes":
        return name != SEARCH_VECTOR
    if type_ == "index":
        return name != SEARCH_INDEX
    return True
