"""The template's own docs a newcomer can trust: README.md and docs/**/*.md.

The rules and the parsers are the generated project's, in template/tests/test_docs.py
(read its docstring); here they apply to this repository:

- every `make <target>` named is a target of template/Makefile (the docs talk about the
  generated project's tasks; this repository has no Makefile);
- every path named exists in this repository (`template/...`, `bench/...`, `docs/...`) or
  in a rendering with every default (`app/<package>/...`, `scripts/...`); a path under
  template/ may name a rendered file by its rendered name (`template/app/<package>/wire.py`
  for `template/app/{{package_name}}/wire.py`, `template/README.md` for its `.jinja`).
  What neither has, on purpose (an example of the reader's), is in NOT_HERE with the
  reason; a section about updating from an old release ("## From 0.6.0 to 0.7.0") names
  that release's paths, and is not checked;
- every code name given is in the code a rendering of RENDERINGS ships (every default, and
  the answers that bring memory, an S3 run store, MCP, Anthropic, history, and no sample
  tools), in this repository's own code (bench/) or its copier.yml, or is said to be
  another library's, by the generated project's rules; a name only the tests have, a
  rendering's tests/ or this repository's, passes where the docs say it is the tests', by
  the same rules. A rendering's own docs are held to the same, and each of the generated
  rules' ELSEWHERE names is in a rendering (its tests too: a sample tool's test). What
  passes here only by NOT_CODE is listed with its reason;
- every message the docs quote is one a rendering's code, or its tests, says;
- every block of output the docs show (``` or ```text) is in OUTPUTS, produced by the
  generated rules' situation it names in the default rendering's environment, for real
  (slow: getting-started.md's reply without AWS credentials is the Bedrock agent's
  answer to the page's `curl` request), or in NOT_CHECKED with the reason; every entry
  of those tables, and of the generated rules' own, is for a block some docs show;
- a release the docs call current ("(0.10.0 now)") is copier.yml's `template_version`,
  and the releases "How the template proves this" lists are those tests/test_update.py
  updates from;
- every command in a ```sh block is run here (RUN: cheap ones, in this repository or in
  the default rendering) or matches a pattern of NOT_RUN, which says why not; every
  pattern there, and in the generated project's NOT_RUN, matches a command of some docs;
- every relative link of README.md, CHANGELOG.md and docs/**/*.md resolves in this
  repository: to a file or folder, and an anchor to a heading of the file it names, by
  the generated project's rule (`broken_links`). The generated project's own docs,
  template/docs/, are read in a rendering, where their links must resolve: the default
  rendering's README.md, AGENTS.md and docs/ are checked here too.

The README's `uvx copier copy --defaults "$PWD" ../my-agent` is not run: the
`default_rendering` fixture below renders with every default through copier's API, the
same copy without the CLI.
"""

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys

import pytest
import yaml
from conftest import CURRENT, RELEASES, RICHEST, TEMPLATE, UV, render, run

_spec = importlib.util.spec_from_file_location(
    "generated_docs_rules", TEMPLATE / "template" / "tests" / "test_docs.py"
)
rules = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = rules  # a dataclass finds its module's names by the module's name
_spec.loader.exec_module(rules)

PACKAGE = "my_welt_agent"

# Commands run here, exactly as the docs write them (without their comment):
# where ("repo" or "project", the default rendering) and a timeout in seconds.
RUN = {
    "sh scripts/check-update.sh": ("project", 60),
}

# Commands the template's docs show that no test here runs, by shell-style pattern
# (`*` is any text), and why not.
NOT_RUN = {
    ("pipx install uv", "curl -LsSf https://astral.sh/uv/install.sh | sh", "python3 -m venv *"): (
        "they install uv, which the tests run in"
    ),
    ("uvx copier copy *",): (
        "the `default_rendering` fixture makes the same copy through copier's API, and "
        "tests/test_releases.py a copy by tag from a tagged clone; the others need the "
        "network, or your template's URL"
    ),
    ("uv run pytest", "uv run pytest *"): "they are the tests; .ci/run runs them",
    ("cd ../my-agent", "cd ../my-agent && *", "git init && git add -A && git commit *"): (
        "they move into a copy and commit it: tests/test_update.py's projects are made so"
    ),
    ("make install", "make test", "make lint test"): (
        "they need the project's environment: tests/test_generated_project.py runs them (slow)"
    ),
    ("make rehearse",): "it starts a server",
    ("make playground",): (
        "it serves until stopped; a rendering's tests/test_playground_browser.py starts it "
        "and drives its page (slow)"
    ),
    ("curl *",): "it needs the server that `make serve` starts",
    ("uv run python bench/*.py", "uv run python bench/*.py *"): (
        "each costs a minute or more; tests/test_bench.py runs every one with --smoke"
    ),
    (
        "git status",
        "git status && git diff",
        "git add -A && git commit *",
        "make update",
        "uv lock",
        "uvx --from 'copier>=9.12' copier update *",
        "uvx copier update *",
    ): "they need a project under git from an older release: tests/test_update.py runs them (slow)",
    ("diff -r *",): "they compare your project with a fresh rendering of the template you name",
    ("make api-key *", "make deploy *"): (
        "they need AWS credentials for the environment's account; tests/test_deployment.py "
        "synthesizes what they deploy"
    ),
}

