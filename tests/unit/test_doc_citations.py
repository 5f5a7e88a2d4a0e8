"""Comments cite the repository's own docs (`docs/api-contract.md §Errors`), and every
citation and Markdown link into `docs/` names a section that exists. Nothing cites the
project's issue tracker, which readers of the repository do not have."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: `docs/name.md §Section`, possibly broken over a comment line (`docs/x.md\n# §Section`).
CITATION = re.compile(r"docs/([\w-]+\.md)[\s#:]*§((?:[^\n]|\n[ \t]*#?:?[ \t]*){1,60})")
#: `(docs/name.md#anchor)` from the README, `(name.md#anchor)` between the docs.
LINK = re.compile(r"\((?:docs/)?([\w-]+\.md)#([\w-]+)\)")
#: Documents that live outside the repository and must not be cited.
#: A reference to the issue tracker: the word "issue" (or "issues") and a number.
ISSUE = re.compile(r"\b[Ii]ssues? #?\d+")
OUTSIDE = re.compile(
    r"DESIGN §|DESIGN\.md|STYLE\.md|TEMPORAL-NOTES|(?<!random )\bthe seed\b|\bseed.s\b"
)


def headings(doc: str) -> list[str]:
    """The `##` and `###` headings of a doc under `docs/`."""
    lines = (DOCS / doc).read_text().splitlines()
    return [line.lstrip("#").strip() for line in lines if line.startswith(("## ", "### "))]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces → `-`."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def source_files() -> list[Path]:
    """Tracked and new text files where comments and docs live."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    texts = (".py", ".md", ".yaml", ".yml", ".toml", ".sh", ".ini", ".cfg", "Makefile")
    wanted = (ROOT / p for p in listed if p.endswith(texts))
    return [path for path in wanted if path.exists() and path.name != Path(__file__).name]


def broken_citations(text: str) -> list[str]:
    """Citations in `text` whose section is not a heading of the cited doc."""
    broken = []
    for match in CITATION.finditer(text):
        doc, rest = match.groups()
        after = re.sub(r"\s*\n[ \t]*#?:?[ \t]*", " ", rest)
        if not (DOCS / doc).exists() or not any(after.startswith(h) for h in headings(doc)):
            broken.append(match.group(0).splitlines()[0])
    for match in LINK.finditer(text):
        doc, anchor = match.groups()
        if not (DOCS / doc).exists() or anchor not in {slug(h) for h in headings(doc)}:
            broken.append(match.group(0))
    return broken


def test_every_citation_names_an_existing_section() -> None:
    found = {
        str(path.relative_to(ROOT)): broken_citations(path.read_text()) for path in source_files()
    }
    assert not {path: items for path, items in found.items() if items}


def test_nothing_cites_documents_outside_the_repository() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in source_files()
        if path.suffix != ".md"
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if OUTSIDE.search(line)
    ]
    assert not offenders, "\n".join(offenders)


def test_nothing_cites_the_issue_tracker() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in source_files()
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if ISSUE.search(line)
    ]
    assert not offenders, "say what the thing is instead:\n" + "\n".join(offenders)
    number = 19  # kept out of the literals, so this file passes its own check
    assert ISSUE.search(f"(issue {number}'s note)") and ISSUE.search(f"Issues #{number}")
    assert not ISSUE.search("an issue with 3 nodes")


def test_checker_finds_a_wrong_section_and_accepts_a_wrapped_one() -> None:
    assert broken_citations("# see docs/api-contract.md §Nowhere") == [
        "docs/api-contract.md §Nowhere"
    ]
    assert broken_citations("# (docs/openstack-designs.md\n# §Nova health checks)") == []
    assert broken_citations("[x](docs/style.md#temporal-traps) [y](style.md#nope)") == [
        "(style.md#nope)"
    ]
