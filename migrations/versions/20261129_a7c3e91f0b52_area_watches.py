"""area watches: users' watched map windows, and events found by their note

Revision ID: a7c3e91f0b52
Revises: 5b0e7c3d9a21
Create Date: 2026-11-29 09:00:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "a7c3e91f0b52"
down_revision = "5b0e7c3d9a21"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "area_watches",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("min_latitude", sa.Float(), nullable=False),
        sa.Column("min_longitude", sa.Float(), nullable=False),
        sa.Column("max_latitude", sa.Float(), nullable=False),
        sa.Column("max_longitude", sa.Float(), nullable=False),
        sa.Column("content_language", sa.String(length=35), nullable=True),
        sa.Column("created_utc", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_area_watches_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_area_watches")),
    )
    with op.batch_alter_table("area_watches", schema=None) as batch_op:
        batch_op.create_index(
            "ix_area_watches_box",
            ["min_latitude", "max_latitude", "min_longitude", "max_longitude"],
            unique=False,
        )
        batch_op.create_index(
            "ix_area_watches_user", ["user_id", "created_utc", "id"], unique=False
        )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_events_note_id"), ["note_id"], unique=False)


def downgrade():
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_events_note_id"))
    with op.batch_alter_table("area_watches", schema=None) as batch_op:
        batch_op.drop_index("ix_area_watches_user")
        batch_op.drop_index("ix_area_watches_box")
    op.drop_table("area_watches")
