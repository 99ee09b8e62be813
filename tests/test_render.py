"""Rendering: every combination of the yes/no answers gives a complete project."""

import ast
import itertools
import py_compile
import re

import pytest
import yaml
from conftest import COMBINATIONS, EVERY_PAIR, TEMPLATE, TOGGLES, combination_id, render

import tomllib

# The migrations of projects from before 0.4.0 and 0.7.0, which only an update
# renders (copier.yml's _exclude), and check-update.sh deletes once they ran.
MIGRATIONS = {"move_yours.py", "keep_old_imports.py"}
MOVE_YOURS = TEMPLATE / "template" / "scripts" / "move_yours.py"

# GitHub Actions expressions, ${{ ... }}, are not Jinja.
LEFTOVER_JINJA = re.compile(r"(?<!\$)\{\{|\{%")


def project_files(root):
    return sorted(
        path for path in root.rglob("*") if path.is_file() and ".git" not in path.parts
    )


def test_the_quick_loop_s_combinations_hold_every_pair_of_two_toggles_values():
    held = {
        (first, second, values[first], values[second])
        for values in EVERY_PAIR
        for first, second in itertools.combinations(range(len(TOGGLES)), 2)
    }

    assert len(held) == 4 * len(list(itertools.combinations(TOGGLES, 2)))


@pytest.mark.parametrize("answers", COMBINATIONS, ids=combination_id)
def test_every_combination_renders_complete_python_with_no_jinja_left(project, answers):
    root = project(**answers)

    for path in project_files(root):
        relative = str(path.relative_to(root))
        assert not LEFTOVER_JINJA.search(relative), relative
        if path.suffix == ".png":  # the docs' screenshots: copied, never rendered
            continue
        assert not LEFTOVER_JINJA.search(path.read_text()), relative
        if path.suffix == ".py":
            py_compile.compile(str(path), doraise=True)


def test_defaults_give_an_agentcore_layout(project):
    root = project()

    for expected in (
        "app/main.py",
        "app/pyproject.toml",
        "pyproject.toml",
        "README.md",
        ".gitignore",
        ".copier-answers.yml",
        "app/my_welt_agent/api.py",
        "app/my_welt_agent/factory.py",
        "app/my_welt_agent/wire/payload.py",
        "app/my_welt_agent/model/providers.py",
        "app/my_welt_agent/gate/approval_gate.py",
        "app/my_welt_agent/wire/welt_request.schema.json",
        "app/my_welt_agent/gate/registry.py",
        "app/my_welt_agent/tools/mcp.py",
        "app/my_welt_agent/yours/tools/ask_human.py",
        ".python-version",
        "tests/conftest.py",
    ):
        assert (root / expected).is_file(), expected
    main = (root / "app" / "main.py").read_text()
    assert "\napp = app_from_environment()\n" in main  # the module-level app AgentCore serves
    assert 'if __name__ == "__main__":\n    serve(app)' in main


def test_answers_file_records_the_answers_for_update(project):
    root = project(project_name="billing-bot", include_image_generation=False)

    answers = yaml.safe_load((root / ".copier-answers.yml").read_text())

    assert answers["project_name"] == "billing-bot"
    assert answers["package_name"] == "billing_bot"
    assert answers["agent_name"] == "BillingBot"
    assert answers["include_image_generation"] is False
    assert "_commit" in answers and "_src_path" in answers


def template_version() -> str:
    return yaml.safe_load((TEMPLATE / "copier.yml").read_text())["template_version"]["default"]


def test_the_changelog_s_newest_release_is_the_template_version():
    newest = re.search(r"^## (\S+)$", (TEMPLATE / "CHANGELOG.md").read_text(), re.M)

    assert newest and newest.group(1) == template_version()


def test_a_copy_shows_the_release_it_was_made_from(project):
    answers_file = (project() / ".copier-answers.yml").read_text()

    assert f"# Made from release {template_version()} of the template" in answers_file


def test_a_fresh_copy_has_no_migration_of_an_older_release(project):
    """The scripts that move a project from before 0.4.0 or 0.7.0 come with an update alone."""
    scripts = project() / "scripts"

    assert {path.name for path in scripts.iterdir()} & MIGRATIONS == set()
    assert {path.name for path in (TEMPLATE / "template" / "scripts").iterdir()} >= MIGRATIONS


