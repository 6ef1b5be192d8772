"""sync change clock: stamps on notes and categories, team departures

Existing rows are stamped with their updatedUtc and the clock starts at the upgrade's time,
so a first pull after the upgrade sees them all.

Revision ID: fbb4a88ca67d
Revises: 7c818febc6de
Create Date: 2026-11-23 15:38:26.670205

"""
from datetime import UTC, datetime

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'fbb4a88ca67d'
down_revision = '7c818febc6de'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('sync_clock',
    sa.Column('id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('last_utc', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_sync_clock'))
    )
    op.create_table('sync_departures',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('team_id', sa.Uuid(), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=True),
    sa.Column('entity_id', sa.Uuid(), nullable=True),
    sa.Column('sync_utc', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_sync_departures'))
    )
    with op.batch_alter_table('sync_departures', schema=None) as batch_op:
        batch_op.create_index('ix_sync_departures_team_sync', ['team_id', 'sync_utc'], unique=False)
        batch_op.create_index('ix_sync_departures_unstamped', ['id'], unique=False, postgresql_where=sa.text('sync_utc IS NULL'), sqlite_where=sa.text('sync_utc IS NULL'))
        batch_op.create_index('ix_sync_departures_user_sync', ['user_id', 'sync_utc'], unique=False)

    with op.batch_alter_table('categories', schema=None) as batch_op:
        batch_op.add_column(sa.Column('sync_utc', sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index('ix_categories_owner_sync', ['owner_user_id', 'sync_utc'], unique=False)
        batch_op.create_index('ix_categories_team_sync', ['team_id', 'sync_utc'], unique=False)
        batch_op.create_index('ix_categories_unstamped', ['id'], unique=False, postgresql_where=sa.text('sync_utc IS NULL'), sqlite_where=sa.text('sync_utc IS NULL'))

    with op.batch_alter_table('notes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('sync_utc', sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index('ix_notes_owner_sync', ['owner_user_id', 'sync_utc'], unique=False)
        batch_op.create_index('ix_notes_team_sync', ['team_id', 'sync_utc'], unique=False)
        batch_op.create_index('ix_notes_unstamped', ['id'], unique=False, postgresql_where=sa.text('sync_utc IS NULL'), sqlite_where=sa.text('sync_utc IS NULL'))

    op.execute("UPDATE notes SET sync_utc = updated_utc")
    op.execute("UPDATE categories SET sync_utc = updated_utc")
    clock = sa.table(
        'sync_clock', sa.column('id', sa.Integer()), sa.column('last_utc', sa.DateTime(timezone=True))
    )
    op.bulk_insert(clock, [{'id': 1, 'last_utc': datetime.now(UTC)}])


def downgrade():
    with op.batch_alter_table('notes', schema=None) as batch_op:
        batch_op.drop_index('ix_notes_unstamped', postgresql_where=sa.text('sync_utc IS NULL'), sqlite_where=sa.text('sync_utc IS NULL'))
        batch_op.drop_index('ix_notes_team_sync')
        batch_op.drop_index('ix_notes_owner_sync')
        batch_op.drop_column('sync_utc')

    with op.batch_alter_table('categories', schema=None) as batch_op:
        batch_op.drop_index('ix_categories_unstamped', postgresql_where=sa.text('sync_utc IS NULL'), sqlite_where=sa.text('sync_utc IS NULL'))
        batch_op.drop_index('ix_categories_team_sync')
        batch_op.drop_index('ix_categories_owner_sync')
        batch_op.drop_column('sync_utc')

    with op.batch_alter_table('sync_departures', schema=None) as batch_op:
        batch_op.drop_index('ix_sync_departures_user_sync')
        batch_op.drop_index('ix_sync_departures_unstamped', postgresql_where=sa.text('sync_utc IS NULL'), sqlite_where=sa.text('sync_utc IS NULL'))
        batch_op.drop_index('ix_sync_departures_team_sync')

    op.drop_table('sync_departures')
    op.drop_table('sync_clock')
