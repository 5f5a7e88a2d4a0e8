"""stacks.output_errors (Heat's `output_error` of each output without a value)

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03 15:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0008'
down_revision: str | None = '0007'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('stacks', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('output_errors', sa.JSON(), nullable=False, server_default=sa.text("'{}'"))
        )


def downgrade() -> None:
    with op.batch_alter_table('stacks', schema=None) as batch_op:
        batch_op.drop_column('output_errors')
