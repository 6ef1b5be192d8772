"""discovery at the floor: the owner's user name stored on notes (kept in step by a
foreign key that cascades renames), and a language-then-activity index for discovery

Revision ID: 5e1f0a9c3b27
Revises: fbb4a88ca67d
Create Date: 2026-11-23 16:00:00.000000

"""
from contextlib import contextmanager

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '5e1f0a9c3b27'
down_revision = 'fbb4a88ca67d'
branch_labels = None
depends_on = None

DISCOVERABLE = sa.text('is_publicly_discoverable')
# SQLite uses a partial index only when the query's WHERE has the index's condition as
# written, and SQLAlchemy writes a boolean column there as `is_publicly_discoverable = 1`
# (SQLite has no boolean type): the earlier bare condition left every partial index unused.
SQLITE_DISCOVERABLE = sa.text('is_publicly_discoverable = 1')


def _create_sorted_indexes(sqlite_where):
    op.create_index('ix_notes_owner_activity', 'notes', ['owner_user_id', sa.literal_column('last_activity_utc DESC')], unique=False)
    op.create_index('ix_notes_public_activity', 'notes', [sa.literal_column('last_activity_utc DESC'), sa.literal_column('id DESC')], unique=False, postgresql_where=DISCOVERABLE, postgresql_include=['latitude', 'longitude', 'content_language'], sqlite_where=sqlite_where)
    op.create_index('ix_notes_public_position', 'notes', ['latitude', 'longitude'], unique=False, postgresql_where=DISCOVERABLE, postgresql_include=['last_activity_utc', 'id', 'content_language'], sqlite_where=sqlite_where)
    op.create_index('ix_notes_team_activity', 'notes', ['team_id', sa.literal_column('last_activity_utc DESC')], unique=False)


@contextmanager
def _rebuilding_notes(sqlite_where):
    """SQLite rebuilds the table to change a column or a foreign key, and Alembic's batch
    mode cannot reflect indexes on `DESC` expressions or keep a partial index's WHERE: on
    SQLite those indexes are dropped before and made again after (the partial ones with
    `sqlite_where`). PostgreSQL alters in place and keeps them."""
    sqlite = op.get_bind().dialect.name == 'sqlite'
    if sqlite:
        for name in ('ix_notes_owner_activity', 'ix_notes_public_activity', 'ix_notes_public_position', 'ix_notes_team_activity'):
            op.drop_index(name, table_name='notes')
    with op.batch_alter_table('notes', schema=None) as batch_op:
        yield batch_op
    if sqlite:
        _create_sorted_indexes(sqlite_where)


def upgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.create_index('uq_users_id_user_name', ['id', 'user_name'], unique=True)

    with op.batch_alter_table('notes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('owner_user_name', sa.String(length=32), nullable=True))

    op.execute(
        'UPDATE notes SET owner_user_name = '
        '(SELECT users.user_name FROM users WHERE users.id = notes.owner_user_id)'
    )

    with _rebuilding_notes(SQLITE_DISCOVERABLE) as batch_op:
        batch_op.alter_column('owner_user_name', existing_type=sa.String(length=32), nullable=False)
        batch_op.create_foreign_key(
            'fk_notes_owner_user_name_users',
            'users',
            ['owner_user_id', 'owner_user_name'],
            ['id', 'user_name'],
            onupdate='CASCADE',
        )

    op.create_index('ix_notes_public_language_activity', 'notes', ['content_language', sa.literal_column('last_activity_utc DESC'), sa.literal_column('id DESC')], unique=False, postgresql_where=DISCOVERABLE, postgresql_include=['latitude', 'longitude'], sqlite_where=SQLITE_DISCOVERABLE)


def downgrade():
    op.drop_index('ix_notes_public_language_activity', table_name='notes')

    with _rebuilding_notes(DISCOVERABLE) as batch_op:
        batch_op.drop_constraint('fk_notes_owner_user_name_users', type_='foreignkey')
        batch_op.drop_column('owner_user_name')

    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_index('uq_users_id_user_name')
