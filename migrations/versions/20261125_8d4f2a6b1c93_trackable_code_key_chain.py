"""trackable codes: the code key chain (fingerprints) and each code's key generation

Revision ID: 8d4f2a6b1c93
Revises: 3b9e1c7d2a10
Create Date: 2026-11-25 18:40:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '8d4f2a6b1c93'
down_revision = '3b9e1c7d2a10'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('trackable_code_keys',
    sa.Column('generation', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('fingerprint', sa.String(length=64), nullable=False),
    sa.Column('added_utc', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('generation', name=op.f('pk_trackable_code_keys'))
    )
    with op.batch_alter_table('trackable_codes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('key_generation', sa.Integer(), server_default='0', nullable=False))
        batch_op.create_index(batch_op.f('ix_trackable_codes_key_generation'), ['key_generation'], unique=False)


def downgrade():
    with op.batch_alter_table('trackable_codes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_trackable_codes_key_generation'))
        batch_op.drop_column('key_generation')

    op.drop_table('trackable_code_keys')
