"""`copier update` keeps users' work: temporary git copies of the template, with tags.

0.1.0 is the release that landed first, read from this repository's own git
history; 0.2.0 is the template as it is now. A project copied from 0.1.0
and edited by its user is updated to 0.2.0, following the CHANGELOG's
steps, and must end green.
"""

import io
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
# The commit that was released as 0.1.0 (welt-io-strands 0.4, Python 3.10+).
RELEASE_0_1_0 = "540a4f656f987927ed7731683057336bd486af3f"
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
      - "import pathlib; old = pathlib.Path('{{ package_name }}/system_prompt.py'); old.exists() and old.rename('{{ package_name }}/prompt.py')"
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
    """A template repository tagged 0.1.0 (the first release) and 0.2.0 (this one)."""
    repo = tmp_path_factory.mktemp("releases") / "template"
    repo.mkdir()
    archive = subprocess.run(
        ["git", "archive", "--format=tar", RELEASE_0_1_0],
        cwd=TEMPLATE,
        capture_output=True,
    )
    assert archive.returncode == 0, (
        "these tests read release 0.1.0 from the template's git history; "
        f"clone with full history (git: {archive.stderr.decode().strip()})"
    )
    tarfile.open(fileobj=io.BytesIO(archive.stdout)).extractall(repo, filter="data")
    git(repo, "init", "-q")
    commit_all(repo, "0.1.0", tag="0.1.0")
    for path in repo.iterdir():
        if path.name != ".git":
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    copy_working_tree(repo)
    commit_all(repo, "0.2.0", tag="0.2.0")
    return repo


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
    """The check `make update` runs: no .rej files, no conflict markers."""
    checked = subprocess.run(
        ["sh", "scripts/check-update.sh"], cwd=project, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stderr


def assert_generated_suite_passes(project: Path) -> None:
    for command in (
        ["uv", "sync", "--locked"],
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
    result = run(["uv", "run", "python", "-c", f"import main; print({expression})"], project)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def make_user_edits(project: Path) -> None:
    """What a user of 0.1.0 did: a reworded tool, a tool of their own, a lock."""
    package = project / PACKAGE
    edit(
        package / "tools" / "ask_human.py",
        "Use it when only a person can supply a fact or a decision.",
        "Use it when only a person can supply a fact or a decision; never guess names.",
    )
    (package / "tools" / "weather.py").write_text(WEATHER_TOOL)
    edit(
        package / "tools" / "__init__.py",
        "from .report import publish_report\n",
        "from .report import publish_report\nfrom .weather import forecast\n",
    )
    edit(package / "tools" / "__init__.py", "    ask_human,\n", "    ask_human,\n    forecast,\n")
    edit(
        package / "policy.py",
        '    "ask_human": ALLOW,\n',
        '    "ask_human": ALLOW,\n    "forecast": ALLOW,\n',
    )
    locked = run(["uv", "lock"], project)
    assert locked.returncode == 0, locked.stderr
    commit_all(project, "My tools")


def follow_the_changelog(project: Path) -> None:
    """The steps CHANGELOG.md gives for 0.1.0 -> 0.2.0, after `make update`."""
    tests = project / "tests" / "test_ask_human.py"
    tests.write_text(BARE_ANSWER_TEST.sub("", tests.read_text()))
    for command in (
        ["uv", "lock"],
        ["uv", "sync"],
        ["uv", "run", "ruff", "check", "--fix", "."],  # make format
        ["uv", "run", "ruff", "format", "."],
    ):
        result = run(command, project)
        assert result.returncode == 0, (command, result.stdout[-2000:], result.stderr[-2000:])


@pytest.mark.parametrize(
    "generated_for, answers, runs_on",
    [
        ("3.11", {"python_version": "3.12"}, "3.12"),
        ("3.13", {}, "3.13"),
    ],
    ids=["generated for 3.11, moved to 3.12", "generated for 3.13"],
)
def test_update_from_0_1_0_moves_python_rebuilds_the_lock_and_keeps_user_files(
    releases, tmp_path, generated_for, answers, runs_on
):
    project = copy_project(
        releases, tmp_path / "project", "0.1.0", python_version=generated_for
    )
    make_user_edits(project)
    old_lock = (project / "uv.lock").read_text()
    assert 'requires-python = ">=3.10"' in old_lock

    update(project, "0.2.0", data=answers)
    follow_the_changelog(project)

    package = project / PACKAGE
    assert (project / ".python-version").read_text() == f"{runs_on}\n"
    assert f"PYTHON_{runs_on.replace('.', '_')}" in (project / "agentcore" / "agentcore.json").read_text()
    new_lock = (project / "uv.lock").read_text()
    assert 'requires-python = ">=3.12"' in new_lock
    assert re.search(r'name = "welt-io-strands"\nversion = "0\.(9|10)\.', new_lock)
    assert "never guess names" in (package / "tools" / "ask_human.py").read_text()
    assert (package / "tools" / "weather.py").read_text() == WEATHER_TOOL
    assert '"forecast": ALLOW' in (package / "policy.py").read_text()
    assert (package / "welt_request.schema.json").is_file()  # the fix arrived
    answers_file = yaml.safe_load((project / ".copier-answers.yml").read_text())
    assert answers_file["_commit"] == "0.2.0"
    assert answers_file["python_version"] == runs_on
    assert_clean_merge(project)
    assert_generated_suite_passes(project)
    registry = run(
        [
            "uv",
            "run",
            "--no-sync",
            "python",
            "-c",
            f"from {PACKAGE}.tools.registry import project_registry as r; "
            "print(r().decision_for('forecast'), sorted(r().files_from))",
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

    update(project, "0.2.0")

    assert (project / ".python-version").read_text() == "3.13\n"
    answers = yaml.safe_load((project / ".copier-answers.yml").read_text())
    assert answers["python_version"] == "3.13"


def test_turning_image_generation_off_removes_its_files_and_wiring(releases, tmp_path):
    project = copy_project(releases, tmp_path / "project", "0.2.0")
    assert (project / "tests" / "test_image_generation.py").exists()

    update(project, "0.2.0", data={"include_image_generation": False})

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
    package = repo / "template" / "{{package_name}}"
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
    package = project / PACKAGE
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
