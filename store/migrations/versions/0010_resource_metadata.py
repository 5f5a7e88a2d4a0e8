"""stack_resources.rsrc_metadata (Heat's resource metadata)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04 19:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0010'
down_revision: str | None = '0009'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('stack_resources', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('rsrc_metadata', sa.JSON(), nullable=False, server_default=sa.text("'{}'"))
        )


def downgrade() -> None:
    with op.batch_alter_table('stack_resources', schema=None) as batch_op:
        batch_op.drop_column('rsrc_metadata')
