"""`copier update` keeps users' work: temporary git copies of the template, with tags.

0.1.0 and 0.2.0 are earlier releases, read from this repository's own git
history; 0.3.0 is the template as it is now. A project copied from an
earlier release and edited by its user is updated to 0.3.0 the way `make
update` does it, following the CHANGELOG's steps, and must end green.
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
from copier import run_copy, run_update
from copier.errors import UnsafeTemplateError

pytestmark = pytest.mark.slow

PACKAGE = "my_welt_agent"
# The commits released as 0.1.0 (welt-io-strands 0.4, Python 3.10+) and 0.2.0
# (welt-io-strands 0.9, Python 3.12+, the code at the project's top level).
RELEASES = {
    "0.1.0": "540a4f656f987927ed7731683057336bd486af3f",
    "0.2.0": "15d005b668d34233018e1c72fa65a3741d63c02c",
}
CURRENT = "0.3.0"
# The one test of 0.1.0 that 0.2.0 breaks on purpose: Welt before v0.7 is
# no longer spoken. CHANGELOG.md tells the user to delete it.
BARE_ANSWER_TEST = re.compile(
    r"\ndef test_bare_answer_from_welt_before_v07_still_resumes\(start\):.*?(?=\n\ndef |\Z)",
    re.DOTALL,
)

WEATHER_TOOL = '''"""Weather, the user's own tool."""

from strands import tool


@tool
def forecast(city: str) -> str:
    """Tell the weather in a city.

    Args:
        city: Where.
    """
    return f"sunny in {city}"
