"""Nova's single-node fake virt driver, with its guests kept across restarts.

FakeDriverWithoutFakeNodes keeps a stable node identity but holds its guests in
memory only: after a restart every server it had is unknown to it, so stopping or
rebooting one fails with InstanceNotFound. This subclass writes the guests (name,
power state, uuid) to a JSON file under Nova's state_path after each change.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from nova.conf import CONF
from nova.virt import fake

#: The FakeDriver methods that add, remove or change a guest.
MUTATORS = (
    "spawn",
    "destroy",
    "cleanup",
    "reboot",
    "power_off",
    "power_on",
    "pause",
    "unpause",
    "suspend",
    "resume",
    "rescue",
    "unrescue",
    "finish_migration",
    "finish_revert_migration",
    "live_migration_force_complete",
)


class PersistentFakeDriver(fake.FakeDriverWithoutFakeNodes):  # type: ignore[misc]
    """FakeDriverWithoutFakeNodes whose `instances` survive a nova-compute restart."""

    def __init__(self, virtapi: Any, read_only: bool = False) -> None:
        super().__init__(virtapi, read_only)
        self._store = Path(CONF.state_path) / "fake-virt-instances.json"
        if self._store.exists():
            for uuid, guest in json.loads(self._store.read_text()).items():
                self.instances[uuid] = fake.FakeInstance(guest["name"], guest["state"], uuid)

    def _save(self) -> None:
        guests = {uuid: {"name": i.name, "state": i.state} for uuid, i in self.instances.items()}
        partial = self._store.with_suffix(".tmp")
        partial.write_text(json.dumps(guests))
        os.replace(partial, self._store)


def _saving(name: str) -> Any:
    original = getattr(fake.FakeDriverWithoutFakeNodes, name)

    def method(self: PersistentFakeDriver, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(self, *args, **kwargs)
        finally:
            self._save()

    method.__name__ = name
    return method


for _name in MUTATORS:
    if hasattr(fake.FakeDriverWithoutFakeNodes, _name):
        setattr(PersistentFakeDriver, _name, _saving(_name))