# Blocks of output the template's docs show (``` or ```text), by document and how the
# block's first line starts, each with the generated rules' situation that prints it
# (their SITUATIONS): produced in the default rendering's environment (slow).
OUTPUTS = {
    ("docs/getting-started.md", 'data: {"error": '): rules.Output("bedrock_without_credentials"),
}

# The template's other ``` and ```text blocks, and why no test produces them.
NOT_CHECKED = {
    ("docs/updating.md", "<<<<<<< "): "what git writes into a file it could not merge: an example",
    ("README.md", "ValueError: Validation error for question"): (
        "copier's last line for a refused -d answer: tests/test_questions.py runs copier's "
        "command line and holds this block to it"
    ),
}

NOT_HERE = {
    **rules.NOT_HERE,
    # made at run time, or elsewhere, by what the docs describe
    "run.json": "a stored run's files, under the storage folder (docs/performance.md)",
    "questions.json": "a stored run's files, under the storage folder (docs/performance.md)",
    # the reader's own files, in examples
    "tools/weather.py": "the reader's tool in 0.1.0's layout, which tests/test_update.py writes",
    "yours/tools/weather.py": "the reader's example tool (docs/updating.md)",
    "yours/system_prompt.py": "the renamed module of a test's example (docs/updating.md)",
    # of earlier releases, named as history outside the sections about updating
    "history.py": "deleted in 0.2.0: docs/updating.md's example of a file an update deletes",
    "my-agent": "the reader's project folder",
    # rendered only with an answer other than the default
    "yours/tools/github.py": "the include_github_sample answer renders it (default no)",
    "tests/yours/test_github.py": "the include_github_sample answer renders it (default no)",
    # rendered by an update alone, and deleted once scripts/check-update.sh has run it
    "scripts/move_yours.py": "the migration of projects from before 0.4.0 (copier.yml's _exclude)",
    "scripts/keep_old_imports.py": "the migration of code from before 0.7.0 (copier.yml's _exclude)",
    "../my-agent": "the reader's project folder",
}

# Words of another library's message, quoted inside one of the agent's.
THEIR_WORDS = {
    **rules.THEIR_WORDS,
    "You are downgrading": "copier's, refusing an update to an older tag (docs/updating.md)",
}

NOT_CODE = {
    **rules.NOT_CODE,
    "UU": "how `git status` marks a file left unmerged (docs/updating.md)",
    "weather": "the reader's tool that tests/test_update.py writes (docs/updating.md)",
    "AVeryLongProjectNameFor": (
        "the agent_name a long project name gives (docs/questions.md); tests/test_render.py "
        "renders it"
    ),
}

# Renderings whose code the docs' names are looked up in: every answer that adds code.
RENDERINGS = {
    "default": {},
    "richest": RICHEST,
    # as tests/test_deployment.py's: runs in S3, memory
    "s3": {"run_store": "s3", "state_bucket": "acme-agent-runs", "memory": "agentcore"},
    # as tests/test_deployment.py's: no sample tools, no images, MCP
    "lean": {"include_sample_tools": False, "include_image_generation": False, "include_mcp": True},
}


def documents():
    return [TEMPLATE / "README.md", *sorted((TEMPLATE / "docs").glob("**/*.md"))]


@pytest.fixture(scope="module")
def default_rendering(tmp_path_factory):
    """What `uvx copier copy --defaults "$PWD" ../my-agent` makes, through copier's API."""
    return render(tmp_path_factory.mktemp("docs") / "my-agent")


@pytest.fixture(scope="module")
def renderings(default_rendering, tmp_path_factory):
    """Each rendering of RENDERINGS, by name."""
    made = {"default": default_rendering}
    for name, answers in RENDERINGS.items():
        if name not in made:
            made[name] = render(tmp_path_factory.mktemp(f"docs-{name}") / "agent", **answers)
    return made


def package_of(project):
    return next(path.parent.name for path in (project / "app").glob("*/settings.py"))


