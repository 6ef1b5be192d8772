"""client payload hashes: the fingerprint of a tagged comment, journey stop or sync change

Rows written before stay NULL: their retries are answered as before.

Revision ID: 3b7e51c0a9d2
Revises: 25dac79c0098
Create Date: 2026-11-24 10:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '3b7e51c0a9d2'
down_revision = '25dac79c0098'
branch_labels = None
depends_on = None

TABLES = {
    'trackable_comments': 'client_payload_hash',
    'journey_stops': 'client_payload_hash',
    'sync_note_mutations': 'payload_hash',
}


def upgrade():
    for table, column in TABLES.items():
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column(column, sa.String(length=64), nullable=True))


def downgrade():
    for table, column in TABLES.items():
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column(column)
