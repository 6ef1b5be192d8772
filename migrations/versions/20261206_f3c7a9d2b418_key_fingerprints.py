"""key fingerprints: the records key stored data was made under

Revision ID: f3c7a9d2b418
Revises: e5b9c3a1d047
Create Date: 2026-12-06 18:30:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "f3c7a9d2b418"
down_revision = "e5b9c3a1d047"
branch_labels = None
depends_on = None


def upgrade():
    # A new table: the previous release neither reads nor writes it.
    op.create_table(
        "key_fingerprints",
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("recorded_utc", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_key_fingerprints")),
    )


def downgrade():
    op.drop_table("key_fingerprints")
