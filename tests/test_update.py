"""`copier update` keeps the user's work and takes the template's changes, answer by answer.

Each test copies a project from a release of this repository (conftest's
`released`: every release tagged, this working tree the newest) or from a
copy of the template made for the test, changes it as a user would, and
updates it with copier's API, as `make update` does. The update of every
release's edited project to this one, run by `make update` and ended by
`make install lint test`, is tests/test_update_every_release.py.
"""

from pathlib import Path

import pytest
import yaml
from conftest import CURRENT, TEMPLATE, commit_all, git, run
from copier import run_copy, run_update
from copier.errors import UnsafeTemplateError

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("git_identity")]

PACKAGE = "my_welt_agent"

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


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


def template_copy(tmp_path: Path) -> Path:
    """The template's working tree, in a fresh git repository of the test's own."""
    repo = tmp_path / "template"
    listed = git(TEMPLATE, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, listed.split("\0")):
        source = TEMPLATE / name
        if source.is_file():
            target = repo / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    git(repo, "init", "-q")
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
        conflict="inline",
        **options,
    )


def assert_clean_merge(project: Path) -> None:
    """The check `make update` runs after copier: no conflict left, no step left."""
    checked = run(["sh", "scripts/check-update.sh"], project)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Update merged cleanly" in checked.stdout


def served(project: Path, expression: str, shared_environments) -> str:
    """An expression evaluated where `import main` has set up the agent, as the server does."""
    code = f"import sys; sys.path[:0] = ['app']; import main; print({expression})"
    result = run(["uv", "run", "python", "-c", code], project, **shared_environments("3.13"))
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_a_deprecated_python_answer_is_dropped_for_the_newest_by_default(released, tmp_path):
    project = copy_project(released, tmp_path / "project", "0.1.0", python_version="3.11")

    update(project, CURRENT)

    assert (project / ".python-version").read_text() == "3.13\n"
    answers = yaml.safe_load((project / ".copier-answers.yml").read_text())
    assert answers["python_version"] == "3.13"


def test_turning_image_generation_off_removes_its_files_and_wiring(
    released, tmp_path, shared_environments
):
    project = copy_project(released, tmp_path / "project", CURRENT)
    assert (project / "tests" / "test_image_generation.py").exists()

    update(project, CURRENT, data={"include_image_generation": False})

    assert not (project / "tests" / "test_image_generation.py").exists()
    for path in project.rglob("*.py"):
        if path.name == "test_docs.py":  # lists what the docs name with other answers
            continue
        assert "generate_image" not in path.read_text(), path
    assert_clean_merge(project)
    tools = served(project, "[row.name for row in main.app.state.registry.rows]", shared_environments)
    assert "ask_human" in tools and "generate_image" not in tools


def test_an_update_leaves_yours_alone_and_brings_back_only_the_skeleton(released, tmp_path):
    project = copy_project(released, tmp_path / "project", CURRENT)
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


def test_a_migration_carries_a_renamed_user_module_across(
    renamed_module, tmp_path, shared_environments
):
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
    prompt = f"__import__('{PACKAGE}.yours.prompt', fromlist=['prompt']).SYSTEM_PROMPT"
    assert "Penny, the billing helper" in served(project, prompt, shared_environments)


def test_an_update_across_a_migration_asks_for_trust(renamed_module, tmp_path):
    project = copy_project(renamed_module, tmp_path / "project", "0.1.0")

    with pytest.raises(UnsafeTemplateError, match="migrations"):
        update(project, "0.2.0")


@pytest.fixture
def readme_rewritten(tmp_path):
    """Two releases of this template whose READMEs differ: a line reworded, a section added at the end."""
    repo = template_copy(tmp_path)
    commit_all(repo, "0.15.0", tag="0.15.0")
    readme = repo / "template" / "README.md.jinja"
    edit(readme, "`make` alone lists the project's tasks", "`make` alone lists every task")
    edit(
        readme,
        "\n<!-- Sections of your own",
        "\n## Talk to it\n\nSay hello in a thread.\n\n<!-- Sections of your own",
    )
    commit_all(repo, "The README rewords a line and adds a section", tag="0.16.0")
    return repo


def test_an_update_merges_the_readme_keeping_the_users_edits(readme_rewritten, tmp_path):
    """README.md is the template's: copier merges each release into it, three-way, as into every file."""
    project = copy_project(readme_rewritten, tmp_path / "project", "0.15.0")
    readme = project / "README.md"
    edit(readme, "# my-welt-agent\n", "# my-welt-agent\n\nPenny answers billing questions.\n")
    readme.write_text(readme.read_text() + "\n## Our runbook\n\nPage the billing team.\n")
    commit_all(project, "My README")

    update(project, "0.16.0")

    merged = readme.read_text()
    assert "Penny answers billing questions." in merged
    assert merged.endswith("## Our runbook\n\nPage the billing team.\n")
    assert "`make` alone lists every task" in merged
    assert "## Talk to it\n\nSay hello in a thread." in merged
    assert_clean_merge(project)
