"""account exports: personal data exports until they are swept

Revision ID: b61e4d2f8a37
Revises: a7d3f9c2e514
Create Date: 2026-12-02 09:00:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "b61e4d2f8a37"
down_revision = "a7d3f9c2e514"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "account_exports",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("created_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_utc", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_utc", sa.DateTime(timezone=True), nullable=True),
        sa.Column("expires_utc", sa.DateTime(timezone=True), nullable=True),
        sa.Column("size_bytes", sa.BigInteger(), nullable=True),
        sa.Column("storage_key", sa.String(length=200), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_account_exports_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_account_exports")),
    )
    with op.batch_alter_table("account_exports", schema=None) as batch_op:
        batch_op.create_index("ix_account_exports_user", ["user_id", "created_utc"], unique=False)
        batch_op.create_index("ix_account_exports_state", ["state", "created_utc"], unique=False)


def downgrade():
    with op.batch_alter_table("account_exports", schema=None) as batch_op:
        batch_op.drop_index("ix_account_exports_state")
        batch_op.drop_index("ix_account_exports_user")

    op.drop_table("account_exports")
