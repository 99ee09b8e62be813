"""The package's layout: folders by role, no import cycle, and yours/ tied to one public module.

The template may move any module of the package in a release; what you
own must not break when it does. So yours/ imports one module, `api`, the
template reads yours/ in one place, `factory`, and no two modules import
each other, directly or around a loop, so each can be read on its own.
"""

import ast
from pathlib import Path

CODE = Path(__file__).resolve().parent.parent / "app"
PACKAGE = next(path.parent for path in CODE.glob("*/settings.py"))
NAME = PACKAGE.name
ROLES = {
    "wire",
    "turns",
    "runs",
    "accounting",
    "gate",
    "memory",
    "tools",
    "model",
    "platform",
    "yours",
    "acting",
    "binding",
}


def module_of(path: Path) -> str:
    parts = path.relative_to(CODE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


# Stand-ins that keep the old module names of code from before 0.7.0 importable
# after an update (scripts/keep_old_imports.py) are not the layout's.
STAND_IN = "# Written by scripts/keep_old_imports.py"
MODULES = {
    module_of(path): path for path in PACKAGE.rglob("*.py") if STAND_IN not in path.read_text()
}


def imports(module: str) -> set[str]:
    """The package's modules this one imports, at import time or inside a function."""
    path = MODULES[module]
    here = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here.rsplit(".", node.level - 1)[0] if node.level > 1 else here
                base = f"{anchor}.{base}" if base else anchor
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        found |= {name for name in names if name in MODULES and name != module}
    return found


GRAPH = {module: imports(module) for module in MODULES}


def test_the_package_is_folders_by_role_around_a_few_modules():
    folders = {path.name for path in PACKAGE.iterdir() if path.is_dir() and path.name[0] != "_"}
    loose = {path.name for path in PACKAGE.glob("*.py") if module_of(path) in MODULES}

    assert folders == ROLES
    assert loose == {
        "__init__.py",
        "agent.py",
        "api.py",
        "factory.py",
        "identity.py",
        "settings.py",
    }


def test_no_module_imports_itself_around_a_loop():
    def cycle_from(start: str) -> list[str] | None:
        stack = [(start, [start])]
        seen = set()
        while stack:
            module, path = stack.pop()
            for imported in GRAPH[module]:
                if imported == start:
                    return [*path, start]
                if imported not in seen:
                    seen.add(imported)
                    stack.append((imported, [*path, imported]))
        return None

    cycles = [cycle for module in sorted(GRAPH) if (cycle := cycle_from(module))]

    assert cycles == []


# Modules that code in yours/ from before 0.7.0 imports and that are still
# where they were; they stay importable there. New code imports `api`.
KEPT_FOR_CODE_BEFORE_0_7 = {"settings", "tools.lazy", "tools.mcp", "tools.prebuilt"}


def test_yours_imports_the_api_module_and_nothing_else_of_the_template():
    reached = {
        (module, imported)
        for module, imported_by_it in GRAPH.items()
        if module.startswith(f"{NAME}.yours")
        for imported in imported_by_it
        if not imported.startswith(f"{NAME}.yours") and imported != NAME
    }

    allowed = {f"{NAME}.{module}" for module in {"api", *KEPT_FOR_CODE_BEFORE_0_7}}
    assert {imported for _, imported in reached} <= allowed, sorted(reached)


def test_the_template_reads_yours_in_the_factory_alone():
    readers = {
        module
        for module, imported_by_it in GRAPH.items()
        if not module.startswith(f"{NAME}.yours")
        and any(imported.startswith(f"{NAME}.yours") for imported in imported_by_it)
    }

    assert readers == {f"{NAME}.factory"}


def test_the_api_module_depends_on_nothing_of_yours_nor_on_the_factory():
    reachable, todo = set(), [f"{NAME}.api"]
    while todo:
        for imported in GRAPH[todo.pop()] - reachable:
            reachable.add(imported)
            todo.append(imported)

    assert not {m for m in reachable if m.startswith(f"{NAME}.yours") or m.endswith(".factory")}


def test_every_question_is_asked_through_the_one_function_that_audits_it():
    """No module but gate/answerers.py calls `interrupt()`: every other asks through `ask`."""
    asking = {
        module
        for module, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "interrupt"
    }

    still = sorted(asking - {f"{NAME}.gate.answerers"})
    assert not still, (
        f"{', '.join(still)} call interrupt(): ask through `ask` from {NAME}.api instead, "
        "which puts each answer on record (docs/approvals.md)"
    )
    assert f"{NAME}.gate.answerers" in asking
