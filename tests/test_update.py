"""`copier update` keeps users' work: temporary git copies of the template, with tags.

0.1.0, 0.2.0, 0.3.0, 0.4.0, 0.5.1 and 0.6.0 are earlier releases, read from this repository's
own git history; 0.7.0 is the template as it is now. A project copied from an
earlier release and edited by its user is updated to 0.7.0 the way `make
update` does it, following the CHANGELOG's steps, and must end green, with
the user's files in app/<package>/yours/.
"""

import io
import json
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml
from conftest import TEMPLATE, run
from packaging.version import Version
from copier import run_copy, run_update
from copier.errors import UnsafeTemplateError

pytestmark = pytest.mark.slow

PACKAGE = "my_welt_agent"
# The commits released as 0.1.0 (welt-io-strands 0.4, Python 3.10+), 0.2.0
# (welt-io-strands 0.9, Python 3.12+, the code at the project's top level) and
# 0.3.0 (the code in app/, the user's files among the template's) and 0.4.0
# (the user's files in yours/, stored runs on Strands' snapshots).
RELEASES = {
    "0.1.0": "540a4f656f987927ed7731683057336bd486af3f",
    "0.2.0": "15d005b668d34233018e1c72fa65a3741d63c02c",
    "0.3.0": "c98cfe3ef8625d3db6e249c4cac93cab9a91d245",
    "0.4.0": "7ea269b3e417cfb29023b3d2f86b1ee5087e32c7",
    # (deployed with the AgentCore CLI; V2 by scripts/platform.py)
    "0.5.1": "11b59264f97049374c80a51817b00b3b2375d647",
    # (deployed as code; the package's modules side by side)
    "0.6.0": "2a1b1410457752c03a4527432a99e24241a43c5a",
    # (the package laid out by role; answers taken from anyone)
    "0.7.0": "3f86cce3109964d4b01aab178ff22cc5b1307a2f",
    # (who may answer; an audit line per answer)
    "0.8.0": "8c604d190e6a192a9db896265ef32a9ee704b5eb",
    # (memory per Slack user)
    "0.9.0": "b81081c7df7454e90463d209a067fc8565a48013",
    # (one identity per resume; sealed runs)
    "0.10.0": "8624bdaf7aaf71804b26b19594bc818d8f6d7401",
    # (docs held to the code; a README copy to compare with)
    "0.11.0": "9514571379e16d46c6012ddbd573812d67bb14f9",
    # (the playground)
    "0.12.0": "d83eeac0cd351c56076309d1f14dd042a3d966ae",
    # (test fixes)
    "0.12.1": "01df22fb58fb471961c965ace8a6b4e6c2942d21",
    # (every provider deploys; rollback)
    "0.13.0": "5b5ec774cb6c3a0e1905f4e3477b8dbe72fe5549",
}
CURRENT = "0.14.0"
# The one test of 0.1.0 that 0.2.0 breaks on purpose: Welt before v0.7 is
# no longer spoken. CHANGELOG.md tells the user to delete it.
BARE_ANSWER_TEST = re.compile(
    r"\ndef test_bare_answer_from_welt_before_v07_still_resumes\(start\):.*?(?=\n\ndef |\Z)",
    re.DOTALL,
)

WEATHER_TOOL = '''"""Weather, the user's own tool."""

from strands import tool

from ..settings import AGENT_NAME


@tool
def forecast(city: str) -> str:
    """Tell the weather in a city.

    Args:
        city: Where.
    """
    return f"{AGENT_NAME} says: sunny in {city}"
'''
# What 0.4.0 and later make of it: in yours/tools/, its imports absolute.
MOVED_WEATHER_TOOL = WEATHER_TOOL.replace("from ..settings", f"from {PACKAGE}.settings")

# The user's test of it, which imports it by its absolute name.
WEATHER_TEST = f'''from {PACKAGE}.tools.weather import forecast


def test_forecast_names_the_city():
    assert forecast("Oslo").endswith("sunny in Oslo")
'''

