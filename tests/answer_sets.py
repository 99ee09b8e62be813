"""Answer sets a user could give copier, drawn from a seed: names at every boundary, any toggles.

The names are where renderings have broken for users: ruff sorts imports
by module name, so a package that sorts just before or after a module the
generated code imports, or one letter long, or the longest allowed, or one
that starts like a module (`test`, `app`, `strands`, `welt`) puts the
template's import blocks to the test. `boundary_names` builds those names
from the modules a rendering really imports; `draw` crosses one of them
(or a freshly made one) with every other question.
"""

import keyword
import random
import re
import string
from pathlib import Path

import yaml

SLUG = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
LONGEST = 40  # copier.yml's limit on project_name, package_name and interrupt_prefix

# Names of the shapes users give, whatever the modules are.
SHAPES = [
    "a", "m", "z", "a1", "x9", "agent2", "a-b-c", "a1-b2",
    "test-bot", "testbot", "tests-bot", "app-bot", "apps", "strands-bot", "strandsbot",
    "welt", "welt-bot", "main-bot", "deploy-bot", "evals-bot", "playground-bot", "probes-bot",
    "my-welt-agent", "weather-bot", "anthro-agent",
    "z" * LONGEST, "a" * LONGEST, "customer-support-escalation-agent-eu-v2",
]  # fmt: skip

# Texts that have to survive TOML, Python and Markdown as they are.
DESCRIPTIONS = [
    "A Strands agent that Welt drives from Slack.",
    'Says "hi" and \\o/ in the thread',
    "Réponses en français — avec des accents",
    "Tracks costs: $5 a day, 100% of the time {maybe}",
]
AUTHORS = ["Agent Builders", "Ann \"A\" O'Example", "Équipe Données"]


def reserved(copier_yml: Path) -> set[str]:
    """The module names package_name's validator refuses."""
    questions = yaml.safe_load(copier_yml.read_text())
    names = set()
    for key in ("reserved_module_names", "project_module_names"):
        names |= set(yaml.safe_load(questions[key]["default"]))
    return names


def imported_modules(project: Path) -> set[str]:
    """The top-level modules the rendering's Python files import."""
    found = set()
    pattern = re.compile(r"^\s*(?:from|import)\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)
    for path in project.rglob("*.py"):
        if ".venv" not in path.parts:
            found |= set(pattern.findall(path.read_text()))
    return found


def neighbours(module: str) -> list[str]:
    """Project names whose packages sort just before and just after this module."""
    slug = module.strip("_").replace("_", "-")
    if not slug or not slug[0].isalpha():
        return []
    last = slug[-1]
    before = slug[:-1] + (chr(ord(last) - 1) if last not in "a0-" else "") if len(slug) > 1 else ""
    return [name for name in (before, slug[:-1], f"{slug}-a", f"{slug}0") if name]


def boundary_names(project: Path, refused: set[str]) -> list[str]:
    """Every name of SHAPES and around each imported module that copier would accept."""
    names = {*SHAPES}
    for module in imported_modules(project):
        names.update(neighbours(module))
    return sorted(name for name in names if acceptable(name, refused))


def acceptable(project_name: str, refused: set[str]) -> bool:
    package = project_name.replace("-", "_")
    return (
        bool(SLUG.match(project_name))
        and len(project_name) <= LONGEST
        and package not in refused
        and not keyword.iskeyword(package)
        and not keyword.issoftkeyword(package)
    )


def fresh_name(rng: random.Random, refused: set[str]) -> str:
    """A project name made up on the spot: words of letters and digits, joined by hyphens."""
    while True:
        words = [
            rng.choice(string.ascii_lowercase)
            + "".join(rng.choices(string.ascii_lowercase + string.digits, k=rng.randint(0, 9)))
            for _ in range(rng.randint(1, 4))
        ]
        name = "-".join(words)[:LONGEST].rstrip("-")
        if acceptable(name, refused):
            return name


def draw(rng: random.Random, names: list[str], refused: set[str]) -> dict:
    """One answer set: a name at a boundary (or a fresh one), crossed with every other question."""
    project_name = rng.choice(names) if rng.random() < 0.8 else fresh_name(rng, refused)
    answers: dict = {
        "project_name": project_name,
        "description": rng.choice(DESCRIPTIONS),
        "author": rng.choice(AUTHORS),
        "python_version": rng.choice(["3.12", "3.13"]),
        "deploy_build": rng.choice(["CodeZip", "Container"]),
        "model_provider": rng.choice(["bedrock", "anthropic", "openai"]),
        "agent_manages_history": rng.random() < 0.5,
        "run_store": rng.choice(["session-storage", "s3"]),
        "memory": rng.choice(["none", "agentcore"]),
        "include_image_generation": rng.random() < 0.5,
        "include_sample_tools": rng.random() < 0.5,
        "include_github_sample": rng.random() < 0.5,
        "include_mcp": rng.random() < 0.5,
        "gate_unlisted_tools": rng.random() < 0.5,
    }
    if rng.random() < 0.3:  # a package named apart from the project
        package = fresh_name(rng, refused).replace("-", "_")
        answers["package_name"] = rng.choice([package, f"_{package}"[:LONGEST]])
    if rng.random() < 0.3:
        answers["interrupt_prefix"] = fresh_name(rng, refused)
    if rng.random() < 0.3:
        answers["agent_name"] = rng.choice(string.ascii_letters) + "".join(
            rng.choices(string.ascii_letters + string.digits, k=rng.randint(0, 22))
        )
    return answers
