"""The benchmarks still run against the package as it is now.

Each bench/ script imports the generated package or starts its app, so a
release that moves a module breaks them, and nothing used to notice before
the next person measured: five scripts still imported modules that 0.7.0
had moved, and their servers died unseen. Here every script runs in its
smoke mode (--smoke: one short round at tiny sizes, its figures not worth
reading), found by globbing, so a new script is covered without a change to
this file. The quick loop checks the cheaper half: that every name the
scripts import from the package is still there.
"""

import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TEMPLATE, project_python, python_for, render

BENCH = TEMPLATE / "bench"
SCRIPTS = sorted(path.name for path in BENCH.glob("*.py") if not path.name.startswith("_"))
# Runs beyond each script's own smoke run: another rendering a script measures.
MORE = {"throughput.py": [["--lean"]]}
RUNS = [[script] for script in SCRIPTS] + [
    [script, *options] for script, variants in MORE.items() for options in variants
]
PACKAGE = "my_welt_agent"  # the default package_name, which every script renders


def test_the_scripts_are_found():
    assert {"first_reply.py", "throughput.py", "resume.py"} <= set(SCRIPTS)
    assert "_project.py" not in SCRIPTS


@pytest.fixture(scope="module")
def bench_project(tmp_path_factory) -> Path:
    """The default project built once, as bench/_project.py builds it, shared by the scripts."""
    root = render(tmp_path_factory.mktemp("bench") / "agent")
    python_for(project_python(root))  # skips, naming the version, where it is not installed
    spec = importlib.util.spec_from_file_location("bench_project", BENCH / "_project.py")
    assert spec and spec.loader
    shared = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shared)
    return shared.built(root)


@pytest.mark.slow
@pytest.mark.parametrize("command", RUNS, ids=" ".join)
def test_every_benchmark_runs_in_smoke_mode(bench_project, command):
    env = {**os.environ, "BENCH_PROJECT": str(bench_project), "AWS_EC2_METADATA_DISABLED": "true"}
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(
        [sys.executable, str(BENCH / command[0]), "--smoke", *command[1:]],
        cwd=TEMPLATE,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(
            f"bench/{' '.join(command)} --smoke exited with {done.returncode}:\n"
            f"{done.stdout[-5000:]}\n{done.stderr[-8000:]}",
            pytrace=False,
        )
    assert done.stdout.strip(), f"bench/{command[0]} printed nothing"


# `from my_welt_agent.x.y import a, b` and `import my_welt_agent.x`, in code
# and in the server scripts the benchmarks hold as strings.
# A line starts at a newline or at a "\n" written inside a string.
FROM_IMPORT = re.compile(
    rf"(?:^|\\n)\s*from ({PACKAGE}(?:\.\w+)*) import (\([^)]*\)|[^\n\\]+)", re.MULTILINE
)
PLAIN_IMPORT = re.compile(rf"(?:^|\\n)\s*import ({PACKAGE}(?:\.\w+)*)", re.MULTILINE)


def imports_of_the_package(source: str) -> list[tuple[str, str | None]]:
    """(module, name) for every import of the package in a script's text; name None for a module."""
    found: list[tuple[str, str | None]] = []
    for module, names in FROM_IMPORT.findall(source):
        for name in names.strip("()").replace("\n", " ").split(","):
            if name.split("#")[0].strip():
                found.append((module, name.split(" as ")[0].strip()))
    found += [(module, None) for module in PLAIN_IMPORT.findall(source)]
    return found


def defined_names(path: Path) -> set[str]:
    """The names a module binds at its top level."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(target.id for target in targets if isinstance(target, ast.Name))
    return names


def module_file(code: Path, module: str) -> Path | None:
    base = code.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def test_what_the_benchmarks_import_from_the_package_exists(tmp_path):
    code = render(tmp_path / "agent") / "app"
    missing = set()
    for script in sorted(BENCH.glob("*.py")):
        for module, name in imports_of_the_package(script.read_text()):
            found = module_file(code, module)
            if found is None:
                missing.add(f"{script.name}: no module {module}")
            elif (
                name
                and name not in defined_names(found)
                and not module_file(code, f"{module}.{name}")
            ):
                missing.add(f"{script.name}: {module} has no {name}")
    assert not missing, "\n".join(sorted(missing))


def test_the_import_check_reads_every_form_the_scripts_use():
    source = (
        "from my_welt_agent.model.scripted import ScriptedModel, reply\n"
        "    from my_welt_agent.factory import (\n        create_app,\n        serve as run,\n    )\n"
        "import my_welt_agent.settings\n"
        '"from strands import Agent\\n\\nfrom my_welt_agent.gate.registry import Registry\\n"\n'
    )
    assert imports_of_the_package(source) == [
        ("my_welt_agent.model.scripted", "ScriptedModel"),
        ("my_welt_agent.model.scripted", "reply"),
        ("my_welt_agent.factory", "create_app"),
        ("my_welt_agent.factory", "serve"),
        ("my_welt_agent.gate.registry", "Registry"),
        ("my_welt_agent.settings", None),
    ]