MIGRATION = """
_migrations:
  - version: "0.2.0"
    when: "{{ _stage == 'after' }}"
    command:
      - "{{ _copier_python }}"
      - "-c"
      - "import pathlib; old = pathlib.Path('app/{{ package_name }}/yours/system_prompt.py'); old.exists() and old.replace('app/{{ package_name }}/yours/prompt.py')"
"""
# The release that stops rendering a file of yours excludes its old path, so
# that copier leaves it for the migration instead of deleting it.
OLD_PROMPT = """  - "{% if _copier_operation == 'update' %}app/*/yours/system_prompt.py{% endif %}"
"""


@pytest.fixture(autouse=True)
def git_identity(monkeypatch):
    for variable in ("GIT_AUTHOR", "GIT_COMMITTER"):
        monkeypatch.setenv(f"{variable}_NAME", "Template Tests")
        monkeypatch.setenv(f"{variable}_EMAIL", "tests@example.invalid")


def git(cwd: Path, *args: str) -> str:
    identity = ["-c", "user.name=Template Tests", "-c", "user.email=tests@example.invalid"]
    return subprocess.run(
        ["git", *identity, *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def commit_all(cwd: Path, message: str, tag: str | None = None) -> None:
    git(cwd, "add", "-A")
    git(cwd, "commit", "-q", "-m", message)
    if tag:
        git(cwd, "tag", tag)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


def copy_working_tree(destination: Path) -> None:
    shutil.copytree(
        TEMPLATE,
        destination,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache"
        ),
    )


def template_copy(tmp_path: Path) -> Path:
    """The template's working tree, in a fresh git repository."""
    repo = tmp_path / "template"
    copy_working_tree(repo)
    git(repo, "init", "-q")
    return repo


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    """A template repository tagged with each release, and 0.3.0: this working tree."""
    repo = tmp_path_factory.mktemp("releases") / "template"
    repo.mkdir()
    git(repo, "init", "-q")
    for tag, commit in RELEASES.items():
        archive = subprocess.run(
            ["git", "archive", "--format=tar", commit], cwd=TEMPLATE, capture_output=True
        )
        assert archive.returncode == 0, (
            "these tests read earlier releases from the template's git history; "
            f"clone with full history (git: {archive.stderr.decode().strip()})"
        )
        clear(repo)
        # The "data" filter (Python 3.11.4+) refuses anything outside repo.
        safely = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tarfile.open(fileobj=io.BytesIO(archive.stdout)).extractall(repo, **safely)
        commit_all(repo, tag, tag=tag)
    clear(repo)
    copy_working_tree(repo)
    commit_all(repo, CURRENT, tag=CURRENT)
    return repo


def clear(repo: Path) -> None:
    for path in repo.iterdir():
        if path.name != ".git":
            shutil.rmtree(path) if path.is_dir() else path.unlink()


def copy_project(repo: Path, destination: Path, vcs_ref: str, **answers) -> Path:
    run_copy(
        str(repo), destination, data=answers, defaults=True, vcs_ref=vcs_ref, quiet=True
    )
    git(destination, "init", "-q")
    commit_all(destination, "Generated")
    return destination


def update(project: Path, vcs_ref: str, **options) -> None:
    run_update(
        project,
        defaults=True,
        overwrite=True,
        vcs_ref=vcs_ref,
        quiet=True,
        conflict="rej",
        **options,
    )


def assert_clean_merge(project: Path) -> None:
    """The check `make update` runs: it moves the user's files into app/ and yours/, then finds no leftovers."""
    checked = run(["sh", "scripts/check-update.sh"], project)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def assert_generated_suite_passes(project: Path) -> None:
    for command in (
        ["uv", "sync", "--locked"],
        ["make", "pins"],
        ["uv", "run", "--no-sync", "ruff", "check", "."],
        ["uv", "run", "--no-sync", "ruff", "format", "--check", "."],
        ["uv", "run", "--no-sync", "pytest", "-q", "-p", "no:cacheprovider"],
    ):
        result = run(command, project)
        assert result.returncode == 0, (
            command,
            result.stdout[-3000:],
            result.stderr[-2000:],
        )


def served(project: Path, expression: str) -> str:
    """An expression evaluated where `import main` has set up the agent, as the server does."""
    code = f"import sys; sys.path[:0] = ['app']; import main; print({expression})"
    result = run(["uv", "run", "python", "-c", code], project)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def make_user_edits(project: Path, release: str) -> None:
    """What a user did: a reworded tool, a tool of their own and its test, a prompt, a lock."""
    package = project / PACKAGE if release in ("0.1.0", "0.2.0") else project / "app" / PACKAGE
    edit(
        package / "tools" / "ask_human.py",
        "Use it when only a person can supply a fact or a decision.",
        "Use it when only a person can supply a fact or a decision; never guess names.",
    )
    edit(package / "prompt.py", "an assistant in a Slack thread", "Penny, the billing helper")
    (package / "tools" / "weather.py").write_text(WEATHER_TOOL)
    (project / "tests" / "test_weather.py").write_text(WEATHER_TEST)
    tools = package / "tools" / "__init__.py"
    if release == "0.1.0":  # a tool list, and a policy beside it
        edit(tools, "from .report import publish_report\n", "from .report import publish_report\nfrom .weather import forecast\n")
        edit(tools, "    ask_human,\n", "    ask_human,\n    forecast,\n")
        edit(package / "policy.py", '    "ask_human": ALLOW,\n', '    "ask_human": ALLOW,\n    "forecast": ALLOW,\n')
    else:  # one row per tool
        edit(tools, "from .ask_human import ask_human\n", "from .ask_human import ask_human\nfrom .weather import forecast\n")
        edit(tools, "    Row(ask_human, ALLOW),\n", "    Row(ask_human, ALLOW),\n    Row(forecast, ALLOW),\n")
    servers = package / "tools" / "mcp_servers.py"
    if servers.exists():  # ALLOW one MCP tool, so ALLOW's import is used now
        edit(servers, "import ALLOW  # noqa: F401\n", "import ALLOW\n")
        edit(servers, '    # "files_read_file": ALLOW,\n', '    "wiki_search": ALLOW,\n')
    locked = run(["uv", "lock"], project)
    assert locked.returncode == 0, locked.stderr
    commit_all(project, "My tools")


def make_update(project: Path, **options) -> None:
    """What `make update` does: copier update, uv lock, the update check, then install."""
    update(project, CURRENT, **options)
    for command in (["uv", "lock"],):
        result = run(command, project)
        assert result.returncode == 0, result.stderr
    assert_clean_merge(project)


def follow_the_changelog(project: Path, release: str) -> None:
    """The steps CHANGELOG.md gives for an update from this release, after `make update`."""
    if release == "0.1.0":
        tests = project / "tests" / "yours" / "test_ask_human.py"
        tests.write_text(BARE_ANSWER_TEST.sub("", tests.read_text()))
    installed = run(["make", "install"], project)
    assert installed.returncode == 0, (installed.stdout[-2000:], installed.stderr[-2000:])
    every_question_through_ask(TEMPLATE, project, project)  # 0.10.0's step, for every release
    readme_of_the_template(TEMPLATE, project, project)  # 0.11.0's, likewise
    if release in ("0.1.0", "0.2.0"):  # make format: ruff modernises the user's files
        for command in (["uv", "run", "ruff", "check", "--fix", "."], ["uv", "run", "ruff", "format", "."]):
            result = run(command, project)
            assert result.returncode == 0, (command, result.stdout[-2000:], result.stderr[-2000:])


@pytest.mark.parametrize(
    "release, generated_for, answers, runs_on",
    [
        ("0.1.0", "3.11", {"python_version": "3.12"}, "3.12"),
        ("0.2.0", "3.13", {}, "3.13"),
        ("0.3.0", "3.13", {"include_mcp": True}, "3.13"),
    ],
    ids=["0.1.0 for 3.11, moved to 3.12", "0.2.0 for 3.13", "0.3.0 with MCP, for 3.13"],
)
def test_update_moves_the_users_files_into_yours_rebuilds_the_lock_and_keeps_them(
    releases, tmp_path, release, generated_for, answers, runs_on
):
    kept = {key: value for key, value in answers.items() if key != "python_version"}
    project = copy_project(
        releases, tmp_path / "project", release, python_version=generated_for, **kept
    )
    make_user_edits(project, release)

    make_update(project, data=answers)
    follow_the_changelog(project, release)

    package = project / "app" / PACKAGE
    yours = package / "yours"
    assert not (project / PACKAGE).exists() and not (project / "main.py").exists()
    # The user's files are in yours/, with their edits; none is left behind.
    assert "never guess names" in (yours / "tools" / "ask_human.py").read_text()
    assert (yours / "tools" / "weather.py").read_text() == MOVED_WEATHER_TOOL
    assert "Penny, the billing helper" in (yours / "prompt.py").read_text()
    assert f"from {PACKAGE}.yours.tools.weather import forecast" in (
        project / "tests" / "test_weather.py"
    ).read_text()
    assert sorted(path.name for path in (package / "tools").glob("*.py")) == [
        "lazy.py",
        "left_out.py",
        "mcp.py",
        "prebuilt.py",
        "registry.py",  # since 0.7.0 the stand-in for the old name the user's files import
    ]
    assert not (package / "prompt.py").exists() and not (package / "policy.py").exists()
    assert (project / "tests" / "yours" / "test_ask_human.py").is_file()
    assert not (project / "tests" / "test_ask_human.py").exists()
    if answers.get("include_mcp"):
        assert '"wiki_search": ALLOW' in (yours / "mcp_servers.py").read_text()
    # The rest arrived.
    assert (yours / "model_options.py").is_file()
    assert (yours / "model_prices.py").is_file()
    assert (project / ".python-version").read_text() == f"{runs_on}\n"
    runtime = json.loads((project / "agentcore" / "agentcore.json").read_text())["runtimes"][0]
    assert runtime["runtimeVersion"] == f"PYTHON_{runs_on.replace('.', '_')}"
    assert runtime["codeLocation"] == "app/"
    new_lock = (project / "uv.lock").read_text()
    assert 'requires-python = ">=3.12"' in new_lock
    assert re.search(r'name = "welt-io-strands"\nversion = "0\.(9|10)\.', new_lock)
    assert (package / "wire" / "welt_request.schema.json").is_file()
    assert "aws-opentelemetry-distro==" in (project / "app" / "pyproject.toml").read_text()
    answers_file = yaml.safe_load((project / ".copier-answers.yml").read_text())
    assert answers_file["_commit"] == CURRENT
    assert answers_file["python_version"] == runs_on
    assert_generated_suite_passes(project)
    # The app serves them: the rows (a 0.1.0 policy.py's decision and FILES_FROM
    # made into rows), the reworded tool, the prompt.
    registry = "main.app.state.registry"
    rows = f"{registry}.decision_for('forecast'), sorted({registry}.files_from)"
    assert served(project, rows) == (
        "allow ['generate_image', 'publish_report', 'write_document']\n"
    )
    ask_human = "[r.tool for r in main.app.state.registry.rows if r.name == 'ask_human'][0]"
    assert "never guess names" in served(project, f"{ask_human}.tool_spec['description']")
    assert "Penny, the billing helper" in served(
        project, f"__import__('{PACKAGE}.yours.prompt', fromlist=['prompt']).SYSTEM_PROMPT"
    )


def test_a_deprecated_python_answer_is_dropped_for_the_newest_by_default(
    releases, tmp_path
):
    project = copy_project(releases, tmp_path / "project", "0.1.0", python_version="3.11")

    update(project, CURRENT)

    assert (project / ".python-version").read_text() == "3.13\n"
    answers = yaml.safe_load((project / ".copier-answers.yml").read_text())
    assert answers["python_version"] == "3.13"


def test_turning_image_generation_off_removes_its_files_and_wiring(releases, tmp_path):
    project = copy_project(releases, tmp_path / "project", CURRENT)
    assert (project / "tests" / "test_image_generation.py").exists()

    update(project, CURRENT, data={"include_image_generation": False})

    assert not (project / "tests" / "test_image_generation.py").exists()
    for path in project.rglob("*.py"):
        if path.name == "test_docs.py":  # lists what the docs name with other answers
            continue
        assert "generate_image" not in path.read_text(), path
    assert_clean_merge(project)
    tools = served(project, "[row.name for row in main.app.state.registry.rows]")
    assert "ask_human" in tools and "generate_image" not in tools


def test_an_update_leaves_yours_alone_and_brings_back_only_the_skeleton(releases, tmp_path):
    project = copy_project(releases, tmp_path / "project", CURRENT)
    yours = project / "app" / PACKAGE / "yours"
    edit(yours / "prompt.py", "an assistant in a Slack thread", "Penny, the billing helper")
    (yours / "tools" / "approval.py").unlink()  # a sample tool the user did not want
    (project / "tests" / "yours" / "test_approval.py").unlink()
    (yours / "model_options.py").unlink()  # part of the skeleton, which model.py reads
    (yours / "model_prices.py").unlink()  # part of it too: factory.py reads the prices
    commit_all(project, "My changes")

    update(project, CURRENT, data={"include_mcp": True})

    assert "Penny, the billing helper" in (yours / "prompt.py").read_text()
    assert not (yours / "tools" / "approval.py").exists()
    assert not (project / "tests" / "yours" / "test_approval.py").exists()
    assert (yours / "model_options.py").is_file()
    assert (yours / "model_prices.py").is_file()
    assert "USE_MCP = True\n" in (project / "app" / PACKAGE / "settings.py").read_text()
    assert_clean_merge(project)


@pytest.fixture
def renamed_module(tmp_path):
    """0.1.0 called the prompt module system_prompt.py; 0.2.0 renames it with a migration."""
    repo = template_copy(tmp_path)
    package = repo / "template" / "app" / "{{package_name}}"
    yours = package / "yours"
    (yours / "prompt.py.jinja").rename(yours / "system_prompt.py.jinja")
    edit(package / "factory.py", "from .yours.prompt import", "from .yours.system_prompt import")
    commit_all(repo, "0.1.0", tag="0.1.0")

    (yours / "system_prompt.py.jinja").rename(yours / "prompt.py.jinja")
    edit(package / "factory.py", "from .yours.system_prompt import", "from .yours.prompt import")
    copier_yml = repo / "copier.yml"
    edit(copier_yml, "\n_message_after_copy:", f"{OLD_PROMPT}\n_message_after_copy:")
    copier_yml.write_text(copier_yml.read_text() + MIGRATION)
    commit_all(repo, "Rename system_prompt.py to prompt.py", tag="0.2.0")
    return repo


def test_a_migration_carries_a_renamed_user_module_across(renamed_module, tmp_path):
    project = copy_project(renamed_module, tmp_path / "project", "0.1.0")
    package = project / "app" / PACKAGE
    yours = package / "yours"
    edit(yours / "system_prompt.py", "an assistant in a Slack thread", "Penny, the billing helper")
    commit_all(project, "My prompt")

    update(project, "0.2.0", unsafe=True)

    assert not (yours / "system_prompt.py").exists()
    assert "Penny, the billing helper" in (yours / "prompt.py").read_text()
    assert "from .yours.prompt import SYSTEM_PROMPT" in (package / "factory.py").read_text()
    assert_clean_merge(project)
    assert "Penny, the billing helper" in served(
        project, f"__import__('{PACKAGE}.yours.prompt', fromlist=['prompt']).SYSTEM_PROMPT"
    )


def test_an_update_across_a_migration_asks_for_trust(renamed_module, tmp_path):
    project = copy_project(renamed_module, tmp_path / "project", "0.1.0")

    with pytest.raises(UnsafeTemplateError, match="migrations"):
        update(project, "0.2.0")


def test_an_update_from_051_moves_the_deploy_onto_the_stack_and_keeps_yours(releases, tmp_path):
    project = copy_project(
        releases, tmp_path / "project", "0.5.1", run_store="s3", state_bucket="acme-runs"
    )
    yours = project / "app" / PACKAGE / "yours"
    (yours / "tools" / "weather.py").write_text(MOVED_WEATHER_TOOL)
    edit(
        yours / "tools" / "__init__.py",
        f"from {PACKAGE}.yours.tools.report import publish_report\n",
        f"from {PACKAGE}.yours.tools.report import publish_report\n"
        f"from {PACKAGE}.yours.tools.weather import forecast\n",
    )
    edit(
        yours / "tools" / "__init__.py",
        "    Row(ask_human, ALLOW),\n",
        "    Row(ask_human, ALLOW),\n    Row(forecast, ALLOW),\n",
    )
    edit(project / "agentcore" / "aws-targets.json", "000000000000", "111122223333")
    locked = run(["uv", "lock"], project)
    assert locked.returncode == 0, locked.stderr
    commit_all(project, "My tool, my account")

    make_update(project)
    take_the_new_readme(releases, project, tmp_path / "fresh")
    every_question_through_ask(releases, project, tmp_path)

    # The deployment arrived, the out-of-band platform switch and the CLI's policy left.
    settings = (project / "deploy" / "environments.toml").read_text()
    assert 'state_bucket = "acme-runs"' in settings and 'account = "000000000000"' in settings
    assert not (project / "scripts" / "platform.py").exists()
    assert not (project / "app" / "run-store-policy.json").exists()
    assert "platform-v2" not in (project / "Makefile").read_text()
    (runtime,) = json.loads((project / "agentcore" / "agentcore.json").read_text())["runtimes"]
    assert not {"envVars", "additionalPolicies"} & set(runtime)
    # What is yours stays as you left it.
    assert "111122223333" in (project / "agentcore" / "aws-targets.json").read_text()
    assert "Row(forecast, ALLOW)" in (yours / "tools" / "__init__.py").read_text()
    assert_generated_suite_passes(project)


def take_the_new_readme(repo: Path, project: Path, fresh: Path) -> None:
    """The step docs/updating.md gives for 0.6.0: a fresh copy's README, with the same answers."""
    answers = yaml.safe_load((project / ".copier-answers.yml").read_text())
    data = {key: value for key, value in answers.items() if not key.startswith("_")}
    run_copy(str(repo), fresh, data=data, defaults=True, vcs_ref=CURRENT, quiet=True)
    shutil.copy(fresh / "README.md", project / "README.md")


# Updates from the releases that keep the user's files in yours/ (0.4.0 on),
# made the way docs/updating.md says: `make update ARGS=--defaults` with the
# project's own Makefile, the steps the docs give for each release crossed,
# then `make lint test`. To cover a new release, add it to RELEASES and here;
# a step the docs give for updating to a release goes in STEPS_FOR.
FROM_YOURS = {
    "0.4.0": {},
    "0.5.1": {"python_version": "3.12", "include_mcp": True},
}

# The user's new tool's test, written against the old release's fixtures:
# `start` serves a thread in-process whose scripted model calls the tool.
YOURS_WEATHER_TEST = f'''"""forecast, the user's own tool, as the agent calls it."""

from {PACKAGE}.scripted_model import call, reply, use
from {PACKAGE}.settings import AGENT_NAME


def test_the_model_gets_the_forecast(start):
    thread = start(use(call("forecast", "t1", city="Oslo")), reply("Sunny, they say."))

    events = thread.say("Weather in Oslo?")

    (result,) = thread.model.last_tool_results()
    assert result["content"] == [{{"text": f"{{AGENT_NAME}} says: sunny in Oslo"}}]
    assert events[-1] == {{"data": "Sunny, they say."}}
'''


def make_checked(project: Path, *command: str) -> subprocess.CompletedProcess:
    result = run(["make", *command], project)
    assert result.returncode == 0, (command, result.stdout[-4000:], result.stderr[-3000:])
    return result


def generated_and_installed(repo: Path, destination: Path, release: str, **answers) -> Path:
    """What the README's first steps make: a copy, `make install`, `git init` and a commit."""
    run_copy(str(repo), destination, data=answers, defaults=True, vcs_ref=release, quiet=True)
    git(destination, "init", "-q")
    make_checked(destination, "install")
    commit_all(destination, "Generated")
    return destination


# The files the user wrote or edited in yours/ and tests/yours/, relative to the
# project, and what of the user's each must still hold after an update (a release
# that moves modules may rewrite the imports in them, as 0.4.0's did).
YOURS_EDITED = {
    f"app/{PACKAGE}/yours/tools/weather.py": 'return f"{AGENT_NAME} says: sunny in {city}"',
    f"app/{PACKAGE}/yours/tools/__init__.py": "    Row(forecast, ALLOW),\n",
    f"app/{PACKAGE}/yours/prompt.py": "Penny, the billing helper",
    "tests/yours/test_weather.py": "def test_the_model_gets_the_forecast(start):",
}
USERS_TEST = "tests/yours/test_weather.py"


def add_import(path: Path, line: str) -> None:
    """An import among the module's others from the same package, where isort puts it."""
    lines = path.read_text().splitlines(keepends=True)
    package = line.rsplit(".", 1)[0].removeprefix("from ")
    siblings = [i for i, old in enumerate(lines) if old.startswith(f"from {package}.")]
    at = max([i + 1 for i in siblings if lines[i] < line], default=siblings[0])
    path.write_text("".join([*lines[:at], line, *lines[at:]]))


def edit_yours(project: Path) -> None:
    """A user's work in yours/: a new tool with its row, a reworded prompt, the tool's test.

    The test passes on the release the project came from before it is committed.
    """
    yours = project / "app" / PACKAGE / "yours"
    (yours / "tools" / "weather.py").write_text(MOVED_WEATHER_TOOL)
    tools = yours / "tools" / "__init__.py"
    add_import(tools, f"from {PACKAGE}.yours.tools.weather import forecast\n")
    edit(tools, "    Row(ask_human, ALLOW),\n", "    Row(ask_human, ALLOW),\n    Row(forecast, ALLOW),\n")
    edit(yours / "prompt.py", "an assistant in a Slack thread", "Penny, the billing helper")
    (project / "tests" / "yours" / "test_weather.py").write_text(YOURS_WEATHER_TEST)
    own_test = run(["uv", "run", "pytest", "-q", "-p", "no:cacheprovider", USERS_TEST], project)
    assert own_test.returncode == 0, own_test.stdout[-3000:]
    make_checked(project, "lint")
    commit_all(project, "Penny tells the weather")


def fresh_readme(repo: Path, project: Path, tmp_path: Path) -> None:
    take_the_new_readme(repo, project, tmp_path / "fresh")


def readme_of_the_template(repo: Path, project: Path, tmp_path: Path) -> None:
    """0.11.0: a README never edited takes the template's, which `make test` now holds to the code."""
    shutil.copy(project / ".copier-readme.md", project / "README.md")


def every_question_through_ask(repo: Path, project: Path, tmp_path: Path) -> None:
    """0.10.0: each tool of yours that calls `tool_context.interrupt(` asks through `ask`."""
    for path in (project / "app" / PACKAGE / "yours").rglob("*.py"):
        text = path.read_text()
        if "tool_context.interrupt(" not in text:
            continue
        lines = text.replace("tool_context.interrupt(", "ask(tool_context, ").splitlines(True)
        last_import = max(i for i, line in enumerate(lines) if line.startswith(("import", "from")))
        lines.insert(last_import + 1, f"from {PACKAGE}.api import ask\n")
        path.write_text("".join(lines))
        for command in (["ruff", "check", "--fix", "-q"], ["ruff", "format", "-q"]):
            fixed = run(["uv", "run", *command, str(path)], project)
            assert fixed.returncode == 0, fixed.stdout + fixed.stderr


# The steps docs/updating.md gives after `make update`, by the release that
# brings them; each is (template repository, project, a folder of its own).
STEPS_FOR = {
    "0.6.0": [fresh_readme],
    "0.10.0": [every_question_through_ask],
    "0.11.0": [readme_of_the_template],
}


@pytest.mark.parametrize("release", FROM_YOURS)
def test_an_update_from_a_release_with_yours_keeps_the_users_tool_served_and_tested(
    releases, tmp_path, release
):
    project = generated_and_installed(
        releases, tmp_path / "project", release, **FROM_YOURS[release]
    )
    edit_yours(project)
    as_written = {path: (project / path).read_text() for path in YOURS_EDITED}

    updated = make_checked(project, "update", "ARGS=--defaults")
    for version, steps in STEPS_FOR.items():
        if Version(release) < Version(version) <= Version(CURRENT):
            for step in steps:
                step(releases, project, tmp_path)
    checked = make_checked(project, "lint", "test")

    assert "Update merged cleanly" in updated.stdout + updated.stderr
    # A release before 0.11.0 kept no copy of the template's README to compare with.
    assert "diff README.md .copier-readme.md" in updated.stdout + updated.stderr
    answers = yaml.safe_load((project / ".copier-answers.yml").read_text())
    assert answers["_commit"] == CURRENT
    for path, kept in YOURS_EDITED.items():
        assert kept in (project / path).read_text(), path
    # Untouched: the old module names they import are kept importable beside them.
    assert {path: (project / path).read_text() for path in YOURS_EDITED} == as_written
    assert " passed" in checked.stdout and "Bytecode compiled" not in checked.stderr
    own_test = run(["uv", "run", "pytest", "-q", "-p", "no:cacheprovider", USERS_TEST], project)
    assert own_test.returncode == 0 and "1 passed" in own_test.stdout, own_test.stdout[-3000:]
    assert served(project, "main.app.state.registry.decision_for('forecast')") == "allow\n"
    assert "Penny, the billing helper" in served(
        project, f"__import__('{PACKAGE}.yours.prompt', fromlist=['prompt']).SYSTEM_PROMPT"
    )


@pytest.fixture
def readme_rewritten(tmp_path):
    """Two releases of this template whose READMEs differ: a module row moved, a section added."""
    repo = template_copy(tmp_path)
    commit_all(repo, "0.10.0", tag="0.10.0")
    readme = repo / "template" / "README.md.jinja"
    edit(readme, "| `app/{{ package_name }}/wire/nesting.py` |", "| `app/{{ package_name }}/wire/depth.py` |")
    edit(readme, "\n## Add a tool\n", "\n## Talk to it\n\nSay hello in a thread.\n\n## Add a tool\n")
    commit_all(repo, "The README moves a module and adds a section", tag="0.11.0")
    return repo


def test_make_update_names_the_readme_sections_the_release_changed(readme_rewritten, tmp_path):
    """README.md is yours, so copier leaves it; the update says which of its sections to read again."""
    project = copy_project(readme_rewritten, tmp_path / "project", "0.10.0")
    yours = (project / "README.md").read_text()

    updated = make_checked(project, "update", "ARGS=--defaults")

    said = updated.stdout + updated.stderr
    assert "README.md is yours" in said, said[-3000:]
    changed = re.findall(r"^  (#+ .+)$", said, re.M)
    assert changed == ["## Where things are (changed)", "## Talk to it (new)"], said[-3000:]
    assert "git diff -- .copier-readme.md" in said
    assert (project / "README.md").read_text() == yours
    assert "## Talk to it" in (project / ".copier-readme.md").read_text()
