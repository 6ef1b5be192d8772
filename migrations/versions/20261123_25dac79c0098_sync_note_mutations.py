"""sync: the clientMutationIds a push applied to each note, so a retried change is
recognised after other writes to the note

Revision ID: 25dac79c0098
Revises: 5e1f0a9c3b27
Create Date: 2026-11-23 19:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '25dac79c0098'
down_revision = '5e1f0a9c3b27'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'sync_note_mutations',
        sa.Column('note_id', sa.Uuid(), nullable=False),
        sa.Column('client_mutation_id', sa.String(length=100), nullable=False),
        sa.ForeignKeyConstraint(['note_id'], ['notes.id'], name=op.f('fk_sync_note_mutations_note_id_notes'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('note_id', 'client_mutation_id', name=op.f('pk_sync_note_mutations')),
    )


def downgrade():
    op.drop_table('sync_note_mutations')
