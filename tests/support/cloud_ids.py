"""Ids of what simcloud seeds, for tests that call Nova directly (Nova takes ids;
Warden's activities look names up, as Heat and Senlin do)."""

from __future__ import annotations

from typing import Final

from simcloud.image.state import seeded_image_id

CIRROS: Final = seeded_image_id("cirros")
CIRROS_V2: Final = seeded_image_id("cirros-v2")
#: Devstack's flavor ids.
TINY: Final = "1"
SMALL: Final = "2"
LARGE: Final = "4"
