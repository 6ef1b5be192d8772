"""event team: the team an event's subject belongs to, for team admins and team webhooks

Revision ID: 5b0e7c3d9a21
Revises: e8814d97c75e
Create Date: 2026-11-28 09:00:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "5b0e7c3d9a21"
down_revision = "e8814d97c75e"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.add_column(sa.Column("team_id", sa.Uuid(), nullable=True))
        batch_op.create_index(batch_op.f("ix_events_team_id"), ["team_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_events_team_id_teams"), "teams", ["team_id"], ["id"], ondelete="CASCADE"
        )


def downgrade():
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_events_team_id_teams"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_events_team_id"))
        batch_op.drop_column("team_id")
