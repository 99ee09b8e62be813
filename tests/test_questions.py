"""Bad answers are refused by a validator whose message names the question."""

import re
import subprocess
import sys

import pytest
import yaml
from conftest import TEMPLATE, render

BAD_ANSWERS = {
    "project name with spaces": ("project_name", "My Agent", "project_name must be"),
    "project name with a trailing hyphen": (
        "project_name",
        "agent-",
        "project_name must be",
    ),
    "agent name with a hyphen": ("agent_name", "my-agent", "agent_name must match"),
    "agent name too long": ("agent_name", "A" * 24, "agent_name must match"),
    "agent name starting with a digit": (
        "agent_name",
        "1agent",
        "agent_name must match",
    ),
    "package name not an identifier": (
        "package_name",
        "my-agent",
        "package_name must be",
    ),
    "package name is a keyword": ("package_name", "class", "is a Python keyword"),
    "package name shadows strands": ("package_name", "strands", "would shadow"),
    "package name shadows strands_tools": (
        "package_name",
        "strands_tools",
        "would shadow",
    ),
    "package name shadows welt_io_strands": (
        "package_name",
        "welt_io_strands",
        "would shadow",
    ),
    "package name shadows bedrock_agentcore": (
        "package_name",
        "bedrock_agentcore",
        "would shadow",
    ),
    "package name shadows main.py": ("package_name", "main", "one of the project's own modules"),
    "package name shadows the standard library": ("package_name", "json", "would shadow"),
    "package name shadows a dependency's module": ("package_name", "jmespath", "would shadow"),
    "project name over 40 characters": ("project_name", "a" * 41, "at most 40 characters"),
    "package name over 40 characters": ("package_name", "a" * 41, "at most 40 characters"),
    "interrupt prefix over 40 characters": ("interrupt_prefix", "a" * 41, "at most 40"),
    "package name of the project's playground": ("package_name", "playground", "own modules"),
    "package name of a test module": ("package_name", "test_gate", "own modules"),
    "package name of a tests' helper": ("package_name", "probes", "own modules"),
    "interrupt prefix with capitals": (
        "interrupt_prefix",
        "MyAgent",
        "interrupt_prefix must be",
    ),
    "interrupt prefix with underscores": (
        "interrupt_prefix",
        "my_agent",
        "interrupt_prefix must be",
    ),
    "empty description": ("description", "   ", "description must not be empty"),
    "multi-line description": ("description", "one\ntwo", "description must be one line"),
    "empty author": ("author", "", "author must not be empty"),
    "python too old": ("python_version", "3.9", "python_version"),
    "python deprecated on AgentCore": (
        "python_version",
        "3.11",
        "AgentCore Runtime deprecated PYTHON_3_11",
    ),
    "python deprecated on AgentCore, older still": (
        "python_version",
        "3.10",
        "copier update --data python_version=3.12",
    ),
    "model id with spaces": ("model_id", "claude sonnet", "model_id must be"),
    "unknown model provider": ("model_provider", "watson", "model_provider"),
    "unknown deploy build": ("deploy_build", "Lambda", "'deploy_build'"),
    "unknown memory": ("memory", "redis", "'memory': 'redis' is not in ['none', 'agentcore']"),
}


@pytest.mark.parametrize(
    "question, answer, message", BAD_ANSWERS.values(), ids=BAD_ANSWERS.keys()
)
def test_bad_answer_is_refused_naming_the_question(tmp_path, question, answer, message):
    with pytest.raises(ValueError) as refused:
        render(tmp_path / "project", **{question: answer})

    assert question in str(refused.value)
    assert message in str(refused.value)
    assert not (tmp_path / "project" / "app" / "main.py").exists()


@pytest.mark.parametrize(
    "question, answer",
    [
        ("agent_name", "A" * 23),
        ("package_name", "agent_v2"),
        ("interrupt_prefix", "ops-bot-2"),
        (
            "model_id",
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/x.y-z:0",
        ),
        ("python_version", "3.12"),
        ("deploy_build", "CodeZip"),
        ("memory", "agentcore"),
    ],
)
def test_good_answer_is_accepted(tmp_path, question, answer):
    root = render(tmp_path / "project", **{question: answer})

    assert (root / "app" / "main.py").is_file()


def test_a_provider_other_than_bedrock_needs_a_model_id(tmp_path):
    with pytest.raises(ValueError, match="model_id is required for the anthropic provider"):
        render(tmp_path / "project", model_provider="anthropic", model_id="")


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_each_provider_gets_a_working_default_model_and_only_its_extra(tmp_path, provider):
    root = render(tmp_path / "project", model_provider=provider)

    pyproject = (root / "pyproject.toml").read_text()
    settings = (root / "app" / "my_welt_agent" / "settings.py").read_text()

    assert f'"strands-agents[{provider}]>=' in pyproject
    assert pyproject.count("strands-agents[") == 1
    assert re.search(r'DEFAULT_MODEL_ID = "[^"]+"', settings)


def test_every_top_level_module_of_a_project_is_refused_as_its_package_name(tmp_path):
    """pytest imports tests/ and tests/yours/ ahead of app/, and the root holds deploy/ and the rest.

    A package named like any of them would be shadowed, or shadow it.
    """
    root = render(
        tmp_path / "project",
        include_mcp=True,
        include_github_sample=True,
        model_provider="anthropic",
        memory="agentcore",
    )
    modules = {
        path.stem if path.suffix == ".py" else path.name
        for folder in (root, root / "app", root / "tests", root / "tests" / "yours")
        for path in folder.iterdir()
        if path.suffix == ".py" or (path.is_dir() and not path.name.startswith("."))
    } - {"my_welt_agent"}
    refused = set(
        yaml.safe_load(
            yaml.safe_load((TEMPLATE / "copier.yml").read_text())["project_module_names"]["default"]
        )
    )

    assert sorted(modules - refused) == []


def test_a_refused_answer_on_the_command_line_ends_in_the_line_the_readme_shows(tmp_path):
    """copier's CLI prints its traceback first; the README says to read the last line, and shows it.

    copier's command line (`_handle_exceptions`) prints only copier's own errors in one
    line, and a refused `-d` answer is a ValueError, so nothing in copier.yml can shorten
    it: the README can only say which line to read. This runs the README's copy with a
    bad `-d`, by copier's own command line, and holds the README's block to its last line.
    """
    destination = tmp_path / "my-agent"
    refused = subprocess.run(
        [sys.executable, "-m", "copier", "copy", "--defaults", "-d", "package_name=Bad",
         str(TEMPLATE), str(destination)],
        cwd=TEMPLATE, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    readme = (TEMPLATE / "README.md").read_text()
    (shown,) = re.findall(r"```text\n(ValueError: Validation error for question .*)\n```", readme)

    assert refused.returncode != 0
    assert refused.stderr.strip().splitlines()[-1] == shown
    assert shown.startswith("ValueError: Validation error for question 'package_name': ")
    assert "package_name=Bad" in readme
    assert not destination.exists()
