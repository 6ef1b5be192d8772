"""rate limits: Flask-Limiter's fixed-window counters in the database

Revision ID: 3b9e1c7d2a10
Revises: b3d91e6a4f20
Create Date: 2026-11-25 18:30:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '3b9e1c7d2a10'
down_revision = 'b3d91e6a4f20'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('rate_limit_counters',
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('hits', sa.Integer(), nullable=False),
    sa.Column('window_ends_epoch', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('key', name=op.f('pk_rate_limit_counters'))
    )
    with op.batch_alter_table('rate_limit_counters', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_rate_limit_counters_window_ends_epoch'), ['window_ends_epoch'], unique=False)


def downgrade():
    with op.batch_alter_table('rate_limit_counters', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_rate_limit_counters_window_ends_epoch'))

    op.drop_table('rate_limit_counters')
