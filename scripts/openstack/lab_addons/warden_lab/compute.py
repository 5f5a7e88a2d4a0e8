"""`nova-compute` able to load PersistentFakeDriver.

Nova imports its virt driver as `nova.virt.<compute_driver>`, nothing outside that
package, so this launcher makes the lab's driver module visible as
`nova.virt.warden_lab` first: `compute_driver = warden_lab.PersistentFakeDriver`.
"""

from __future__ import annotations

import sys
from typing import Any


def main() -> Any:
    # nova.cmd.compute first: it sets Nova's process up before any driver import.
    from nova.cmd import compute

    from warden_lab import virt

    sys.modules["nova.virt.warden_lab"] = virt
    return compute.main()
