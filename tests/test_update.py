"""`copier update` keeps users' work: a temporary git copy of the template with two tags.

0.1.0 is this template with a known bug put back (forged toolResult blocks
are let through); 0.2.0 is the template as it is. A project copied from
0.1.0 and edited by its user is updated to 0.2.0.
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import TEMPLATE, run
from copier import run_copy, run_update
from copier.errors import UnsafeTemplateError

pytestmark = pytest.mark.slow

PACKAGE = "my_welt_agent"
FORGED_OLD = '_FORGED_BLOCKS = {"toolUse"}'
FORGED_FIXED = '_FORGED_BLOCKS = {"toolUse", "toolResult"}'
CONFLICT = re.compile(r"^(<<<<<<<|>>>>>>>) ", re.MULTILINE)

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


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def commit_all(cwd: Path, message: str, tag: str | None = None) -> None:
    git(cwd, "add", "-A")
    git(cwd, "commit", "-q", "-m", message)
    if tag:
        git(cwd, "tag", tag)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


def template_copy(tmp_path: Path) -> Path:
    """The template's working tree, in a fresh git repository."""
    repo = tmp_path / "template"
    shutil.copytree(
        TEMPLATE,
        repo,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache"
        ),
    )
    git(repo, "init", "-q")
    return repo


@pytest.fixture
def two_versions(tmp_path):
    """0.1.0 with the forged-toolResult bug, 0.2.0 with the fix."""
    repo = template_copy(tmp_path)
    wire = repo / "template" / "{{package_name}}" / "wire.py"
    edit(wire, FORGED_FIXED, FORGED_OLD)
    commit_all(repo, "0.1.0", tag="0.1.0")
    edit(wire, FORGED_OLD, FORGED_FIXED)
    commit_all(repo, "Refuse forged toolResult blocks", tag="0.2.0")
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


def text_files(project: Path):
    for path in project.rglob("*"):
        if path.is_file() and ".git" not in path.parts and ".venv" not in path.parts:
            yield path


def assert_clean_merge(project: Path) -> None:
    assert list(project.rglob("*.rej")) == []
    for path in text_files(project):
        assert not CONFLICT.search(path.read_text(errors="ignore")), path


def assert_generated_suite_passes(project: Path) -> None:
    for command in (
        ["uv", "sync"],
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


def test_update_keeps_user_edits_and_brings_the_fix(two_versions, tmp_path):
    project = copy_project(two_versions, tmp_path / "project", "0.1.0")
    package = project / PACKAGE
    assert FORGED_OLD in (package / "wire.py").read_text()
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
    edit(
        package / "tools" / "__init__.py",
        "    ask_human,\n",
        "    ask_human,\n    forecast,\n",
    )
    edit(
        package / "policy.py",
        '    "ask_human": ALLOW,\n',
        '    "ask_human": ALLOW,\n    "forecast": ALLOW,\n',
    )
    commit_all(project, "My tools")

    update(project, "0.2.0")

    assert FORGED_FIXED in (package / "wire.py").read_text()
    assert "never guess names" in (package / "tools" / "ask_human.py").read_text()
    assert (package / "tools" / "weather.py").read_text() == WEATHER_TOOL
    assert "forecast" in (package / "tools" / "__init__.py").read_text()
    assert '"forecast": ALLOW' in (package / "policy.py").read_text()
    assert (
        yaml.safe_load((project / ".copier-answers.yml").read_text())["_commit"]
        == "0.2.0"
    )
    assert_clean_merge(project)
    assert_generated_suite_passes(project)


def test_turning_image_generation_off_removes_its_files_and_wiring(
    two_versions, tmp_path
):
    project = copy_project(two_versions, tmp_path / "project", "0.2.0")
    assert (project / "tests" / "test_image_generation.py").exists()

    update(project, "0.2.0", data={"include_image_generation": False})

    assert not (project / "tests" / "test_image_generation.py").exists()
    for path in project.rglob("*.py"):
        assert "generate_image" not in path.read_text(), path
    assert_clean_merge(project)
    result = run(["uv", "run", "pytest", "-q", "-p", "no:cacheprovider"], project)
    assert result.returncode == 0, result.stdout[-3000:]


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
    result = run(["uv", "run", "pytest", "-q", "-p", "no:cacheprovider"], project)
    assert result.returncode == 0, result.stdout[-3000:]


def test_an_update_across_a_migration_asks_for_trust(renamed_module, tmp_path):
    project = copy_project(renamed_module, tmp_path / "project", "0.1.0")

    with pytest.raises(UnsafeTemplateError, match="migrations"):
        update(project, "0.2.0")
