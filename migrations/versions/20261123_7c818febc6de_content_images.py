"""content images: one row per uploaded image, its parent named by target type and id

Revision ID: 7c818febc6de
Revises: d07e2ee09a65
Create Date: 2026-11-23 13:50:03.972625

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '7c818febc6de'
down_revision = 'd07e2ee09a65'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('content_images',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('target_type', sa.Integer(), nullable=False),
    sa.Column('parent_id', sa.Uuid(), nullable=False),
    sa.Column('uploaded_by_user_id', sa.Uuid(), nullable=True),
    sa.Column('original_width', sa.Integer(), nullable=False),
    sa.Column('original_height', sa.Integer(), nullable=False),
    sa.Column('created_utc', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_content_images'))
    )
    with op.batch_alter_table('content_images', schema=None) as batch_op:
        batch_op.create_index('ix_content_images_target', ['target_type', 'parent_id'], unique=False)



def downgrade():
    with op.batch_alter_table('content_images', schema=None) as batch_op:
        batch_op.drop_index('ix_content_images_target')

    op.drop_table('content_images')
