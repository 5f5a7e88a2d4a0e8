"""Nova's flavors as simcloud starts with them: devstack's, and the names Warden's tests
pass as `flavor` (a leaf: the state seeds itself from it)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Flavor:
    """A flavor: memory in MiB, disks in GiB."""

    id: str
    name: str
    ram: int
    disk: int
    vcpus: int
    ephemeral: int = 0
    swap: int = 0
    extra_specs: dict[str, str] = field(default_factory=dict)


#: Devstack's flavors (`m1.nano`/`m1.micro` come from its tempest setup), then the names
#: Warden's tests pass as `flavor`.
FLAVORS = (
    Flavor("1", "m1.tiny", 512, 1, 1),
    Flavor("2", "m1.small", 2048, 20, 1),
    Flavor("3", "m1.medium", 4096, 40, 2),
    Flavor("4", "m1.large", 8192, 80, 4),
    Flavor("5", "m1.xlarge", 16384, 160, 8),
    Flavor("42", "m1.nano", 192, 1, 1, extra_specs={"hw_rng:allowed": "True"}),
    Flavor("84", "m1.micro", 256, 1, 1, extra_specs={"hw_rng:allowed": "True"}),
    Flavor("100", "m1.big", 16384, 160, 8),
    Flavor("101", "f", 512, 1, 1),
)
