"""Write app/pyproject.toml from uv.lock, or check that it matches (--check).

AgentCore's CodeZip build installs `[project].dependencies` of the
pyproject.toml in the code folder with `uv pip install -r`, which never reads
uv.lock: with ranges there, a deploy gets whatever is newest that day. So
the code folder gets its own pyproject.toml that pins every runtime package
(transitive ones too) to the version in uv.lock. Run by `make lock`; the
test suite runs `--check` and fails when the pins fall behind the lock.
"""

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
PINS = PROJECT / "app" / "pyproject.toml"

HEADER = """\
# What the deployment's code zip installs. deploy/code_bundle.py runs
# `uv pip install -r app/pyproject.toml` for aarch64, as the AgentCore CLI
# does; neither reads uv.lock, so this file lists uv.lock's exact versions.
# Written by `make lock` (from scripts/runtime_pins.py); a test fails when
# it falls behind the lock.
# Do not edit: change the ranges in ../pyproject.toml, then `make lock`.
"""


def locked_requirements() -> list[str]:
    """Every runtime package uv.lock resolves, as `name==version ; markers`."""
    uv = os.environ.get("UV", "uv")  # `uv run` names itself here
    options = ["--frozen", "--no-default-groups", "--no-hashes", "--no-header", "--no-annotate"]
    exported = subprocess.run(
        [uv, "export", *options, "--no-emit-project", "--format", "requirements-txt"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
    )
    if exported.returncode != 0:
        sys.exit(f"uv export failed; is uv.lock there (make lock)?\n{exported.stderr}")
    return [line.strip() for line in exported.stdout.splitlines() if line.strip()]


def pinned_pyproject() -> str:
    manifest = tomllib.loads((PROJECT / "pyproject.toml").read_text())
    project = manifest["project"]
    left_out = manifest.get("tool", {}).get("uv", {}).get("exclude-dependencies", [])
    lines = [
        HEADER + "[project]",
        f'name = "{project["name"]}-runtime"',
        f'version = "{project["version"]}"',
        f'requires-python = "{project["requires-python"]}"',
        "dependencies = [",
        *(f"    {json.dumps(requirement)}," for requirement in locked_requirements()),
        "]",
    ]
    if left_out:
        # Without this, `uv pip install` would add back what the lock leaves
        # out: the CLI runs it in app/, where uv reads this table.
        lines += [
            "",
            "[tool.uv]",
            "exclude-dependencies = [",
            *(f"    {json.dumps(name)}," for name in left_out),
            "]",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    wanted = pinned_pyproject()
    if "--check" not in sys.argv[1:]:
        PINS.write_text(wanted)
        return
    if not PINS.exists() or PINS.read_text() != wanted:
        sys.exit(
            "app/pyproject.toml does not match uv.lock, so a CodeZip deploy would not "
            "install the locked versions. Run `make lock` and commit app/pyproject.toml."
        )


if __name__ == "__main__":
    main()
