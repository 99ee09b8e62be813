"""Every release updates to this one and stays green: a user's project, edited, then `make update`.

For each release .ci/release_tags.py knows (each git tag copier reads), a
project is copied from it with answers of its time, edited as users edit
(a new tool with its row and its test, a reworded sample tool, the prompt,
an MCP server, a model option, deploy/environments.toml, the README) and
committed; then the documented `make update ARGS=--defaults` takes it to
this working tree. Where the update says steps are left, the test takes
them as written, and exactly the steps that release's projects need are
listed; then `make install lint test` (the update's last line) passes,
and every edit is still there and served. The releases come from git
history, so a new release joins by being made. The projects share one
environment per Python (conftest's `shared_environments`): each is still
synced, linted, type-checked and tested whole.
"""

import ast
import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import CURRENT, RELEASES, UV, commit_all, git, python_for, run, run_in
from copier import run_copy

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("git_identity")]

PACKAGE = "my_welt_agent"

# The answers each release's project is copied with: across the releases,
# every question the template has asked, each on a release that asked it.
# The 0.1.0 project answered 3.11, which 0.2.0 stopped offering; its
# update keeps it on 3.12 with --data, as docs/updating.md says.
ANSWERS = {
    "0.1.0": {"python_version": "3.11"},
    "0.3.0": {"include_mcp": True},
    "0.4.0": {"run_store": "s3", "state_bucket": "acme-agent-runs"},
    "0.5.0": {"include_sample_tools": False},
    "0.5.1": {"python_version": "3.12", "include_mcp": True},
    "0.6.0": {"deploy_build": "Container"},
    "0.7.0": {"agent_manages_history": True},
    "0.8.0": {"gate_unlisted_tools": False},
    "0.9.0": {"memory": "agentcore", "include_mcp": True},
    "0.10.0": {"include_image_generation": False},
    "0.12.0": {"include_mcp": True, "run_store": "s3", "state_bucket": "acme-agent-runs"},
    "0.13.0": {"memory": "agentcore", "agent_manages_history": True},
    "0.14.0": {"include_mcp": True, "include_sample_tools": False},
}
UPDATE_ARGS = {"0.1.0": "--defaults --data python_version=3.12"}

# The steps `make update` lists for each release's project, by what each
# asks of the user; every other release's update lists none.
ASKS_THROUGH_ASK = "asks with interrupt()"
BARE_ANSWER = "delete test_bare_answer_from_welt_before_v07_still_resumes"
FORMAT = "`make format`"
STEPS = {
    # and 0.1.0's target of Python 3.10 let ruff keep older forms
    "0.1.0": [ASKS_THROUGH_ASK] * 3 + [BARE_ANSWER, FORMAT],
    "0.2.0": [ASKS_THROUGH_ASK] * 3,
    "0.3.0": [ASKS_THROUGH_ASK] * 3,
    "0.4.0": [ASKS_THROUGH_ASK] * 3,
    "0.5.0": [ASKS_THROUGH_ASK],
    "0.5.1": [ASKS_THROUGH_ASK] * 3,
    "0.6.0": [ASKS_THROUGH_ASK] * 3,
    "0.7.0": [ASKS_THROUGH_ASK] * 3,
    "0.8.0": [ASKS_THROUGH_ASK],
    "0.9.0": [ASKS_THROUGH_ASK],
}


class Layout:
    """Where a project of some release keeps what its user edits."""

    def __init__(self, project: Path) -> None:
        moved = project / "app" / PACKAGE
        self.package = moved if moved.is_dir() else project / PACKAGE  # app/ since 0.3.0
        yours = self.package / "yours"  # since 0.4.0
        self.yours = yours if yours.is_dir() else self.package
        self.tools = self.yours / "tools"
        self.absolute = yours.is_dir()  # yours/ imports the package by its name
        self.api = (self.package / "api.py").is_file()  # since 0.7.0


def weather_tool(layout: Layout) -> str:
    if layout.api:
        source = f"from {PACKAGE}.api import AGENT_NAME"
    elif layout.absolute:
        source = f"from {PACKAGE}.settings import AGENT_NAME"
    else:
        source = "from ..settings import AGENT_NAME"
    return f'''"""Weather, the user's own tool."""

from strands import tool

{source}


@tool
def forecast(city: str) -> str:
    """Tell the weather in a city.

    Args:
        city: Where.
    """
    return f"{{AGENT_NAME}} says: sunny in {{city}}"
'''


