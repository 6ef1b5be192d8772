"""webhooks: subscriptions, their deliveries and every attempt

Revision ID: a7d3f9c2e514
Revises: a7c3e91f5d20
Create Date: 2026-11-29 09:00:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "a7d3f9c2e514"
down_revision = "a7c3e91f5d20"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "webhook_subscriptions",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("owner_user_id", sa.Uuid(), nullable=False),
        sa.Column("team_id", sa.Uuid(), nullable=True),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("event_types", sa.JSON(), nullable=False),
        sa.Column("is_enabled", sa.Boolean(), nullable=False),
        sa.Column("secret_encrypted", sa.Text(), nullable=False),
        sa.Column("previous_secret_encrypted", sa.Text(), nullable=True),
        sa.Column("previous_secret_expires_utc", sa.DateTime(timezone=True), nullable=True),
        sa.Column("failing_since_utc", sa.DateTime(timezone=True), nullable=True),
        sa.Column("disabled_reason", sa.String(length=50), nullable=True),
        sa.Column("created_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("drain_job_id", sa.Uuid(), nullable=True),
        sa.Column("drain_due_utc", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["owner_user_id"],
            ["users.id"],
            name=op.f("fk_webhook_subscriptions_owner_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["team_id"],
            ["teams.id"],
            name=op.f("fk_webhook_subscriptions_team_id_teams"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_subscriptions")),
    )
    with op.batch_alter_table("webhook_subscriptions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_webhook_subscriptions_owner_user_id"), ["owner_user_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_webhook_subscriptions_team_id"), ["team_id"], unique=False
        )

    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("subscription_id", sa.Uuid(), nullable=False),
        sa.Column("event_id", sa.Uuid(), nullable=True),
        sa.Column("event_type", sa.String(length=50), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=20), nullable=False),
        sa.Column("attempt_count", sa.Integer(), nullable=False),
        sa.Column("created_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_attempt_utc", sa.DateTime(timezone=True), nullable=True),
        sa.Column("retry_until_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("next_try_utc", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_webhook_deliveries_event_id_events"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["subscription_id"],
            ["webhook_subscriptions.id"],
            name=op.f("fk_webhook_deliveries_subscription_id_webhook_subscriptions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_deliveries")),
        sa.UniqueConstraint(
            "subscription_id", "event_id", name=op.f("uq_webhook_deliveries_subscription_id")
        ),
    )
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_webhook_deliveries_created_utc"), ["created_utc"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_webhook_deliveries_event_id"), ["event_id"], unique=False
        )
        batch_op.create_index(
            "ix_webhook_deliveries_list", ["subscription_id", "created_utc", "id"], unique=False
        )
        batch_op.create_index(
            "ix_webhook_deliveries_due", ["subscription_id", "state", "next_try_utc"], unique=False
        )

    op.create_table(
        "webhook_attempts",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("delivery_id", sa.Uuid(), nullable=False),
        sa.Column("attempted_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("latency_ms", sa.Integer(), nullable=False),
        sa.Column("response_excerpt", sa.String(length=1000), nullable=False),
        sa.Column("error", sa.String(length=500), nullable=True),
        sa.Column("succeeded", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["delivery_id"],
            ["webhook_deliveries.id"],
            name=op.f("fk_webhook_attempts_delivery_id_webhook_deliveries"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_attempts")),
    )
    with op.batch_alter_table("webhook_attempts", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_webhook_attempts_delivery_id"), ["delivery_id"], unique=False
        )


def downgrade():
    with op.batch_alter_table("webhook_attempts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhook_attempts_delivery_id"))
    op.drop_table("webhook_attempts")
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_webhook_deliveries_due")
        batch_op.drop_index("ix_webhook_deliveries_list")
        batch_op.drop_index(batch_op.f("ix_webhook_deliveries_event_id"))
        batch_op.drop_index(batch_op.f("ix_webhook_deliveries_created_utc"))
    op.drop_table("webhook_deliveries")
    with op.batch_alter_table("webhook_subscriptions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhook_subscriptions_team_id"))
        batch_op.drop_index(batch_op.f("ix_webhook_subscriptions_owner_user_id"))
    op.drop_table("webhook_subscriptions")
