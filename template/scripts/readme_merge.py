"""After `copier update`: merge the README three-way, once, for a project from before 0.15.0.

Until 0.15.0 README.md was yours, and the template's README sat beside it
(.copier-readme.md, from 0.11.0). Now the README is the template's, and
copier merges each release into it, keeping your edits, as it does every
file of the template's. The first update from an older release has no
common ancestor to merge with, since that release never rendered README.md
during an update, so copier marks every difference between your README and
the new one as a conflict, your edits and the template's alike. This
script merges again with the README the project was made from as the
ancestor: the .copier-readme.md the last commit holds or, for a project
from before 0.11.0, that release's README rendered afresh. What both you
and the template changed stays marked, for you to resolve.
"""

import re
import subprocess
import sys
import tempfile
from pathlib import Path

README = Path("README.md")
# copier's labels for the two sides of a conflict in a file it updates.
OURS, SPLIT, THEIRS = "<<<<<<< before updating", "=======", ">>>>>>> after updating"
HEADING = re.compile(r"^#{1,6} +\S")


def git_show(path: str) -> str | None:
    """A file as the last commit holds it, or None where it holds none."""
    shown = subprocess.run(["git", "show", f"HEAD:{path}"], capture_output=True, text=True)
    return shown.stdout if shown.returncode == 0 else None


def release_side(text: str) -> str:
    """The release's README, out of a file copier merged with no ancestor: all but your side."""
    kept: list[str] = []
    side = "both"
    for line in text.splitlines(keepends=True):
        marker = line.rstrip("\n")
        if side == "both" and marker == OURS:
            side = "yours"
        elif side == "yours" and marker == SPLIT:
            side = "release"
        elif side == "release" and marker == THEIRS:
            side = "both"
        elif side != "yours":
            kept.append(line)
    return "".join(kept)


def rendered_before() -> str | None:
    """The README of the release the last commit was made from, rendered with its answers."""
    answers = git_show(".copier-answers.yml")
    if answers is None:
        return None
    fields = dict(
        line.split(": ", 1)
        for line in answers.splitlines()
        if line.startswith(("_commit: ", "_src_path: "))
    )
    if not {"_commit", "_src_path"} <= set(fields):
        return None
    kept = "".join(
        line + "\n"
        for line in answers.splitlines()
        if line.strip() and not line.startswith(("_", "#"))
    )
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch, "answers.yml")
        data.write_text(kept)
        copy = Path(scratch, "copy")
        source = fields["_src_path"].strip().strip("'\"")
        copier = ["uvx", "--from", "copier>=9.12", "copier", "copy", "--quiet", "--defaults"]
        made = subprocess.run(
            [
                *copier,
                "--vcs-ref",
                fields["_commit"].strip(),
                "--data-file",
                str(data),
                source,
                str(copy),
            ],
            capture_output=True,
            text=True,
        )
        readme = copy / "README.md"
        return readme.read_text() if made.returncode == 0 and readme.is_file() else None


def sections(text: str) -> list[tuple[str, str]]:
    """The README's sections in order, each as its heading line and its text (heading included).

    A `#` line inside a fenced block is code, not a heading.
    """
    found: list[tuple[str, list[str]]] = [("", [])]
    fenced = False
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and HEADING.match(line):
            found.append((line.strip(), []))
        found[-1][1].append(line)
    # Blank lines at a section's end only separate it from the next: not part of it.
    texts = [(heading, "".join(lines).rstrip("\n") + "\n") for heading, lines in found]
    return [(heading, text) for heading, text in texts if heading or text.strip()]


def merged_lines(yours: str, ancestor: str, release: str) -> tuple[str, int]:
    """git's three-way merge of three texts, and how many conflicts it left."""
    with tempfile.TemporaryDirectory() as scratch:
        paths = [Path(scratch, name) for name in ("yours", "ancestor", "release")]
        for path, text in zip(paths, (yours, ancestor, release), strict=True):
            path.write_text(text)
        labels = ["-L", "yours", "-L", "the release you updated from", "-L", "this release"]
        done = subprocess.run(
            ["git", "merge-file", "-p", *labels, *map(str, paths)], capture_output=True, text=True
        )
    if done.returncode < 0:
        raise RuntimeError(done.stderr.strip())
    return done.stdout, done.returncode


def merged(yours: str, ancestor: str, release: str) -> tuple[str, int]:
    """The three READMEs merged section by section, in the release's order.

    A section only one side changed takes that side; one both changed is
    merged line by line; a section you added stays after the one it
    followed, so that a section appended at the end never clashes with a
    release that changed the last of its own.
    """
    mine, before, theirs = dict(sections(yours)), dict(sections(ancestor)), dict(sections(release))
    follows: dict[str, list[str]] = {}
    previous = ""
    for heading, _ in sections(yours):
        if heading not in before and heading not in theirs:
            follows.setdefault(previous, []).append(heading)
        else:
            previous = heading
    parts: list[str] = []
    conflicts = 0
    for heading, text in [("", ""), *sections(release)]:
        if heading or text:
            if heading not in mine and heading in before:
                text = "" if before[heading] == text else text  # you deleted it
            elif heading in mine and heading in before:
                text, clashes = merged_lines(mine[heading], before[heading], text)
                conflicts += clashes
            parts.append(text)
        for added in follows.get(heading, []):
            parts.append(mine[added])
    return "".join(separated(parts)), conflicts


def separated(parts: list[str]) -> list[str]:
    """The sections, one blank line between each and the next, as Markdown needs."""
    kept = [part.rstrip("\n") + "\n" for part in parts if part.strip()]
    return [part + "\n" for part in kept[:-1]] + kept[-1:]


def main() -> int:
    if git_show("scripts/readme_merge.py") is not None:
        return 0  # the project already had an ancestor: copier's conflicts are real ones
    yours = git_show("README.md")
    if yours is None or not README.is_file():
        return 0
    rejected = Path("README.md.rej")
    text = README.read_text()
    if OURS in text.splitlines():
        release = release_side(text)
    elif rejected.is_file():  # --conflict rej: the release's README, your change set aside
        release = text
    else:
        return 0  # copier merged it
    ancestor = git_show(".copier-readme.md") or rendered_before()
    if ancestor is None:
        print("README.md: no earlier README to merge with; resolve its conflicts by hand.")
        return 0
    merged_text, conflicts = merged(yours, ancestor, release)
    README.write_text(merged_text)
    rejected.unlink(missing_ok=True)
    left = f", {conflicts} conflict(s) left where you and the template both changed it"
    print(f"README.md: your edits merged into the template's README{left if conflicts else ''}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
