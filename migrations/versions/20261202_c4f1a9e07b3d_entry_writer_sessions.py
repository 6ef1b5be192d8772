"""entry writer sessions: the access session of an anonymous comment or stop

Revision ID: c4f1a9e07b3d
Revises: b61e4d2f8a37
Create Date: 2026-12-02 09:00:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "c4f1a9e07b3d"
down_revision = "b61e4d2f8a37"
branch_labels = None
depends_on = None


def upgrade():
    # Nullable, no foreign key: an anonymous writer's proof for adding photos to its own
    # entry (images targetType 5 and 6), while the session lasts; session ids are never reused.
    with op.batch_alter_table("trackable_comments", schema=None) as batch_op:
        batch_op.add_column(sa.Column("writer_session_id", sa.Uuid(), nullable=True))
    with op.batch_alter_table("journey_stops", schema=None) as batch_op:
        batch_op.add_column(sa.Column("writer_session_id", sa.Uuid(), nullable=True))


def downgrade():
    with op.batch_alter_table("journey_stops", schema=None) as batch_op:
        batch_op.drop_column("writer_session_id")
    with op.batch_alter_table("trackable_comments", schema=None) as batch_op:
        batch_op.drop_column("writer_session_id")
