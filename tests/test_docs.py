"""The template's own docs a newcomer can trust: README.md and docs/**/*.md.

The rules, the parsers and the marker are the generated project's, in
template/tests/test_docs.py (read its docstring); here they apply to this repository:

- every `make <target>` named is a target of template/Makefile (the docs talk about the
  generated project's tasks; this repository has no Makefile);
- every path named exists in this repository (`template/...`, `bench/...`, `docs/...`) or
  in a rendering with every default (`app/<package>/...`, `scripts/...`); a path under
  template/ may name a rendered file by its rendered name (`template/app/<package>/wire.py`
  for `template/app/{{package_name}}/wire.py`, `template/README.md` for its `.jinja`).
  What neither has, on purpose (a file from an old release, an example of the reader's),
  is in NOT_HERE with the reason;
- every command in a ```sh block is run here (RUN: cheap ones, in this repository or in
  the default rendering) or carries the marker
  `# not run by the tests: <why>`;
- every relative link of README.md, CHANGELOG.md and docs/**/*.md resolves in this
  repository: to a file or folder, and an anchor to a heading of the file it names, by
  the generated project's rule (`broken_links`). The generated project's own docs,
  template/docs/, are read in a rendering, where their links must resolve: the default
  rendering's README.md, AGENTS.md and docs/ are checked here too.

The README's `uvx copier copy --defaults "$PWD" ../my-agent` is marked, not run: the
`default_rendering` fixture below renders with every default through copier's API, the
same copy without the CLI.
"""

import importlib.util
import os
import re
import shlex
import subprocess

import pytest
from conftest import TEMPLATE, UV, render

_spec = importlib.util.spec_from_file_location(
    "generated_docs_rules", TEMPLATE / "template" / "tests" / "test_docs.py"
)
rules = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rules)

# Commands run here, exactly as the docs write them (without their comment):
# where ("repo" or "project", the default rendering) and a timeout in seconds.
RUN = {
    "sh scripts/check-update.sh": ("project", 60),
}

NOT_HERE = {
    **rules.NOT_HERE,
    # named by docs/updating.md, about releases before this one
    "gate.py": "gate/approval_gate.py since 0.7.0; docs/updating.md names its old place",
    "model.py": "model/providers.py since 0.7.0; docs/updating.md names its old place",
    "run_storage.py": "runs/storage.py since 0.7.0; docs/updating.md names its old place",
    "tools/registry.py": "gate/registry.py since 0.7.0; docs/updating.md names its old place",
    "wire.py": "wire/ since 0.7.0; docs/updating.md names its old place",
    "history.py": "deleted in 0.2.0; docs/updating.md says so",
    "tests/test_ask_human.py": "its place before 0.4.0 (docs/updating.md)",
    "tests/test_approval.py": "its place before 0.4.0 (docs/updating.md)",
    "tests/test_files.py": "its place before 0.4.0 (docs/updating.md)",
    "tests/test_report.py": "its place before 0.4.0 (docs/updating.md)",
    "tools/mcp_servers.py": "its place before 0.4.0 (docs/updating.md)",
    "app/my_welt_agent/prompt.py": "its place before 0.4.0 (docs/updating.md)",
    ".sessions": "the storage folder before 0.2.0 (docs/updating.md)",
    "yours/system_prompt.py": "the renamed module of a test's example (docs/updating.md)",
    # made at run time, or elsewhere, by what the docs describe
    "run.json": "a stored run's files, under the storage folder (docs/performance.md)",
    "questions.json": "a stored run's files, under the storage folder (docs/performance.md)",
    # the reader's own files, in examples
    "tools/weather.py": "the reader's example tool (docs/updating.md)",
    "yours/tools/weather.py": "the reader's example tool (docs/updating.md)",
    "my-agent": "the reader's project folder",
    "../my-agent": "the reader's project folder",
}


def documents():
    return [TEMPLATE / "README.md", *sorted((TEMPLATE / "docs").glob("**/*.md"))]


@pytest.fixture(scope="module")
def default_rendering(tmp_path_factory):
    """What `uvx copier copy --defaults "$PWD" ../my-agent` makes, through copier's API."""
    return render(tmp_path_factory.mktemp("docs") / "my-agent")


def package_of(project):
    return next(path.parent.name for path in (project / "app").glob("*/settings.py"))


