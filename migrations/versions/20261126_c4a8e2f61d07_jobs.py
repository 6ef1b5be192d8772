"""jobs: the durable job queue (app.platform.jobs), account mail first

Revision ID: c4a8e2f61d07
Revises: 5eba41608079
Create Date: 2026-11-26 09:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'c4a8e2f61d07'
down_revision = '5eba41608079'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('jobs',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('kind', sa.String(length=100), nullable=False),
    sa.Column('payload', sa.JSON(), nullable=False),
    sa.Column('state', sa.Enum('queued', 'done', 'dead', name='jobstate', native_enum=False, length=16), nullable=False),
    sa.Column('run_after_utc', sa.DateTime(timezone=True), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('locked_until_utc', sa.DateTime(timezone=True), nullable=True),
    sa.Column('locked_by', sa.String(length=200), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('created_utc', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_utc', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_jobs'))
    )
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.create_index('ix_jobs_state_run_after', ['state', 'run_after_utc'], unique=False)


def downgrade():
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_index('ix_jobs_state_run_after')

    op.drop_table('jobs')
