"""Keep code written before 0.7.0 importing: a stand-in module for each old name it uses.

Release 0.7.0 put the package's modules in folders by role (wire/, runs/,
gate/, model/, platform/), and code of yours now imports one module of the
template, `<package>.api`. Code written earlier imports modules by their old
names (`<package>.tools.registry`, `<package>.interrupt_names`,
`<package>.scripted_model`, ...), and `copier update` never edits your files.
So, run by check-update.sh after an update, this script finds every old
name a file of the project imports and writes, at the old path, a module
that re-exports the new one: your files keep working as they are. Each
stand-in says which new module to import instead; once nothing imports it,
delete it. The template does not own these files, so copier never touches
them; when a later release moves a module again, this script rewrites the
stand-ins that name it.
"""

import ast
import sys
from pathlib import Path

# The old module (under the package) -> the modules that hold its names now.
# wire.py, gate.py and model.py are now folders of the same names, which
# Python imports in their place: code that used them imports the new modules.
MOVED = {
    "checked_messages": ("wire.checked_messages",),
    "request_size": ("wire.request_size",),
    "conversations": ("turns.conversations",),
    "idle_agents": ("turns.idle_agents",),
    "stored_runs": ("runs.stored_runs", "runs.outcomes", "runs.record"),
    "run_storage": ("runs.storage",),
    "tools.registry": ("gate.registry",),
    "interrupt_names": ("gate.interrupt_names",),
    "run_limits": ("gate.run_limits",),
    "tool_errors": ("gate.tool_errors",),
    "tool_results": ("gate.tool_results",),
    "scripted_model": ("model.scripted",),
    "rehearsal": ("model.rehearsal",),
    "restore": ("platform.restore", "identity"),
    "warmup": ("platform.warmup",),
    "tracing": ("platform.tracing",),
    "logs": ("platform.logs",),
}
MARKER = "# Written by scripts/keep_old_imports.py"
NOT_CODE = {".venv", ".git", "__pycache__", "node_modules", "cdk.out"}


def main(root: Path) -> int:
    found = sorted(root.glob("app/*/api.py"))  # the package's public module, from 0.7.0 on
    if len(found) != 1:
        return 0
    package = found[0].parent.name
    users: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        if NOT_CODE & set(path.relative_to(root).parts):
            continue
        for old in old_names(path, package):
            users.setdefault(old, set()).add(path.relative_to(root).as_posix())
    # A stand-in written by an earlier update may name a module that has moved
    # again since (0.17.0 moved runs/conversations.py into turns/), so each
    # is written anew, even once nothing imports it.
    folder = root / "app" / package
    for path in folder.rglob("*.py"):
        old = ".".join(path.relative_to(folder).with_suffix("").parts)
        if old in MOVED and MARKER in path.read_text(errors="replace"):
            users.setdefault(old, set())
    for old, files in sorted(users.items()):
        stand_in = root / "app" / package / Path(*old.split(".")).with_suffix(".py")
        if stand_in.exists() and MARKER not in stand_in.read_text():
            continue  # a module of that name exists: nothing to stand in for
        text = stand_in_for(package, old, sorted(files))
        if stand_in.exists() and stand_in.read_text() == text:
            continue
        stand_in.write_text(text)
        if files:
            print(f"kept {package}.{old} importable for {', '.join(sorted(files))}")
        else:
            print(f"pointed {stand_in.relative_to(root)} at the new modules; nothing imports it")
    return 0


def old_names(path: Path, package: str) -> set[str]:
    """The old module names (relative to the package) that this file imports."""
    try:
        tree = ast.parse(path.read_text())
    except (SyntaxError, UnicodeDecodeError):
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        for name in names:
            relative = name.removeprefix(f"{package}.")
            if name != relative and relative in MOVED:
                found.add(relative)
    return found


def stand_in_for(package: str, old: str, files: list[str]) -> str:
    new = MOVED[old]
    users = "".join(f"    {path}\n" for path in files) or "    nothing any more\n"
    imports = "".join(f"from {package}.{module} import *  # noqa: F403\n" for module in sorted(new))
    return (
        f'"""`{package}.{old}`, where its names were before release 0.7.0.\n\n'
        f"Kept for the code of yours that imports it:\n{users}"
        f"Import from `{package}.api` instead, or from\n"
        f"`{package}.{new[0]}`; then delete this file.\n"
        f'"""\n\n{MARKER}\n{imports}'
    )


if __name__ == "__main__":
    sys.exit(main(Path.cwd()))