def test_a_fresh_readme_is_one_the_generated_docs_test_checks(project):
    readme = (project() / "README.md").read_text()

    assert readme.startswith("<!-- tests/test_docs.py checks this file -->\n")


def test_minimal_agent_keeps_the_wire_the_gate_and_one_tool(project):
    root = project(include_sample_tools=False, include_image_generation=False)
    package = root / "app" / "my_welt_agent"

    assert sorted(p.name for p in (package / "yours" / "tools").glob("*.py")) == [
        "__init__.py",
        "ask_human.py",
    ]
    assert sorted(p.name for p in (root / "tests" / "yours").glob("*.py")) == [
        "test_ask_human.py"
    ]
    assert (package / "wire" / "payload.py").is_file()
    assert (package / "gate" / "approval_gate.py").is_file()
    for path in [*package.rglob("*.py"), *(root / "tests" / "yours").glob("*.py")]:
        text = path.read_text()
        assert "file_read" not in text and "generate_image" not in text, path


def test_what_you_own_is_one_folder_beside_the_templates_machinery(project):
    root = project()
    package = root / "app" / "my_welt_agent"

    yours = sorted(str(p.relative_to(package / "yours")) for p in (package / "yours").rglob("*.py"))
    assert yours == [
        "__init__.py",
        "mcp_servers.py",
        "model_options.py",
        "model_prices.py",
        "prompt.py",
        "tools/__init__.py",
        "tools/approval.py",
        "tools/ask_human.py",
        "tools/documents.py",
        "tools/report.py",
    ]
    # tools/ holds only the template's tool adapters; TOOLS is in yours/tools/.
    machinery = sorted(p.name for p in (package / "tools").iterdir())
    assert machinery == ["call_memo.py", "lazy.py", "left_out.py", "mcp.py", "prebuilt.py"]
    # An update from before 0.4.0 moves every other file of tools/ into yours/,
    # so the script that moves them (which only an update renders) must know
    # each module the template owns there, and registry.py, which stood there
    # until 0.7.0.
    script = MOVE_YOURS.read_text()
    owned = re.search(r"^TEMPLATE_TOOLS = (\{.*\})$", script, re.M).group(1)
    assert set(ast.literal_eval(owned)) == {*machinery, "registry.py"}
    assert sorted(p.name for p in (root / "tests" / "yours").iterdir()) == [
        "test_approval.py",
        "test_ask_human.py",
        "test_files.py",
        "test_report.py",
    ]
    # Your files import the template through its one public module.
    for path in (package / "yours").rglob("*.py"):
        imported = set(re.findall(r"^from my_welt_agent\.(\w+)", path.read_text(), re.MULTILINE))
        assert imported <= {"api", "yours"}, path
        assert not re.search(r"^from \.", path.read_text(), re.MULTILINE), path


def test_memory_is_a_setting_of_the_app_and_a_resource_of_the_deployment(project, tmp_path):
    off = project()
    on = render(tmp_path / "with-memory", memory="agentcore")

    differ = [
        str(path.relative_to(off))
        for path in sorted(off.rglob("*.py"))
        if path.read_text() != (on / path.relative_to(off)).read_text()
    ]
    assert differ == ["app/my_welt_agent/settings.py", "deploy/project.py"]
    for path in differ:
        assert "USE_MEMORY = False\n" in (off / path).read_text()
        assert "USE_MEMORY = True\n" in (on / path).read_text()


def test_include_mcp_is_a_setting_not_a_different_program(project, tmp_path):
    off = project(include_mcp=False)
    on = render(tmp_path / "with-mcp", include_mcp=True)

    differ = [
        str(path.relative_to(off))
        for path in sorted(off.rglob("*.py"))
        if path.read_text() != (on / path.relative_to(off)).read_text()
    ]
    assert differ == ["app/my_welt_agent/settings.py"]
    assert "USE_MCP = False\n" in (off / differ[0]).read_text()
    assert "USE_MCP = True\n" in (on / differ[0]).read_text()
    assert sorted(str(p.relative_to(on)) for p in on.rglob("*.py")) == sorted(
        str(p.relative_to(off)) for p in off.rglob("*.py")
    )


def test_image_generation_off_removes_its_wiring(project):
    root = project(include_image_generation=False)

    for path in root.rglob("*.py"):
        if path.name == "test_docs.py":  # lists what the docs name with other answers
            continue
        assert "generate_image" not in path.read_text(), path