def test_the_default_rendering_is_the_readme_s(default_rendering):
    assert (default_rendering / ".copier-answers.yml").is_file()
    assert package_of(default_rendering) == PACKAGE


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
        + [command for _, command in rules.sh_commands(document)]
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
        words = rules.code_spans(document) + [command for _, command in rules.sh_commands(document)]
        paths = [path for word in words for path in rules.path_candidates(word, package)]
        missing += [
            f"{document.relative_to(TEMPLATE)}: {path}"
            for path in rules.missing_paths(paths, [TEMPLATE, default_rendering], package, NOT_HERE)
            if not in_the_template(path, package)
        ]
    assert not missing, f"named in the docs, in neither the repository nor a rendering: {missing}"


def union_of(renderings) -> "rules.Code":
    return rules.code_of(*sorted(renderings.values()))


def test_every_code_name_of_a_rendering_s_docs_is_in_a_rendering(renderings):
    """A rendering's docs name what some rendering has, or say whose the name is."""
    code = union_of(renderings)
    unknown = sorted(
        {
            f"{document.relative_to(root)}: {why}"
            for root in renderings.values()
            for document in rules.documents(root)
            if document.suffix == ".md"
            for name, why in rules.unknown_names(document, code, PACKAGE, root, yours_too=True)
            if name not in NOT_CODE
        }
    )
    assert not unknown, f"in no rendering, and not said to be another's: {unknown}"


def test_every_name_the_generated_rules_find_elsewhere_is_in_a_rendering(renderings):
    code = rules.code_of(*sorted(renderings.values()), tests=True)  # a sample tool's tests too
    assert [name for name in rules.ELSEWHERE if name not in code.names] == []


def test_every_code_name_of_the_template_s_docs_is_in_a_rendering_or_here(renderings):
    code = rules.code_of(*sorted(renderings.values()), TEMPLATE)
    unknown = [
        f"{document.relative_to(TEMPLATE)}: {why}"
        for document in documents()
        for name, why in rules.unknown_names(document, code, PACKAGE)
        if name not in NOT_CODE
    ]
    assert not unknown, f"in no rendering nor here, and not said to be another's: {unknown}"


def test_every_message_the_docs_quote_is_one_a_rendering_says(renderings):
    code = rules.code_of(*sorted(renderings.values()), TEMPLATE, tests=True)
    docs = [*documents(), *rules.documents(renderings["default"])]
    unsaid = [
        f"{document.name}: {quote!r}"
        for document in docs
        if document.suffix == ".md"
        for quote, sentence in rules.quotes(document)
        if not rules.said(quote, code, THEIR_WORDS) and not rules.OTHERS.search(sentence)
    ]
    assert not unsaid, f"quoted, but no message of the code: {unsaid}"


def test_the_releases_the_docs_name_are_the_template_s():
    """`(0.7.0 now)` was true once; a release the update tests are said to start from is one."""
    called_current = [
        f"{document.name}: {named}"
        for document in documents()
        for named in re.findall(r"(\d+\.\d+\.\d+) now\b", document.read_text())
        if named != CURRENT
    ]
    assert not called_current, f"not the release copier.yml says: {called_current}"

    text = (TEMPLATE / "docs" / "updating.md").read_text()
    section = text.split("## How the template proves this", 1)[1]
    named = set(re.findall(r"\b(\d+\.\d+\.\d+)\b", section.split("\n## ", 1)[0]))
    assert named - {*RELEASES, CURRENT} == set()


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


def test_every_sh_command_is_run_here_or_listed_with_why_not():
    unaccounted = [
        f"{document.relative_to(TEMPLATE)}:{line}: {command}"
        for document in documents()
        for line, command in rules.sh_commands(document)
        if command not in RUN and rules.why_not_run(command, NOT_RUN) is None
    ]
    assert not unaccounted, (
        f"a ```sh command neither run by tests/test_docs.py (RUN) nor in its NOT_RUN with "
        f"the reason: {unaccounted}"
    )


def test_every_pattern_of_not_run_matches_a_command_of_the_docs(renderings):
    """A pattern no command matches any more is a reason nobody reads: drop it."""
    for not_run, docs in (
        (NOT_RUN, documents()),
        (rules.NOT_RUN, [d for root in renderings.values() for d in rules.documents(root)]),
    ):
        commands = [command for document in docs for _, command in rules.sh_commands(document)]
        unused = [
            pattern
            for patterns in not_run
            for pattern in patterns
            if not any(rules.why_not_run(c, {(pattern,): ""}) is not None for c in commands)
        ]
        assert not unused, f"no command of the docs matches: {unused}"


def test_the_cheap_sh_commands_work(default_rendering):
    named = {command for document in documents() for _, command in rules.sh_commands(document)}
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


