"""jobs: the fair key of a job (one job per key at a time in its lane)

Revision ID: d2a8e6c41f95
Revises: c41e7a2d9b86
Create Date: 2026-12-06 09:00:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "d2a8e6c41f95"
down_revision = "c41e7a2d9b86"
branch_labels = None
depends_on = None


def upgrade():
    # Nullable: the previous release keeps enqueueing without it.
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("fair_key", sa.String(length=100), nullable=True))


def downgrade():
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_column("fair_key")