@pytest.mark.parametrize("gated", [True, False])
def test_gate_unlisted_tools_becomes_a_setting(project, gated):
    root = project(gate_unlisted_tools=gated)

    settings = (root / "app" / "my_welt_agent" / "settings.py").read_text()

    assert f"GATE_UNLISTED_TOOLS = {gated}\n" in settings


@pytest.mark.parametrize("version", ["3.12", "3.13"])
def test_the_python_answer_pins_every_place_python_is_chosen(project, version):
    root = project(python_version=version)

    pyproject = tomllib.loads((root / "pyproject.toml").read_text())

    assert (root / ".python-version").read_text() == f"{version}\n"
    assert pyproject["project"]["requires-python"] == ">=3.12"
    assert pyproject["tool"]["ruff"]["target-version"] == f"py{version.replace('.', '')}"
    assert f"PYTHON_{version.replace('.', '_')}" in (root / "agentcore" / "agentcore.json").read_text()
    assert f"ARG PYTHON_VERSION={version}\n" in (root / "Dockerfile").read_text()


def test_answers_become_constants_in_one_settings_module(project):
    root = project(
        agent_name="Helper",
        interrupt_prefix="helper",
        model_id="us.anthropic.claude-sonnet-4-20250514-v1:0",
    )

    settings = (root / "app" / "my_welt_agent" / "settings.py").read_text()

    assert 'AGENT_NAME = "Helper"' in settings
    assert 'INTERRUPT_PREFIX = "helper"' in settings
    assert '"us.anthropic.claude-sonnet-4-20250514-v1:0"' in settings


def test_the_longest_project_name_still_gives_a_valid_agent_name(project):
    root = project(project_name="a-very-long-project-name-for-test-limits")  # 40, the most

    answers = yaml.safe_load((root / ".copier-answers.yml").read_text())

    assert answers["agent_name"] == "AVeryLongProjectNameFor"
    assert len(answers["agent_name"]) == 23


def test_description_with_quotes_keeps_pyproject_valid(project):
    root = project(description='Says "hi" and \\o/', author='Ann "A" Example')

    pyproject = tomllib.loads((root / "pyproject.toml").read_text())

    assert pyproject["project"]["description"] == 'Says "hi" and \\o/'
    assert pyproject["project"]["authors"] == [{"name": 'Ann "A" Example'}]


def test_description_with_quotes_and_backslashes_keeps_python_valid(project):
    root = project(description='Ends in a quote """ and a backslash \\')

    for path in root.rglob("*.py"):
        py_compile.compile(str(path), doraise=True)


def test_the_readme_gives_every_module_of_the_package_a_line_of_its_own(project):
    root = project()
    package = root / "app" / "my_welt_agent"
    readme = (root / "README.md").read_text()

    missing = [
        str(path.relative_to(root))
        for path in sorted(package.rglob("*.py"))
        if path.name != "__init__.py"
        and "yours" not in path.relative_to(package).parts
        and f"`{path.relative_to(root)}`" not in readme
    ]
    assert missing == []


def test_the_update_leaves_in_tools_every_module_the_template_renders_there(project):
    """scripts/move_yours.py moves what a project from before 0.4.0 kept in tools/ into yours/.

    It takes any module of tools/ it does not know for one of yours, so each
    module the template renders there must be on its list. The script is
    rendered by an update alone, and no answer changes it: it is read from
    the template.
    """
    root = project(include_mcp=True)
    source = MOVE_YOURS.read_text()
    (listed,) = re.findall(r"^TEMPLATE_TOOLS = (\{.*\})$", source, re.M)

    rendered = {path.name for path in (root / "app" / "my_welt_agent" / "tools").glob("*.py")}

    assert rendered <= ast.literal_eval(listed)


def test_every_python_line_naming_the_package_fits_with_the_longest_package_name():
    """ruff wraps a line past 100 columns only where it can; an import or a comment it cannot.

    A name of 40 characters (the most `package_name` takes) would push a long
    `from <package>.x import a, b, c`, or a comment naming a path, past the
    line, so such imports are written one name a line. Lines that Jinja
    decides are left to the renders.
    """
    longest = "p" * 40
    too_long = [
        f"{path.relative_to(TEMPLATE)}:{number}"
        for path in (TEMPLATE / "template").rglob("*")
        if path.is_file() and path.name.endswith((".py", ".py.jinja"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "{{ package_name }}" in line
        and "{%" not in line
        and len(line.replace("{{ package_name }}", longest)) > 100
    ]

    assert too_long == []
