"""After `copier update`: the steps this project still needs that no update can take.

An update changes the template's files and never yours. When a release
asks something new of code of yours, the update cannot make the change,
and `make lint test` would fail on it later without saying why. Each check
here looks for one such thing in the project's own files and names the
step; scripts/check-update.sh lists them and stops, instead of saying the
update merged cleanly. Nothing here changes a file.
"""

import ast
import json
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

# 0.2.0's test of a bare answer, which Welt stopped sending in v0.7: the
# wire now refuses what it sends.
BARE_ANSWER_TEST = "test_bare_answer_from_welt_before_v07_still_resumes"


def python_files(*folders: str) -> Iterator[Path]:
    for folder in folders:
        for path in sorted(Path().glob(f"{folder}/**/*.py")):
            if "__pycache__" not in path.parts:
                yield path


def parsed(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text())
    except (SyntaxError, UnicodeDecodeError):
        return None  # ruff's check below names what is wrong with it


def questions_asked_without_ask() -> Iterator[str]:
    """0.10.0: every question goes through `ask`, which puts each answer on record."""
    for path in python_files("app/*/yours"):
        tree = parsed(path)
        calls = [
            node.lineno
            for node in (ast.walk(tree) if tree else ())
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "interrupt"
        ]
        if calls:
            package = path.parts[1]
            yield (
                f"{path}:{calls[0]} asks with interrupt(): ask through `ask` instead, as "
                f"docs/approvals.md shows. Write `ask(tool_context, ` for "
                f"`tool_context.interrupt(`, add `from {package}.api import ask`, "
                "then `make format`."
            )


def tests_of_a_wire_no_longer_spoken() -> Iterator[str]:
    for path in python_files("tests"):
        tree = parsed(path)
        for node in tree.body if tree else ():
            if isinstance(node, ast.FunctionDef) and node.name == BARE_ANSWER_TEST:
                yield (
                    f"{path}:{node.lineno}: delete {BARE_ANSWER_TEST}: Welt sends "
                    "{value, source} since v0.7, and the wire refuses a bare answer."
                )


def locked_ruff() -> str | None:
    """The ruff version uv.lock pins: the one `make lint` runs after `make install`."""
    try:
        lock = tomllib.loads(Path("uv.lock").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return None
    versions = [p["version"] for p in lock.get("package", []) if p.get("name") == "ruff"]
    return versions[0] if versions else None


def ruff(version: str, *arguments: str) -> subprocess.CompletedProcess[str] | None:
    try:
        ran = subprocess.run(
            ["uv", "tool", "run", "--quiet", f"ruff@{version}", *arguments],
            capture_output=True,
            text=True,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return ran if ran.returncode in (0, 1) else None


def what_ruff_finds() -> Iterator[str]:
    """A release's ruff settings (a newer Python, another import order) apply to your files too."""
    version = locked_ruff()
    checked = version and ruff(version, "check", "--output-format", "json", "--quiet", ".")
    formatted = version and ruff(version, "format", "--check", "--quiet", ".")
    if not checked or not formatted:
        if version:
            yield f"run `make lint`: ruff {version} could not be run here to check your files."
        return
    findings = json.loads(checked.stdout or "[]")
    fixable = sorted({Path(f["filename"]).resolve() for f in findings if f.get("fix")})
    reformat = sorted(
        Path(line.split(maxsplit=2)[-1]).resolve()
        for line in formatted.stdout.splitlines()
        if line.startswith("Would reformat")
    )
    touched = sorted({str(path.relative_to(Path.cwd())) for path in [*fixable, *reformat]})
    if touched:
        yield f"`make format`: ruff {version} sorts or rewrites lines of {', '.join(touched)}."
    for finding in findings:
        if not finding.get("fix"):
            where = Path(finding["filename"]).resolve().relative_to(Path.cwd())
            row = finding["location"]["row"]
            yield f"{where}:{row}: {finding['code']} {finding['message']} (ruff cannot fix it)"


def main() -> int:
    steps = [
        *questions_asked_without_ask(),
        *tests_of_a_wire_no_longer_spoken(),
        *what_ruff_finds(),
    ]
    if not steps:
        return 0
    print(f"The update merged, and {len(steps)} step(s) are left for this project:")
    for number, step in enumerate(steps, 1):
        print(f"  {number}. {step}")
    print("Then: make install lint test")
    return 1


if __name__ == "__main__":
    sys.exit(main())