def test_every_block_of_output_is_produced_or_listed_with_why_not():
    unaccounted = rules.unaccounted_blocks(documents(), TEMPLATE, OUTPUTS | NOT_CHECKED)
    assert not unaccounted, (
        f"a ``` or ```text block neither produced by tests/test_docs.py (OUTPUTS) nor in "
        f"its NOT_CHECKED, with the reason: {unaccounted}"
    )


def test_every_entry_of_the_output_tables_is_for_a_block_of_the_docs(renderings):
    """An entry no block matches any more is a check nobody runs: drop it, or fix its start."""
    for tables, docs in (
        ((OUTPUTS, NOT_CHECKED), [(TEMPLATE, document) for document in documents()]),
        (
            (rules.OUTPUTS, rules.NOT_CHECKED),
            [(root, document) for root in renderings.values() for document in rules.documents(root)],
        ),
    ):
        blocks = [
            (document.relative_to(root).as_posix(), lines)
            for root, document in docs
            for _, lines in rules.text_blocks(document)
        ]
        unused = [
            key
            for table in tables
            for key in table
            if not any(rules.listed_for(name, lines, {key: key}) for name, lines in blocks)
        ]
        assert not unused, f"no block of the docs starts so: {unused}"


def test_every_situation_the_output_tables_name_is_one_the_generated_rules_have():
    named = {output.situation for output in [*OUTPUTS.values(), *rules.OUTPUTS.values()]}
    assert named <= set(rules.SITUATIONS)


# Run in a rendering, from its root: what the generated rules' `printed` returns, as JSON
# on the last line.
PRINTED = (
    "import json, sys; sys.path[:0] = ['app', 'tests']; from pathlib import Path; "
    "import test_docs; "
    "print(json.dumps(test_docs.printed(Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3])))"
)


@pytest.mark.slow
@pytest.mark.parametrize("key", OUTPUTS, ids=[f"{name}: {start}" for name, start in OUTPUTS])
def test_each_block_of_output_of_the_template_s_docs_is_what_a_rendering_prints(
    key, built_project
):
    """getting-started.md's reply without credentials is the default rendering's, for real."""
    project = built_project("defaults")
    name, _ = key
    output = OUTPUTS[key]
    blocks = [
        (start, lines)
        for start, lines in rules.text_blocks(TEMPLATE / name)
        if rules.listed_for(name, lines, {key: output})
    ]
    assert blocks, f"no block of {name} starts so"
    for start, block in blocks:
        done = run(
            ["uv", "run", "--no-sync", "python", "-c", PRINTED, str(TEMPLATE / name), str(start),
             output.situation],
            project,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        shown = json.loads(done.stdout.splitlines()[-1])

        assert rules.shows(block, shown, output.whole), "\n".join(shown)


# ---------------------------------------------------------------- the first steps


def first_sh_block_of(document, heading: str) -> list[str]:
    """The commands of the first ```sh block under a heading, without their comments."""
    text = document.read_text()
    (under,) = [n for n, line in enumerate(text.splitlines(), 1) if line == heading]
    _, blocks = rules.split_markdown(text)
    start, lines = next((s, ls) for lang, s, ls in blocks if lang == "sh" and s > under)
    return [c for n, c in rules.sh_commands(document) if start < n <= start + len(lines)]


def first_steps_copier_prints(destination: str) -> list[str]:
    """The commands copier's closing message lists after "Next steps", as it renders them."""
    import jinja2

    message = yaml.safe_load((TEMPLATE / "copier.yml").read_text())["_message_after_copy"]
    shown = jinja2.Template(message).render(
        _copier_conf={"dst_path": destination}, template_version="0.0.0"
    )
    steps = shown.split("Next steps", 1)[1].split(":\n", 1)[1].split("\n\n", 1)[0]
    return [re.sub(r"\s+#\s.*$", "", line).strip() for line in steps.splitlines()]


def as_steps(commands: list[str]) -> list[str]:
    """The commands, with the folder a `cd` names left out: each place names its own."""
    return ["cd <the project>" if c.startswith("cd ") else c for c in commands]


def test_the_first_steps_are_one_list_in_copier_s_message_the_readme_and_getting_started(
    default_rendering,
):
    """Three places tell a new project's first steps; they must not drift into three orders."""
    printed = first_steps_copier_prints("../my-agent")
    readme = first_sh_block_of(default_rendering / "README.md", "## Run it")
    getting_started = first_sh_block_of(TEMPLATE / "docs" / "getting-started.md", "## Run it")

    assert as_steps(printed) == as_steps(readme) == as_steps(getting_started)
    assert (printed[0], readme[0], getting_started[0]) == (
        "cd ../my-agent",
        "cd my-welt-agent",
        "cd ../my-agent",
    )
    assert printed[-1] == "make playground"
