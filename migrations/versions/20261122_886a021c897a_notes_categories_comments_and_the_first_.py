"""notes, categories, comments and the first trackable tables

Revision ID: 886a021c897a
Revises: 48238f54edf9
Create Date: 2026-11-22 05:11:00.682882

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '886a021c897a'
down_revision = '48238f54edf9'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('categories',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('owner_user_id', sa.Uuid(), nullable=True),
    sa.Column('team_id', sa.Uuid(), nullable=True),
    sa.Column('parent_category_id', sa.Uuid(), nullable=True),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('content_language', sa.String(length=35), nullable=False),
    sa.Column('is_deleted', sa.Boolean(), nullable=False),
    sa.Column('created_utc', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_utc', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint('(owner_user_id IS NULL) <> (team_id IS NULL)', name=op.f('ck_categories_one_owner_scope')),
    sa.ForeignKeyConstraint(['owner_user_id'], ['users.id'], name=op.f('fk_categories_owner_user_id_users')),
    sa.ForeignKeyConstraint(['parent_category_id'], ['categories.id'], name=op.f('fk_categories_parent_category_id_categories')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_categories'))
    )
    with op.batch_alter_table('categories', schema=None) as batch_op:
        batch_op.create_index('ix_categories_owner_language', ['owner_user_id', 'content_language'], unique=False)
        batch_op.create_index(batch_op.f('ix_categories_parent_category_id'), ['parent_category_id'], unique=False)
        batch_op.create_index('ix_categories_team_language', ['team_id', 'content_language'], unique=False)

    op.create_table('trackables',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('owner_user_id', sa.Uuid(), nullable=True),
    sa.Column('team_id', sa.Uuid(), nullable=True),
    sa.Column('public_code', sa.String(length=32), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('created_utc', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_activity_utc', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['owner_user_id'], ['users.id'], name=op.f('fk_trackables_owner_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_trackables')),
    sa.UniqueConstraint('public_code', name=op.f('uq_trackables_public_code'))
    )
    with op.batch_alter_table('trackables', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_trackables_owner_user_id'), ['owner_user_id'], unique=False)

    op.create_table('notes',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('owner_user_id', sa.Uuid(), nullable=False),
    sa.Column('team_id', sa.Uuid(), nullable=True),
    sa.Column('category_id', sa.Uuid(), nullable=False),
    sa.Column('title', sa.String(length=200), nullable=False),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('content_language', sa.String(length=35), nullable=False),
    sa.Column('latitude', sa.Float(), nullable=True),
    sa.Column('longitude', sa.Float(), nullable=True),
    sa.Column('visibility', sa.Enum('Private', 'Public', 'VisibleOnceAssociatedTrackableAccessed', name='notevisibility', native_enum=False, length=64), nullable=False),
    sa.Column('comment_policy', sa.Enum('LoggedInUsers', 'TeamMembers', name='commentpolicy', native_enum=False, length=64), nullable=False),
    sa.Column('external_link_url', sa.String(length=2048), nullable=True),
    sa.Column('external_link_description', sa.String(length=500), nullable=False),
    sa.Column('client_mutation_id', sa.String(length=100), nullable=True),
    sa.Column('is_deleted', sa.Boolean(), nullable=False),
    sa.Column('is_publicly_discoverable', sa.Boolean(), nullable=False),
    sa.Column('created_utc', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_utc', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_activity_utc', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['category_id'], ['categories.id'], name=op.f('fk_notes_category_id_categories')),
    sa.ForeignKeyConstraint(['owner_user_id'], ['users.id'], name=op.f('fk_notes_owner_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_notes'))
    )
    with op.batch_alter_table('notes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_notes_category_id'), ['category_id'], unique=False)
        batch_op.create_index('ix_notes_owner_activity', ['owner_user_id', sa.literal_column('last_activity_utc DESC')], unique=False)
        batch_op.create_index('ix_notes_public_activity', [sa.literal_column('last_activity_utc DESC'), sa.literal_column('id DESC')], unique=False, postgresql_where=sa.text('is_publicly_discoverable'), postgresql_include=['latitude', 'longitude', 'content_language'], sqlite_where=sa.text('is_publicly_discoverable'))
        batch_op.create_index('ix_notes_public_position', ['latitude', 'longitude'], unique=False, postgresql_where=sa.text('is_publicly_discoverable'), postgresql_include=['last_activity_utc', 'id', 'content_language'], sqlite_where=sa.text('is_publicly_discoverable'))
        batch_op.create_index('ix_notes_team_activity', ['team_id', sa.literal_column('last_activity_utc DESC')], unique=False)

    op.create_table('trackable_unlocks',
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('trackable_id', sa.Uuid(), nullable=False),
    sa.Column('unlocked_utc', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['trackable_id'], ['trackables.id'], name=op.f('fk_trackable_unlocks_trackable_id_trackables'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_trackable_unlocks_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('user_id', 'trackable_id', name=op.f('pk_trackable_unlocks'))
    )
    with op.batch_alter_table('trackable_unlocks', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_trackable_unlocks_trackable_id'), ['trackable_id'], unique=False)

    op.create_table('note_comments',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('note_id', sa.Uuid(), nullable=False),
    sa.Column('author_user_id', sa.Uuid(), nullable=False),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('created_utc', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_utc', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['author_user_id'], ['users.id'], name=op.f('fk_note_comments_author_user_id_users')),
    sa.ForeignKeyConstraint(['note_id'], ['notes.id'], name=op.f('fk_note_comments_note_id_notes'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_note_comments'))
    )
    with op.batch_alter_table('note_comments', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_note_comments_author_user_id'), ['author_user_id'], unique=False)
        batch_op.create_index('ix_note_comments_note_created', ['note_id', sa.literal_column('created_utc DESC')], unique=False)

    op.create_table('note_trackables',
    sa.Column('note_id', sa.Uuid(), nullable=False),
    sa.Column('trackable_id', sa.Uuid(), nullable=False),
    sa.Column('attached_utc', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['note_id'], ['notes.id'], name=op.f('fk_note_trackables_note_id_notes'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['trackable_id'], ['trackables.id'], name=op.f('fk_note_trackables_trackable_id_trackables'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('note_id', 'trackable_id', name=op.f('pk_note_trackables'))
    )
    with op.batch_alter_table('note_trackables', schema=None) as batch_op:
        batch_op.create_index('ix_note_trackables_trackable_id', ['trackable_id'], unique=False)



def downgrade():
    with op.batch_alter_table('note_trackables', schema=None) as batch_op:
        batch_op.drop_index('ix_note_trackables_trackable_id')

    op.drop_table('note_trackables')
    with op.batch_alter_table('note_comments', schema=None) as batch_op:
        batch_op.drop_index('ix_note_comments_note_created')
        batch_op.drop_index(batch_op.f('ix_note_comments_author_user_id'))

    op.drop_table('note_comments')
    with op.batch_alter_table('trackable_unlocks', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_trackable_unlocks_trackable_id'))

    op.drop_table('trackable_unlocks')
    with op.batch_alter_table('notes', schema=None) as batch_op:
        batch_op.drop_index('ix_notes_team_activity')
        batch_op.drop_index('ix_notes_public_position', postgresql_where=sa.text('is_publicly_discoverable'), postgresql_include=['last_activity_utc', 'id', 'content_language'], sqlite_where=sa.text('is_publicly_discoverable'))
        batch_op.drop_index('ix_notes_public_activity', postgresql_where=sa.text('is_publicly_discoverable'), postgresql_include=['latitude', 'longitude', 'content_language'], sqlite_where=sa.text('is_publicly_discoverable'))
        batch_op.drop_index('ix_notes_owner_activity')
        batch_op.drop_index(batch_op.f('ix_notes_category_id'))

    op.drop_table('notes')
    with op.batch_alter_table('trackables', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_trackables_owner_user_id'))

    op.drop_table('trackables')
    with op.batch_alter_table('categories', schema=None) as batch_op:
        batch_op.drop_index('ix_categories_team_language')
        batch_op.drop_index(batch_op.f('ix_categories_parent_category_id'))
        batch_op.drop_index('ix_categories_owner_language')

    op.drop_table('categories')
