"""quota uses: per-account budgets over a sliding window (images uploaded per day,
trackables created per hour)

Revision ID: 94207f7d0c05
Revises: 25dac79c0098
Create Date: 2026-11-25 18:12:56.680362

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '94207f7d0c05'
down_revision = '25dac79c0098'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'quota_uses',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('user_id', sa.Uuid(), nullable=False),
        sa.Column('kind', sa.String(length=32), nullable=False),
        sa.Column('amount', sa.Integer(), nullable=False),
        sa.Column('used_utc', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_quota_uses_user_id_users'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_quota_uses')),
    )
    op.create_index('ix_quota_uses_user_kind', 'quota_uses', ['user_id', 'kind', 'used_utc'], unique=False)


def downgrade():
    op.drop_index('ix_quota_uses_user_kind', table_name='quota_uses')
    op.drop_table('quota_uses')
