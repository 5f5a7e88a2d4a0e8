"""The server-creates benchmark's details, as its table shows them."""

from __future__ import annotations

import json

from bench.server_creates import shown_detail


def test_a_count_per_key_reads_the_same_fresh_or_read_back_from_json() -> None:
    fresh = {1: 680, 2: 621}
    read_back = json.loads(json.dumps(fresh))  # JSON keys are strings
    assert shown_detail(fresh) == shown_detail(read_back) == "1: 680, 2: 621"
    assert shown_detail({}) == "—" and shown_detail(0) == "0"
