"""notification mail: each user's mail setting, each notification's mail, pending digests

Revision ID: a7c3e91f5d20
Revises: a7c3e91f0b52
Create Date: 2026-11-29 09:00:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "a7c3e91f5d20"
down_revision = "a7c3e91f0b52"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "notification_settings",
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("mail", sa.Enum("none", "each", "daily", name="mailchoice", native_enum=False, length=16), nullable=False),
        sa.Column("language", sa.String(length=8), nullable=False),
        sa.Column("updated_utc", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_notification_settings_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_notification_settings")),
    )
    op.create_table(
        "notification_mails",
        sa.Column("notification_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("kind", sa.Enum("each", "digest", name="mailkind", native_enum=False, length=16), nullable=False),
        sa.Column("state", sa.Enum("queued", "sent", "skipped", name="mailstate", native_enum=False, length=16), nullable=False),
        sa.Column("created_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_utc", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["notification_id"], ["notifications.id"], name=op.f("fk_notification_mails_notification_id_notifications"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_notification_mails_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("notification_id", name=op.f("pk_notification_mails")),
    )
    with op.batch_alter_table("notification_mails", schema=None) as batch_op:
        batch_op.create_index("ix_notification_mails_queue", ["user_id", "state"], unique=False)

    op.create_table(
        "notification_digests",
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("due_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("job_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_notification_digests_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_notification_digests")),
    )


def downgrade():
    op.drop_table("notification_digests")
    with op.batch_alter_table("notification_mails", schema=None) as batch_op:
        batch_op.drop_index("ix_notification_mails_queue")

    op.drop_table("notification_mails")
    op.drop_table("notification_settings")