'''

MIGRATION = """
_migrations:
  - version: "0.2.0"
    when: "{{ _stage == 'after' }}"
    command:
      - "{{ _copier_python }}"
      - "-c"
      - "import pathlib; old = pathlib.Path('app/{{ package_name }}/system_prompt.py'); old.exists() and old.rename('app/{{ package_name }}/prompt.py')"
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
        tarfile.open(fileobj=io.BytesIO(archive.stdout)).extractall(repo, filter="data")
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
    """The check `make update` runs: it moves 0.2.0's files into app/, then finds no leftovers."""
    checked = subprocess.run(
        ["sh", "scripts/check-update.sh"], cwd=project, capture_output=True, text=True
    )
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
    """What a user did: a reworded tool, a tool of their own, a lock."""
    package = project / PACKAGE
    edit(
        package / "tools" / "ask_human.py",
        "Use it when only a person can supply a fact or a decision.",
        "Use it when only a person can supply a fact or a decision; never guess names.",
    )
    (package / "tools" / "weather.py").write_text(WEATHER_TOOL)
    tools = package / "tools" / "__init__.py"
    if release == "0.1.0":  # a tool list, and a policy beside it
        edit(tools, "from .report import publish_report\n", "from .report import publish_report\nfrom .weather import forecast\n")
        edit(tools, "    ask_human,\n", "    ask_human,\n    forecast,\n")
        edit(package / "policy.py", '    "ask_human": ALLOW,\n', '    "ask_human": ALLOW,\n    "forecast": ALLOW,\n')
    else:  # one row per tool
        edit(tools, "from .ask_human import ask_human\n", "from .ask_human import ask_human\nfrom .weather import forecast\n")
        edit(tools, "    Row(ask_human, ALLOW),\n", "    Row(ask_human, ALLOW),\n    Row(forecast, ALLOW),\n")
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
        tests = project / "tests" / "test_ask_human.py"
        tests.write_text(BARE_ANSWER_TEST.sub("", tests.read_text()))
    for command in (
        ["make", "install"],
        ["uv", "run", "ruff", "check", "--fix", "."],  # make format
        ["uv", "run", "ruff", "format", "."],
    ):
        result = run(command, project)
        assert result.returncode == 0, (command, result.stdout[-2000:], result.stderr[-2000:])


@pytest.mark.parametrize(
    "release, generated_for, answers, runs_on",
    [
        ("0.1.0", "3.11", {"python_version": "3.12"}, "3.12"),
        ("0.2.0", "3.13", {}, "3.13"),
    ],
    ids=["0.1.0 for 3.11, moved to 3.12", "0.2.0 for 3.13"],
)
def test_update_moves_the_code_into_app_rebuilds_the_lock_and_keeps_user_files(
    releases, tmp_path, release, generated_for, answers, runs_on
):
    project = copy_project(releases, tmp_path / "project", release, python_version=generated_for)
    make_user_edits(project, release)

    make_update(project, data=answers)
    follow_the_changelog(project, release)

    package = project / "app" / PACKAGE
    assert not (project / PACKAGE).exists() and not (project / "main.py").exists()
    assert (project / ".python-version").read_text() == f"{runs_on}\n"
    runtime = json.loads((project / "agentcore" / "agentcore.json").read_text())["runtimes"][0]
    assert runtime["runtimeVersion"] == f"PYTHON_{runs_on.replace('.', '_')}"
    assert runtime["codeLocation"] == "app/"
    new_lock = (project / "uv.lock").read_text()
    assert 'requires-python = ">=3.12"' in new_lock
    assert re.search(r'name = "welt-io-strands"\nversion = "0\.(9|10)\.', new_lock)
    assert "never guess names" in (package / "tools" / "ask_human.py").read_text()
    assert (package / "tools" / "weather.py").read_text() == WEATHER_TOOL
    assert (package / "welt_request.schema.json").is_file()
    assert "aws-opentelemetry-distro==" in (project / "app" / "pyproject.toml").read_text()
    answers_file = yaml.safe_load((project / ".copier-answers.yml").read_text())
    assert answers_file["_commit"] == CURRENT
    assert answers_file["python_version"] == runs_on
    assert_generated_suite_passes(project)
    registry = run(
        [
            "uv",
            "run",
            "--no-sync",
            "python",
            "-c",
            f"import sys; sys.path[:0] = ['app']; from {PACKAGE}.tools.registry import "
            "project_registry as r; print(r().decision_for('forecast'), sorted(r().files_from))",
        ],
        project,
    )
    assert registry.stdout.split(maxsplit=1) == [
        "allow",
        "['generate_image', 'publish_report', 'write_document']\n",
    ], registry.stderr


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
        assert "generate_image" not in path.read_text(), path
    assert_clean_merge(project)
    tools = served(project, "[row.name for row in main.registry.rows]")
    assert "ask_human" in tools and "generate_image" not in tools


@pytest.fixture
def renamed_module(tmp_path):
    """0.1.0 called the prompt module system_prompt.py; 0.2.0 renames it with a migration."""
    repo = template_copy(tmp_path)
    package = repo / "template" / "app" / "{{package_name}}"
    (package / "prompt.py").rename(package / "system_prompt.py")
    edit(package / "agent.py", "from .prompt import", "from .system_prompt import")
    copier_yml = repo / "copier.yml"
    copier_yml.write_text(
        copier_yml.read_text().replace("/prompt.py", "/system_prompt.py")
    )
    commit_all(repo, "0.1.0", tag="0.1.0")

    (package / "system_prompt.py").rename(package / "prompt.py")
    edit(package / "agent.py", "from .system_prompt import", "from .prompt import")
    copier_yml.write_text(
        copier_yml.read_text().replace("/system_prompt.py", "/prompt.py") + MIGRATION
    )
    commit_all(repo, "Rename system_prompt.py to prompt.py", tag="0.2.0")
    return repo


def test_a_migration_carries_a_renamed_user_module_across(renamed_module, tmp_path):
    project = copy_project(renamed_module, tmp_path / "project", "0.1.0")
    package = project / "app" / PACKAGE
    edit(package / "system_prompt.py", "an assistant in a Slack thread", "Penny, the billing helper")
    commit_all(project, "My prompt")

    update(project, "0.2.0", unsafe=True)

    assert not (package / "system_prompt.py").exists()
    assert "Penny, the billing helper" in (package / "prompt.py").read_text()
    assert "from .prompt import SYSTEM_PROMPT" in (package / "agent.py").read_text()
    assert_clean_merge(project)
    assert "Penny, the billing helper" in served(
        project, f"__import__('{PACKAGE}.agent', fromlist=['agent']).SYSTEM_PROMPT"
    )


def test_an_update_across_a_migration_asks_for_trust(renamed_module, tmp_path):
    project = copy_project(renamed_module, tmp_path / "project", "0.1.0")

    with pytest.raises(UnsafeTemplateError, match="migrations"):
        update(project, "0.2.0")
