"""budget spends: the guess budget by client and network, per-account limits

One table for every budget kept in the database (secret code misses of a client and of
its network; secret rotations, trackables created and images uploaded by an account; a
spend of several units is one row with its `amount`) replaces `secret_guess_misses`.
Misses counted before the upgrade are dropped: at worst a client gets one fresh window.

Revision ID: b3d91e6a4f20
Revises: 3b7e51c0a9d2
Create Date: 2026-11-24 10:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b3d91e6a4f20'
down_revision = '3b7e51c0a9d2'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('budget_spends',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('budget', sa.String(length=32), nullable=False),
    sa.Column('subject', sa.String(length=64), nullable=False),
    sa.Column('amount', sa.Integer(), nullable=False),
    sa.Column('spent_utc', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_budget_spends'))
    )
    with op.batch_alter_table('budget_spends', schema=None) as batch_op:
        batch_op.create_index('ix_budget_spends_budget_spent', ['budget', 'spent_utc'], unique=False)
        batch_op.create_index('ix_budget_spends_subject', ['budget', 'subject', 'spent_utc'], unique=False)

    with op.batch_alter_table('secret_guess_misses', schema=None) as batch_op:
        batch_op.drop_index('ix_secret_guess_misses_missed_utc')
        batch_op.drop_index('ix_secret_guess_misses_client')

    op.drop_table('secret_guess_misses')


def downgrade():
    op.create_table('secret_guess_misses',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('client_key', sa.String(length=64), nullable=False),
    sa.Column('missed_utc', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_secret_guess_misses'))
    )
    with op.batch_alter_table('secret_guess_misses', schema=None) as batch_op:
        batch_op.create_index('ix_secret_guess_misses_client', ['client_key', 'missed_utc'], unique=False)
        batch_op.create_index('ix_secret_guess_misses_missed_utc', ['missed_utc'], unique=False)

    with op.batch_alter_table('budget_spends', schema=None) as batch_op:
        batch_op.drop_index('ix_budget_spends_subject')
        batch_op.drop_index('ix_budget_spends_budget_spent')

    op.drop_table('budget_spends')
