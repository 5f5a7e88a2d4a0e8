# ruff: noqa: T201 -- progress of a command line tool, on stdout.
"""`install`: the lab's own venv with the pinned services, uWSGI and our add-ons."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from scripts.openstack.layout import EXTRAS, HERE, SERVICES, Layout

CONSTRAINTS = HERE / "constraints.txt"
ADDONS = HERE / "lab_addons"
#: Written last, so an interrupted install is redone rather than trusted.
MARKER = ".warden-lab-pins"


def pins_digest() -> str:
    """A hash of everything that decides the venv's content."""
    digest = hashlib.sha256()
    digest.update(sys.version.encode())
    digest.update("\n".join(SERVICES + EXTRAS).encode())
    digest.update(CONSTRAINTS.read_bytes())
    for path in sorted(ADDONS.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and ".egg-info" not in str(path):
            digest.update(path.relative_to(ADDONS).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def is_installed(layout: Layout) -> bool:
    marker = layout.venv / MARKER
    return marker.exists() and marker.read_text().strip() == pins_digest()


def install(layout: Layout, *, force: bool = False) -> None:
    """Create or refresh the venv; a no-op when it already holds these pins."""
    if is_installed(layout) and not force:
        print(f"install: {layout.venv} already has these pins, skipping")
        return
    python = layout.bin("python")
    if not python.exists():
        layout.venv.parent.mkdir(parents=True, exist_ok=True)
        _run([sys.executable, "-m", "venv", str(layout.venv)])
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "install", "-q"]
    _run([*pip, "-c", str(CONSTRAINTS), *SERVICES, *EXTRAS])
    # Our add-ons (ML2 driver, fake virt driver, db sync): pip builds them from a copy,
    # since building writes egg-info next to the sources.
    build = layout.root / "build" / "lab_addons"
    shutil.rmtree(build, ignore_errors=True)
    shutil.copytree(ADDONS, build)
    _run([*pip, "--no-deps", "--force-reinstall", str(build)])
    (layout.venv / MARKER).write_text(pins_digest() + "\n")
    print(f"install: {layout.venv} ready")


def _run(command: list[str], cwd: Path | None = None) -> None:
    print("+", " ".join(command[:6]), "..." if len(command) > 6 else "", flush=True)
    subprocess.run(command, check=True, cwd=cwd)  # noqa: S603
