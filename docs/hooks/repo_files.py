"""MkDocs hook: the repository's own Markdown files that live outside docs/, in the site as they are.

SPEC.md, FINDINGS.md, the scenario format, the interop notes and the bindings' decision records stay
where they are in the repository (the package, the tests and the interop tools read them there).  This
hook adds each to the site under ``repo/`` at its repository path, so that ``repo/SPEC.md`` is SPEC.md
and the documentation links to it like any page: ``mkdocs build --strict`` then checks those links too.

Links inside these files are written for the repository (``docs/rsio-v0.md`` from SPEC.md): a link to a
file under docs/ is pointed at that page, and a link to another file listed here at its copy.  Any other
relative link is left alone, so strict mode reports it rather than the site carrying a dead link.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "repo/"
FILES = (
    "SPEC.md",
    "FINDINGS.md",
    "scenarios/README.md",
    "interop/NOTES.md",
    "tck/bindings/rsocket/DECISIONS.md",
    "tck/bindings/ditto/DECISIONS.md",
)
# A Markdown inline link's target: ](target) or ](target "title"); the target has no spaces.
LINK = re.compile(r"\]\((?P<target>[^)\s]+)(?P<rest>[^)]*)\)")


def on_files(files: Files, config: Any) -> Files:
    for path in FILES:
        files.append(File.generated(config, PREFIX + path, abs_src_path=str(ROOT / path)))
    return files


def _relink(match: re.Match[str], here: str) -> str:
    target = match.group("target")
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
        return match.group(0)  # a URL, an anchor on the same page, or an absolute path: not ours
    path, hash_, anchor = target.partition("#")
    repository_path = posixpath.normpath(posixpath.join(posixpath.dirname(here), path))
    if repository_path.startswith("docs/"):
        page = repository_path.removeprefix("docs/")
    elif repository_path in FILES:
        page = PREFIX + repository_path
    else:
        return match.group(0)
    page_dir = posixpath.dirname(PREFIX + here)
    relative = posixpath.relpath(page, page_dir)
    return f"]({relative}{hash_}{anchor}{match.group('rest')})"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    src = page.file.src_uri
    if not src.startswith(PREFIX):
        return markdown
    here = src.removeprefix(PREFIX)
    return LINK.sub(lambda match: _relink(match, here), markdown)
