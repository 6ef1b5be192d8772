"""content reports: reviewer name, review link, sender key, failure fingerprint, occurrences

Revision ID: da7cd4a924d8
Revises: da76b4e7f26b
Create Date: 2026-11-23 13:50:52.136111

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'da7cd4a924d8'
down_revision = 'da76b4e7f26b'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('content_reports', schema=None) as batch_op:
        batch_op.add_column(sa.Column('reviewer_display_name', sa.String(length=100), nullable=True))
        batch_op.add_column(sa.Column('review_url', sa.String(length=2048), nullable=True))
        batch_op.add_column(sa.Column('client_key', sa.String(length=72), nullable=True))
        batch_op.add_column(sa.Column('fingerprint', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('occurrences', sa.Integer(), server_default='1', nullable=False))
        batch_op.create_index('ix_content_reports_client_key_created_utc', ['client_key', 'created_utc'], unique=False)
        batch_op.create_index('ix_content_reports_created_utc', ['created_utc'], unique=False)


def downgrade():
    with op.batch_alter_table('content_reports', schema=None) as batch_op:
        batch_op.drop_index('ix_content_reports_created_utc')
        batch_op.drop_index('ix_content_reports_client_key_created_utc')
        batch_op.drop_column('occurrences')
        batch_op.drop_column('fingerprint')
        batch_op.drop_column('client_key')
        batch_op.drop_column('review_url')
        batch_op.drop_column('reviewer_display_name')
