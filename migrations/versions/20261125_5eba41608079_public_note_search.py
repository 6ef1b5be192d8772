"""public note search: a tsvector with a GIN index (PostgreSQL), an FTS5 table kept by
triggers (SQLite)

The same objects as app/models/note_search.py makes after create_all (a copy, as
migrations keep their own; tests/test_migrations.py checks that both agree).

Revision ID: 5eba41608079
Revises: 8d4f2a6b1c93
Create Date: 2026-11-25 19:20:00.000000

"""
from alembic import op


# revision identifiers, used by Alembic.
revision = '5eba41608079'
down_revision = '8d4f2a6b1c93'
branch_labels = None
depends_on = None

# Primary language subtag -> PostgreSQL text search configuration; `simple` otherwise.
CONFIGS = {
    'ar': 'arabic', 'hy': 'armenian', 'eu': 'basque', 'ca': 'catalan', 'da': 'danish',
    'nl': 'dutch', 'en': 'english', 'fi': 'finnish', 'fr': 'french', 'de': 'german',
    'el': 'greek', 'hi': 'hindi', 'hu': 'hungarian', 'id': 'indonesian', 'ga': 'irish',
    'it': 'italian', 'lt': 'lithuanian', 'ne': 'nepali', 'nb': 'norwegian',
    'nn': 'norwegian', 'no': 'norwegian', 'pt': 'portuguese', 'ro': 'romanian',
    'ru': 'russian', 'sr': 'serbian', 'es': 'spanish', 'sv': 'swedish', 'ta': 'tamil',
    'tr': 'turkish', 'yi': 'yiddish',
}
CONFIG = (
    "CASE lower(split_part(content_language, '-', 1)) "
    + " ".join(f"WHEN '{subtag}' THEN '{config}'::regconfig" for subtag, config in CONFIGS.items())
    + " ELSE 'simple'::regconfig END"
)

SQLITE_UPGRADE = (
    'CREATE TABLE notes_search_keys (id INTEGER PRIMARY KEY, note_id CHAR(32) NOT NULL UNIQUE)',
    "CREATE VIRTUAL TABLE notes_search USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2')",
    'INSERT INTO notes_search_keys (note_id) SELECT id FROM notes',
    'INSERT INTO notes_search (rowid, title, body) '
    'SELECT notes_search_keys.id, notes.title, notes.body '
    'FROM notes JOIN notes_search_keys ON notes_search_keys.note_id = notes.id',
    'CREATE TRIGGER notes_search_insert AFTER INSERT ON notes BEGIN '
    'INSERT INTO notes_search_keys (note_id) VALUES (new.id); '
    'INSERT INTO notes_search (rowid, title, body) VALUES '
    '((SELECT id FROM notes_search_keys WHERE note_id = new.id), new.title, new.body); END',
    'CREATE TRIGGER notes_search_update AFTER UPDATE OF title, body ON notes BEGIN '
    'UPDATE notes_search SET title = new.title, body = new.body '
    'WHERE rowid = (SELECT id FROM notes_search_keys WHERE note_id = old.id); END',
    'CREATE TRIGGER notes_search_delete AFTER DELETE ON notes BEGIN '
    'DELETE FROM notes_search WHERE rowid = '
    '(SELECT id FROM notes_search_keys WHERE note_id = old.id); '
    'DELETE FROM notes_search_keys WHERE note_id = old.id; END',
)

def upgrade():
    if op.get_bind().dialect.name == 'sqlite':
        for statement in SQLITE_UPGRADE:
            op.execute(statement)
        return
    # Rewrites the table (a stored generated column), under an exclusive lock.
    op.execute(
        'ALTER TABLE notes ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ('
        f"setweight(to_tsvector({CONFIG}, title), 'A') || "
        f"setweight(to_tsvector({CONFIG}, body), 'B')) STORED"
    )
    op.execute(
        'CREATE INDEX ix_notes_search ON notes USING gin (search_vector) '
        'WHERE is_publicly_discoverable'
    )


def downgrade():
    if op.get_bind().dialect.name == 'sqlite':
        for name in ('insert', 'update', 'delete'):
            op.execute(f'DROP TRIGGER IF EXISTS notes_search_{name}')
        op.execute('DROP TABLE IF EXISTS notes_search')
        op.execute('DROP TABLE IF EXISTS notes_search_keys')
        return
    op.execute('DROP INDEX IF EXISTS ix_notes_search')
    op.execute('ALTER TABLE notes DROP COLUMN IF EXISTS search_vector')
