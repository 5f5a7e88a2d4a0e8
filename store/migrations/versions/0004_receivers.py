"""receivers table (Senlin's webhook receivers)

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-27 18:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

import store.columns


revision: str = '0004'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('receivers',
    sa.Column('id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('project_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
    sa.Column('type', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('cluster_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('action', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('params', sa.JSON(), nullable=False),
    sa.Column('created_at', store.columns.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', store.columns.UTCDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('receivers', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_receivers_cluster_id'), ['cluster_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_receivers_created_at'), ['created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_receivers_project_id'), ['project_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('receivers', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_receivers_project_id'))
        batch_op.drop_index(batch_op.f('ix_receivers_created_at'))
        batch_op.drop_index(batch_op.f('ix_receivers_cluster_id'))

    op.drop_table('receivers')
