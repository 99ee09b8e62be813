"""After `copier update`: name the sections of the template's README that the release changed.

README.md is yours, so copier never changes it after the first copy, and a
release that moves a module or renames a task would leave it describing the
old project without a word. The template's own README for this project is
kept beside it, in .copier-readme.md, which every update rewrites; the
copy the last commit holds is the one the project was on, so comparing the
two, heading by heading, names the sections to read again.
"""

import re
import subprocess
import sys
from pathlib import Path

THEIRS = ".copier-readme.md"
HEADING = re.compile(r"^(#{1,6}) +(.+?) *#* *$")


def sections(text: str) -> dict[str, str]:
    """Each section's text by its heading; a `#` line in a code block is no heading."""
    found: dict[str, list[str]] = {"": []}
    current, fenced = "", False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        heading = None if fenced else HEADING.match(line)
        if heading:
            current = f"{heading.group(1)} {heading.group(2)}"
            found.setdefault(current, [])
        found[current].append(line)
    return {heading: "\n".join(lines) for heading, lines in found.items()}


def before_the_update() -> str | None:
    """The template's README as the last commit holds it: what the project was rendered from."""
    shown = subprocess.run(
        ["git", "show", f"HEAD:{THEIRS}"], capture_output=True, text=True, check=False
    )
    return shown.stdout if shown.returncode == 0 else None


def main() -> int:
    new_path = Path(THEIRS)
    if not new_path.is_file():
        return 0
    old = before_the_update()
    if old is None:  # a project from before 0.11.0 kept no copy to compare with
        print(
            f"README.md is yours, so the update left it as it was. {THEIRS} is the template's "
            f"README for this release: compare them (diff README.md {THEIRS}) and take what "
            "you want of it.",
            file=sys.stderr,
        )
        return 0
    before, after = sections(old), sections(new_path.read_text())
    changes = [
        f"  {heading} ({'new' if heading not in before else 'changed'})"
        for heading, text in after.items()
        if heading and before.get(heading) != text
    ]
    changes += [f"  {heading} (removed)" for heading in before if heading and heading not in after]
    if changes:
        print(
            "README.md is yours, so the update left it as it was. The template's README "
            "changed in these sections:",
            *changes,
            f"Read them again: git diff -- {THEIRS} shows what changed, "
            f"diff README.md {THEIRS} yours against the template's.",
            sep="\n",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