def weather_test(layout: Layout) -> tuple[str, str]:
    """The user's test of the tool, where that release kept tests, as they wrote it then."""
    if not layout.absolute:  # before yours/: a plain call
        return "tests/test_weather.py", f'''from {PACKAGE}.tools.weather import forecast


def test_forecast_names_the_city():
    assert forecast("Oslo").endswith("sunny in Oslo")
'''
    scripted = f"{PACKAGE}.api" if layout.api else f"{PACKAGE}.scripted_model"
    return "tests/yours/test_weather.py", f'''"""forecast, the user's own tool, as the agent calls it."""

from {scripted} import call, reply, use


def test_the_model_gets_the_forecast(start):
    thread = start(use(call("forecast", "t1", city="Oslo")), reply("Sunny, they say."))

    events = thread.say("Weather in Oslo?")

    (result,) = thread.model.last_tool_results()
    assert result["content"][0]["text"].endswith("says: sunny in Oslo")
    assert events[-1] == {{"data": "Sunny, they say."}}
'''


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def add_import(path: Path, line: str) -> None:
    """An import among the module's others from the same package, where isort puts it."""
    lines = path.read_text().splitlines(keepends=True)
    prefix = line.split(" import ")[0].rsplit(".", 1)[0] + "."
    siblings = [i for i, old in enumerate(lines) if old.startswith(prefix)]
    at = max([i + 1 for i in siblings if lines[i] < line], default=siblings[0])
    path.write_text("".join([*lines[:at], line, *lines[at:]]))


# What each edit leaves, found after the update in the file of the project it moved to.
README_LINE = "Penny answers billing questions for Acme."
README_SECTION = "## Our runbook\n\nPage the billing team before a deploy.\n"


def edit_as_a_user(project: Path) -> tuple[dict[str, str], list[Path]]:
    """A user's edits; what each must still say after the update, by path; the files edited."""
    layout = Layout(project)
    kept = {}
    files = [layout.tools / "weather.py", layout.tools / "__init__.py", layout.yours / "prompt.py"]
    (layout.tools / "weather.py").write_text(weather_tool(layout))
    kept[f"app/{PACKAGE}/yours/tools/weather.py"] = "says: sunny in {city}"
    tools = layout.tools / "__init__.py"
    add_import(
        tools,
        f"from {PACKAGE}.yours.tools.weather import forecast\n"
        if layout.absolute
        else "from .weather import forecast\n",
    )
    if "    Row(ask_human, ALLOW),\n" in tools.read_text():
        edit(tools, "    Row(ask_human, ALLOW),\n", "    Row(ask_human, ALLOW),\n    Row(forecast, ALLOW),\n")
    else:  # 0.1.0: a list of tools, and their decisions in policy.py
        edit(tools, "    ask_human,\n", "    ask_human,\n    forecast,\n")
        edit(layout.package / "policy.py", '    "ask_human": ALLOW,\n', '    "ask_human": ALLOW,\n    "forecast": ALLOW,\n')
        files.append(layout.package / "policy.py")
    kept[f"app/{PACKAGE}/yours/tools/__init__.py"] = "Row(forecast, ALLOW)"
    test_path, test = weather_test(layout)
    (project / test_path).write_text(test)
    kept[test_path] = "sunny in Oslo"
    files.append(project / test_path)

    edit(layout.yours / "prompt.py", "an assistant in a Slack thread", "Penny, the billing helper")
    kept[f"app/{PACKAGE}/yours/prompt.py"] = "Penny, the billing helper"
    approval = layout.tools / "approval.py"
    if approval.is_file():  # a sample tool, reworded
        edit(approval, "before you take it.", "before you take it; say what it costs.")
        kept[f"app/{PACKAGE}/yours/tools/approval.py"] = "say what it costs."
        files.append(approval)
    servers = next(
        (p for p in (layout.yours / "mcp_servers.py", layout.tools / "mcp_servers.py") if p.is_file()),
        None,
    )
    if servers:
        edit(servers, '    # StreamableHttp("wiki"', '    StreamableHttp("wiki", "http://127.0.0.1:9/mcp"),\n    # StreamableHttp("wiki"')
        edit(servers, '    # "files_read_file": ALLOW,\n', '    "wiki_search": ALLOW,\n    # "files_read_file": ALLOW,\n')
        kept[f"app/{PACKAGE}/yours/mcp_servers.py"] = '"wiki_search": ALLOW'
        files.append(servers)
    options = layout.yours / "model_options.py"
    if options.is_file():
        edit(options, '    "bedrock": {\n        # "temperature": 0.3,', '    "bedrock": {\n        "temperature": 0.3,')
        kept[f"app/{PACKAGE}/yours/model_options.py"] = '        "temperature": 0.3,'
        files.append(options)
    environments = project / "deploy" / "environments.toml"
    if environments.is_file():
        edit(environments, 'account = "000000000000"', 'account = "111122223333"')
        edit(environments, '"your-org/my-welt-agent"', '"acme/penny"')
        kept["deploy/environments.toml"] = 'github_repository = "acme/penny"'
    readme = project / "README.md"
    edit(readme, "# my-welt-agent\n", f"# my-welt-agent\n\n{README_LINE}\n")
    readme.write_text(readme.read_text().rstrip("\n") + f"\n\n{README_SECTION}")
    kept["README.md"] = README_LINE
    return kept, files


