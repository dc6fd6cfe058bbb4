"""The README and the docs pages hold: their Python examples run and print what their comments
say, their relative links resolve (sections included), the README's "Where things live"
table matches the repository's tree, and the user docs carry no lab notes (issue numbers)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]
"""The pages whose ``python`` blocks are executed."""
LINKED = [*PAGES, ROOT / "benchmarks" / "README.md", ROOT / "cookbook" / "README.md"]
"""The pages whose relative links must resolve."""

PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)
PROMISE = re.compile(r"print\(.*\)\s+#\s*(.*)")
FENCED = re.compile(r"^```.*?^```", flags=re.DOTALL | re.MULTILINE)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
TABLE_HEADING = "## Where things live"
USER_DOCS = [*PAGES, ROOT / "cookbook" / "README.md", *sorted((ROOT / "cookbook").glob("*.ipynb"))]
"""The pages a user reads; benchmarks/README.md is the lab notebook and may name issues."""
ISSUE_NUMBER = re.compile(r"\b(?:issues?|stops?) \d+|(?<![\w&])#\d+\b", flags=re.IGNORECASE)


def python_blocks() -> list[pytest.param]:
    blocks = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in PYTHON_BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 2  # the block's first code line
            name = f"{page.relative_to(ROOT)}:{line}"
            blocks.append(pytest.param(page, line, match.group(1), id=name))
    return blocks


@pytest.mark.parametrize(("page", "line", "block"), python_blocks())
def test_example_prints_what_it_promises(
    page: Path, line: int, block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code = "\n" * (line - 1) + block  # tracebacks name the page's own line numbers
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(page), "exec"), {"__name__": "__docs__"})  # our own docs
    promised = [m.strip() for m in PROMISE.findall(block)]
    assert printed.getvalue().splitlines() == promised


def relative_links(page: Path) -> list[str]:
    """The page's links that are neither URLs (``https:``, ``mailto:``) nor code."""
    prose = FENCED.sub("", page.read_text(encoding="utf-8"))  # code blocks hold no links
    prose = re.sub(r"`[^`\n]*`", "", prose)  # nor does inline code
    return [target for target in LINK.findall(prose) if not re.match(r"^[a-z][a-z+.-]*:", target)]


def anchors(page: Path) -> set[str]:
    """The anchors a markdown renderer gives the page's headings (GitHub's rule)."""
    headings = re.findall(r"^#+ (.+)$", FENCED.sub("", page.read_text(encoding="utf-8")), re.M)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


@pytest.mark.parametrize("page", LINKED, ids=lambda page: str(page.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        linked = page.parent / path if path else page
        if not linked.exists():
            broken.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(target)  # a section that was renamed or removed
    assert broken == [], f"{page.relative_to(ROOT)} links to missing files or sections"


def where_things_live() -> list[str]:
    """The paths in the first column of the README's "Where things live" table."""
    text = README.read_text(encoding="utf-8")
    assert TABLE_HEADING in text
    section = text.split(TABLE_HEADING, 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [path for row in rows for path in re.findall(r"`([^`]+)`", row.split("|")[1])]


def test_where_things_live_names_existing_paths() -> None:
    paths = where_things_live()
    assert paths
    missing = [path for path in paths if not (ROOT / path).exists()]
    assert missing == []


def test_where_things_live_lists_every_tracked_top_level_folder() -> None:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, text=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout (an unpacked sdist, say)")
    folders = {name.split("/", 1)[0] for name in listed.split("\0") if "/" in name}
    named = {path.rstrip("/") for path in where_things_live()}
    assert sorted(folders - named) == []


def user_text(page: Path) -> str:
    """What a reader sees of the page: a notebook's markdown cells, any other page whole."""
    if page.suffix != ".ipynb":
        return page.read_text(encoding="utf-8")
    cells = json.loads(page.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")


def issue_numbers(text: str) -> list[str]:
    """The references to issues ("issue 17", "issues 4 and 17", "#12", "stop 28") in the text."""
    return ISSUE_NUMBER.findall(text)


def test_issue_numbers_are_found() -> None:
    text = "Measured (issue 17): see issues 4 and 17, #12 and stop 28; not `# 12`, &#39; or v2."
    assert issue_numbers(text) == ["issue 17", "issues 4", "#12", "stop 28"]


@pytest.mark.parametrize("page", USER_DOCS, ids=lambda page: str(page.relative_to(ROOT)))
def test_user_docs_name_no_issues(page: Path) -> None:
    assert issue_numbers(user_text(page)) == [], "lab notes belong in benchmarks/README.md"
