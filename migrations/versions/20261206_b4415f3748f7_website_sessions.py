"""website sessions kept on the server, and what signed in with a refresh token

Revision ID: b4415f3748f7
Revises: 6a0752c1da1e
Create Date: 2026-12-06 20:40:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "b4415f3748f7"
down_revision = "6a0752c1da1e"
branch_labels = None
depends_on = None


def upgrade():
    # A new table: the previous release neither reads nor writes it (its browsers keep
    # their signed cookies until they sign in again).
    op.create_table(
        "website_sessions",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("security_stamp", sa.String(length=64), nullable=False),
        sa.Column("device", sa.String(length=64), nullable=False),
        sa.Column("created_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_utc", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_website_sessions_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_website_sessions")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_website_sessions_token_hash")),
    )
    op.create_index(
        op.f("ix_website_sessions_user_id"), "website_sessions", ["user_id"], unique=False
    )
    # Nullable: the previous release keeps issuing refresh tokens without them.
    with op.batch_alter_table("refresh_tokens", schema=None) as batch_op:
        batch_op.add_column(sa.Column("device", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("signed_in_utc", sa.DateTime(timezone=True), nullable=True))


def downgrade():
    with op.batch_alter_table("refresh_tokens", schema=None) as batch_op:
        batch_op.drop_column("signed_in_utc")
        batch_op.drop_column("device")
    op.drop_index(op.f("ix_website_sessions_user_id"), table_name="website_sessions")
    op.drop_table("website_sessions")