def test_the_default_rendering_is_the_readme_s(default_rendering):
    assert (default_rendering / ".copier-answers.yml").is_file()
    assert package_of(default_rendering) == "my_welt_agent"


def test_the_readme_lists_every_task_that_make_lists(default_rendering):
    """`make` alone lists the tasks that have a `##` help; the README's list names each."""
    menu = subprocess.run(
        ["make"], cwd=default_rendering, capture_output=True, text=True, timeout=30
    )
    assert menu.returncode == 0, menu.stderr
    tasks = set(re.findall(r"^  make (\S+)", menu.stdout, re.M)) - {"help"}
    readme = " ".join((default_rendering / "README.md").read_text().split())
    (listed,) = re.findall(r"`make` alone lists the project's tasks \(([^)]*)\)", readme)

    assert len(tasks) > 10, menu.stdout
    assert set(listed.split(", ")) == tasks


def test_every_make_target_the_docs_name_exists():
    targets = rules.makefile_targets(TEMPLATE / "template" / "Makefile")
    unknown = [
        f"{document.relative_to(TEMPLATE)}: make {target}"
        for document in documents()
        for code in rules.code_spans(document)
        + [command for _, command, _ in rules.sh_commands(document)]
        for target in rules.named_targets(code)
        if target not in targets
    ]
    assert not unknown, f"no such target in template/Makefile: {unknown}"


def in_the_template(path: str, package: str) -> bool:
    """A template/ path by its rendered name: `{{package_name}}` and `.jinja` undone."""
    if not path.startswith("template/"):
        return False
    parts = path.rstrip("/").split("/")
    candidates = [TEMPLATE]
    for part in parts:
        names = {part, part.replace(package, "{{package_name}}"), part + ".jinja"}
        candidates = [base / name for base in candidates for name in names]
        candidates = [candidate for candidate in candidates if candidate.exists()]
    return bool(candidates)


def test_every_path_the_docs_name_exists(default_rendering):
    package = package_of(default_rendering)
    missing = []
    for document in documents():
        words = rules.code_spans(document) + [
            command for _, command, _ in rules.sh_commands(document)
        ]
        paths = [path for word in words for path in rules.path_candidates(word, package)]
        missing += [
            f"{document.relative_to(TEMPLATE)}: {path}"
            for path in rules.missing_paths(
                paths, [TEMPLATE, default_rendering], package, NOT_HERE
            )
            if not in_the_template(path, package)
        ]
    assert not missing, f"named in the docs, in neither the repository nor a rendering: {missing}"


def test_every_relative_link_of_the_docs_resolves():
    broken = [
        link
        for document in [*documents(), TEMPLATE / "CHANGELOG.md"]
        for link in rules.broken_links(document, TEMPLATE)
    ]
    assert not broken, f"a link to nothing: {broken}"


def test_every_relative_link_of_a_rendering_s_docs_resolves(default_rendering):
    broken = [
        link
        for document in rules.documents(default_rendering)
        if document.suffix == ".md"
        for link in rules.broken_links(document, default_rendering)
    ]
    assert not broken, f"a link to nothing, in the default rendering: {broken}"


def test_every_sh_command_is_run_here_or_says_why_not():
    unaccounted = [
        f"{document.relative_to(TEMPLATE)}:{line}: {command}"
        for document in documents()
        for line, command, marker in rules.sh_commands(document)
        if command not in RUN and not marker
    ]
    assert not unaccounted, (
        f"a ```sh command neither run by tests/test_docs.py (RUN) nor marked "
        f"'# {rules.MARKER} <why>': {unaccounted}"
    )


def test_the_cheap_sh_commands_work(default_rendering):
    named = {
        command
        for document in documents()
        for _, command, _ in rules.sh_commands(document)
    }
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    env.update(UV_OFFLINE="1", UV_PYTHON_DOWNLOADS="never", AWS_EC2_METADATA_DISABLED="true")
    env["PATH"] = os.pathsep.join([os.path.dirname(UV), env.get("PATH", "")])
    for command, (where, timeout) in RUN.items():
        if command not in named:
            continue
        cwd = TEMPLATE if where == "repo" else default_rendering
        done = subprocess.run(
            shlex.split(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
        )
        assert done.returncode == 0, f"{command} in {where}:\n{done.stdout}\n{done.stderr}"