def formatted_as_make_format_does(project: Path, mine: list[Path]) -> None:
    """The user's edits, fixed and formatted by ruff as `make format` did on their release."""
    for command in (["check", "--fix", "--quiet"], ["format", "--quiet"]):
        done = subprocess.run(
            [UV, "tool", "run", "ruff", *command, *map(str, mine)],
            cwd=project, capture_output=True, text=True,
        )
        assert done.returncode == 0, done.stdout + done.stderr


def listed_steps(said: str) -> list[str]:
    """The steps `make update` said are left, in its words."""
    if "are left for this project" not in said:
        return []
    listing = said.split("are left for this project:", 1)[1]
    return re.findall(r"^  \d+\. (.+)$", listing, re.M)


def kind_of(step: str) -> str:
    return next((kind for kind in (ASKS_THROUGH_ASK, BARE_ANSWER, FORMAT) if kind in step), step)


def take(step: str, project: Path, checked) -> None:
    """A step as its words tell a user to take it."""
    if ASKS_THROUGH_ASK in step:
        path = project / step.split(":", 1)[0]
        text = path.read_text().replace("tool_context.interrupt(", "ask(tool_context, ")
        importing = f"from {PACKAGE}.api import "
        if importing in text:
            text = re.sub(rf"^{re.escape(importing)}(\(\n)?", rf"{importing}\g<1>ask, ", text, 1, re.M)
        else:
            lines = text.splitlines(keepends=True)
            last = max(i for i, line in enumerate(lines) if line.startswith(("import ", "from ")))
            lines.insert(last + 1, f"{importing}ask\n")
            text = "".join(lines)
        path.write_text(text)
    elif BARE_ANSWER in step:
        path = project / step.split(":", 1)[0]
        tree = ast.parse(path.read_text())
        (test,) = [n for n in tree.body if getattr(n, "name", "") == BARE_ANSWER.split()[-1]]
        lines = path.read_text().splitlines(keepends=True)
        first = min([test.lineno, *(d.lineno for d in test.decorator_list)]) - 1
        del lines[first : test.end_lineno]
        path.write_text("".join(lines))
    elif FORMAT not in step:
        raise AssertionError(f"a step this test does not know how to take: {step}")
    if FORMAT in step or ASKS_THROUGH_ASK in step:
        checked("format")


def python_after(release: str) -> str:
    """The Python the project runs on after its update: the answer, or the newest offered."""
    answered = ANSWERS.get(release, {}).get("python_version", "3.13")
    return "3.12" if "python_version=3.12" in UPDATE_ARGS.get(release, "") else (
        answered if answered in ("3.12", "3.13") else "3.13"
    )


def served(project: Path, expression: str, env: dict[str, str]) -> str:
    """An expression evaluated where `import main` has set up the agent, as the server does."""
    code = f"import sys; sys.path[:0] = ['app']; import main; print({expression})"
    here = {**env, "RUN_STORE": "session-storage", "MCP_SERVERS": "off"}  # no bucket, no server
    result = run(["uv", "run", "--no-sync", "python", "-c", code], project, **here)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip()


