"""users and tracked system errors

Revision ID: b651406999ef
Revises: 
Create Date: 2026-11-22 04:29:06.326378

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b651406999ef'
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('users',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('email', sa.String(length=254), nullable=False),
    sa.Column('normalized_email', sa.String(length=254), nullable=False),
    sa.Column('user_name', sa.String(length=32), nullable=False),
    sa.Column('display_name', sa.String(length=100), nullable=False),
    sa.Column('password_hash', sa.String(length=255), nullable=False),
    sa.Column('is_email_confirmed', sa.Boolean(), nullable=False),
    sa.Column('is_superadmin', sa.Boolean(), nullable=False),
    sa.Column('security_stamp', sa.String(length=64), nullable=False),
    sa.Column('experience_mode', sa.String(length=32), nullable=True),
    sa.Column('map_source', sa.String(length=32), nullable=True),
    sa.Column('created_utc', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_utc', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_users')),
    sa.UniqueConstraint('normalized_email', name=op.f('uq_users_normalized_email')),
    sa.UniqueConstraint('user_name', name=op.f('uq_users_user_name'))
    )
    op.create_table('content_reports',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('reporter_user_id', sa.Uuid(), nullable=True),
    sa.Column('reviewer_user_id', sa.Uuid(), nullable=True),
    sa.Column('page_type', sa.Integer(), nullable=False),
    sa.Column('content_type', sa.Integer(), nullable=False),
    sa.Column('status', sa.Integer(), nullable=False),
    sa.Column('page_title', sa.String(length=300), nullable=False),
    sa.Column('page_url', sa.String(length=2048), nullable=False),
    sa.Column('page_reference', sa.String(length=300), nullable=False),
    sa.Column('content_label', sa.String(length=300), nullable=False),
    sa.Column('content_reference', sa.String(length=300), nullable=False),
    sa.Column('content_preview', sa.Text(), nullable=False),
    sa.Column('report_title', sa.String(length=300), nullable=False),
    sa.Column('report_explanation', sa.Text(), nullable=False),
    sa.Column('resolution_text', sa.Text(), nullable=False),
    sa.Column('ticket_number', sa.String(length=32), nullable=True),
    sa.Column('track_in_support_tickets', sa.Boolean(), nullable=False),
    sa.Column('error_details', sa.JSON(), nullable=True),
    sa.Column('client_context', sa.JSON(), nullable=True),
    sa.Column('created_utc', sa.DateTime(timezone=True), nullable=False),
    sa.Column('reviewed_utc', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['reporter_user_id'], ['users.id'], name=op.f('fk_content_reports_reporter_user_id_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['reviewer_user_id'], ['users.id'], name=op.f('fk_content_reports_reviewer_user_id_users'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_content_reports')),
    sa.UniqueConstraint('ticket_number', name=op.f('uq_content_reports_ticket_number'))
    )
    with op.batch_alter_table('content_reports', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_content_reports_reporter_user_id'), ['reporter_user_id'], unique=False)



def downgrade():
    with op.batch_alter_table('content_reports', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_content_reports_reporter_user_id'))

    op.drop_table('content_reports')
    op.drop_table('users')
