"""`python -m bench.scale_in`: run the benchmark and print its table (nothing saved;
`python -m bench scale_in` also writes bench/results/)."""

from __future__ import annotations

import asyncio

from bench.scale_in.runner import run
from bench.scale_in.tables import table

print(table(asyncio.run(run())))