# Two halves, each a pytest-xdist scope of its own (--dist loadscope), so
# that the two workers update at once.
def version(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


BY_ROLE = "0.7.0"  # the release that laid the package out by role
EARLY = [release for release in RELEASES if version(release) < version(BY_ROLE)]
LATER = [release for release in RELEASES if version(release) >= version(BY_ROLE)]


class TestFromTheLayoutsBeforeTheRoles:
    @pytest.mark.parametrize("release", EARLY)
    def test_an_update_keeps_the_users_edits_and_ends_green(
        self, released, tmp_path, shared_environments, release
    ):
        update_as_a_user_does(release, released, tmp_path, shared_environments)


class TestFromThePackageByRole:
    @pytest.mark.parametrize("release", LATER)
    def test_an_update_keeps_the_users_edits_and_ends_green(
        self, released, tmp_path, shared_environments, release
    ):
        update_as_a_user_does(release, released, tmp_path, shared_environments)


def update_as_a_user_does(release: str, released: Path, tmp_path: Path, shared_environments):
    """A copy of the release, the user's edits, `make update`, its steps, `make install lint test`."""
    python = python_after(release)
    env = shared_environments(python)
    project = tmp_path / "project"
    run_copy(
        str(released), project, data=ANSWERS.get(release, {}), defaults=True,
        vcs_ref=release, quiet=True,
    )
    git(project, "init", "-q")
    commit_all(project, "Generated")
    kept, edited = edit_as_a_user(project)
    formatted_as_make_format_does(project, edited)
    commit_all(project, "Penny tells the weather")

    def checked(*make: str) -> str:
        done = run(["make", *make], project, **env)
        assert done.returncode == 0, (make, done.stdout[-4000:], done.stderr[-3000:])
        return done.stdout + done.stderr

    args = UPDATE_ARGS.get(release, "--defaults")
    if (project / "Makefile").read_text().count("\nupdate:"):
        updated = run(["make", "update", f"ARGS={args}"], project, **env)
    else:  # 0.1.0 has no `make update`: docs/updating.md gives its three commands
        updated = updating_by_hand(project, args, python, env)
    said = updated.stdout + updated.stderr
    steps = listed_steps(said)
    assert [kind_of(step) for step in steps] == STEPS.get(release, []), said[-4000:]
    assert (updated.returncode == 0) is not steps, said[-4000:]
    assert ("Update merged cleanly" in said) is not steps, said[-4000:]
    for step in steps:
        take(step, project, checked)
    checked("install", "lint", "test")

    answers = yaml.safe_load((project / ".copier-answers.yml").read_text())
    assert answers["_commit"] == CURRENT
    assert (project / ".python-version").read_text() == f"{python}\n"
    (runtime,) = json.loads((project / "agentcore" / "agentcore.json").read_text())["runtimes"]
    assert (runtime["runtimeVersion"], runtime["codeLocation"]) == (
        f"PYTHON_{python.replace('.', '_')}",
        "app/",
    )
    assert "aws-opentelemetry-distro==" in (project / "app" / "pyproject.toml").read_text()
    # What the template once rendered and renders no more is gone; the code is all in app/.
    gone = [PACKAGE, "main.py", "scripts/platform.py", "app/run-store-policy.json"]
    gone += [".copier-readme.md", "scripts/readme_changes.py", f"app/{PACKAGE}/policy.py"]
    gone += ["scripts/move_yours.py", "scripts/keep_old_imports.py"]  # run, and deleted
    assert [path for path in gone if (project / path).exists()] == []
    for path, still in kept.items():
        assert still in (project / path).read_text(), path
    readme = (project / "README.md").read_text()
    assert README_SECTION in readme and not re.search(r"^(<<<<<<<|>>>>>>>) ", readme, re.M)
    assert "make playground" in readme  # and the template's README came with them
    registry = "main.app.state.registry"
    assert served(project, f"{registry}.decision_for('forecast')", env) == "allow"
    assert "Penny, the billing helper" in served(
        project, f"__import__('{PACKAGE}.yours.prompt', fromlist=['x']).SYSTEM_PROMPT", env
    )


def updating_by_hand(project: Path, args: str, python: str, env: dict[str, str]):
    """What docs/updating.md says a 0.1.0 project runs, which `make update` does from 0.2.0."""
    uvx = str(Path(UV).with_name("uvx"))
    commands = [
        [uvx, "--from", "copier>=9.12", "copier", "update", *args.split()],
        ["uv", "lock"],
        ["sh", "scripts/check-update.sh"],
    ]
    for command in commands:
        done = run_in(command, project, python_for(python), **env)
        if done.returncode != 0:
            return done
    return done
