"""webhook subscriptions: the circuit of timed-out tries, and refused tries in a row

Revision ID: e5b9c3a1d047
Revises: d2a8e6c41f95
Create Date: 2026-12-06 09:30:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "e5b9c3a1d047"
down_revision = "d2a8e6c41f95"
branch_labels = None
depends_on = None


def upgrade():
    # Server defaults or nullable: the previous release keeps creating subscriptions
    # without knowing these columns.
    with op.batch_alter_table("webhook_subscriptions", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("timeouts_in_a_row", sa.Integer(), server_default="0", nullable=False)
        )
        batch_op.add_column(
            sa.Column("paused_until_utc", sa.DateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(
            sa.Column("pause_seconds", sa.Integer(), server_default="0", nullable=False)
        )
        batch_op.add_column(
            sa.Column("refused_in_a_row", sa.Integer(), server_default="0", nullable=False)
        )


def downgrade():
    with op.batch_alter_table("webhook_subscriptions", schema=None) as batch_op:
        batch_op.drop_column("refused_in_a_row")
        batch_op.drop_column("pause_seconds")
        batch_op.drop_column("paused_until_utc")
        batch_op.drop_column("timeouts_in_a_row")
