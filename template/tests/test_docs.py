"""Docs a newcomer can trust: what README.md, AGENTS.md, .env.example and docs/*.md say is real.

README.md is yours after the first copy (`copier update` leaves it alone), so it is
checked while it carries the line README_CHECKED, which a fresh copy starts with; a
README from before 0.4.0 lacks it, and is checked once you fix it and add the line.

- Every `make <target>` they name is a target of the Makefile.
- Every path they name in backticks exists. A path is a word of a code span (or of a
  command in a ```sh block; in .env.example, any word of a comment) that has no quotes,
  brackets, `:`, `=` or `$`, is not absolute, `~/`, `../` or a URL, and contains `/`, ends
  in one of PATH_SUFFIXES, is a dotfile (`.env.example`) or is one of NAMED_FILES
  (`Dockerfile`). `<package>` and `<pkg>` stand
  for this project's package; a path with any other `<placeholder>` is skipped. A path with
  `/` is relative to the project root or, as the docs name modules, to app/<package>/
  (`yours/prompt.py`, `tools/registry.py`) or app/<package>/yours/; a bare file name
  (`wire.py`) must be a file somewhere in the project. What appears only later, or only
  with other answers, is in NOT_HERE with the reason.
- Every code name they give is the project's, or says whose it is. The project's code is
  the code that ships, every Python file but those of tests/, read, never imported
  (`code_of`). A name only tests/ has (a fixture, a helper of conftest.py) is the tests',
  and passes only where the docs say so: the words of its sentence before it name the
  tests ("the tests' `start` fixture", "`tests/conftest.py` builds `is_welt_payload`",
  "The browser tests need ... `PLAYGROUND_BROWSER`"), it is a test's own name
  (`test_...`), or a heading it is under is about the tests ("## Tested", "###
  `test_restarts.py`", a page titled "# Offline tests"); once said, it passes for the
  rest of the document. A ```python block that defines a test (`def test_...`) or stands
  under such a heading may use the tests' names too. Each name is checked by its kind:
  - `<package>.x.y` (and `from <package>.x import y`) is a module of the package that
    binds y; code the docs show imports the package only through `<package>.api`, the
    one module yours/ may import;
  - `module.name` (`main.app`, `identity.instance_id()`) is bound in that module of the
    project, or in any module of that package (`wire.MAX_FILE_BYTES`); a head the code
    also uses as a variable (`agent.state`) only needs the rest to be the code's;
    `Class.member` is a member of that class; `os.urandom` of the standard library is one
    the project uses;
  - `name(...)` is a function, class or method of the project, its keywords among its
    parameters; a bare `snake_case`, `CamelCase` or `ALL_CAPS` name (a setting such as
    `RUN_STORE`) is one of the code's identifiers, or a word of its strings or of
    .env.example, the Makefile, the deployment's files and .copier-answers.yml;
  - in a ```python block: every call and name as above, a function or class it defines
    is the project's unless it is an example of yours (a `@tool`, a `test_`), a call of a
    project function passes each parameter that has no default, nothing calls
    `interrupt()` (tests/test_layout.py holds the code to that too), and on a page that
    opens with `File:` or `Files:` every name, call and attribute it reads is one of
    those files' (or a member of a class of the project they use, such as `CallMemo`'s);
  - in a ``` block without a language (a diagram), every call;
  - a name of another library (Strands, strands-tools, welt-io-strands,
    bedrock-agentcore, boto3, AgentCore, the CDK, ...) passes when the words just
    before it in the sentence name that library, once per document: "Strands'
    `ConcurrencyException`". Names of yours in examples (`my_tool`, `MyGate`) and the
    examples a page's own ```python blocks define pass there. What is neither is in
    NOT_CODE with the reason; a name only other answers bring is in ELSEWHERE.
- Every message they quote ("Nothing to resume …") is one the code says: each part
  between placeholders (`…`, `<id>`, a number, a quoted value, an ALL_CAPS name) is in
  one of the strings of the code or of its tests (which assert what it says), give or
  take an example value at either end. A quote a sentence attributes to another library
  (Strands' "Tool was interrupted.") passes.
- Every block of output they show, a ``` or ```text block (a reply's `data: {...}`
  events, a command's errors), is what the code prints in that situation. OUTPUTS names
  each, by its document and how its first line starts, with the situation of SITUATIONS
  that prints it: the app `make serve` serves, built in-process from the environment the
  page describes and nothing else (no AWS credentials anywhere botocore looks), answering
  the page's last `curl` request before the block, or the payloads the page describes.
  The block must be the lines printed, one for one, blank lines aside, a `…` standing for
  any text (for a block of examples, each of its lines one of them). Any other such block
  (a diagram, a query, what needs AWS, what another test produces) is in NOT_CHECKED
  with the reason.
- Every command in a ```sh block (backslash-continued lines are one command) is run by
  this test, offline, in a temporary copy of the project, with a timeout (RUN), or
  matches a pattern of NOT_RUN, which says why not. A command that is in neither fails
  this test: add it to RUN if it is cheap (a second or two), or to NOT_RUN with the
  reason. The docs themselves carry no such notes.
- Every relative link of a Markdown document, `[text](path)` or `[text](path#anchor)`
  (a reference definition `[label]: path` too, outside code), resolves: the path, relative
  to the document, is a file or folder of the project, and the anchor is a heading of the
  file it names (of the document itself for `(#anchor)`), by GitHub's slugs: lowercase,
  punctuation dropped but `-` and `_`, spaces as `-`, a repeated heading's `-1`, `-2`.
  A URL (`https:`, `mailto:`) is not checked.
"""

import ast
import builtins
import contextlib
import copy
import fnmatch
import functools
import importlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent
# (None where this file is read unrendered, by the template's own tests/test_docs.py)
PACKAGE = next((p.parent.name for p in (ROOT / "app").glob("*/settings.py")), None)
README_CHECKED = "<!-- tests/test_docs.py checks this file -->"
PATH_SUFFIXES = (".py", ".md", ".json", ".toml", ".sh", ".yml", ".yaml", ".txt", ".lock")
NAMED_FILES = {"Dockerfile", "Makefile"}  # files a word names whole, without a suffix
SUFFIXES_ALONE = {".py", ".pyc", ".json", ".md", ".rej", ".toml", ".sh", ".yml", ".jinja", ".zip"}
SKIPPED_DIRS = {
    ".venv", ".git", "__pycache__", ".ruff_cache", ".pytest_cache", "node_modules", "cdk.out",
}  # fmt: skip

# Commands this test runs, exactly as the docs write them (without their comment), each
# with its timeout in seconds. Keep it to cheap ones: the whole suite is meant to be quick.
RUN = {
    "make": 10,
}

# Commands the docs show that no test here runs, by shell-style pattern (`*` is any
# text), and why not.
NOT_RUN = {
    ("cd *",): "it moves into the project, where these tests run",
    ("git init && *",): "it makes the project a git repository, once, after a copy",
    ("make install",): "the tests run in the environment it builds",
    ("make test", "make test-all"): "they are the tests",
    ("make lint",): "CI's lint job runs it, and mypy takes longer than the tests may",
    ("make evals", "make evals-live"): (
        "they need the project's environment (the template's tests run make evals)"
    ),
    (
        "make serve",
        "MODEL_PROVIDER=rehearsal RUN_STORE=session-storage uv run python app/main.py",
    ): "it starts a server",
    ("make playground", "make playground *"): (
        "it serves until stopped; tests/test_playground_browser.py starts it and drives its page"
    ),
    ("curl *",): "it needs the server that `make serve` starts",
    ("make synth *",): (
        "the template's own tests run it (the CDK's Node.js is too slow for these); CI runs it"
    ),
    (
        "make bootstrap *",
        "make deploy *",
        "make api-key *",
        "make oauth-secret *",
        "make slack-secret *",
        "make rollback *",
        "make outputs *",
        "make logs *",
        "make ci-role *",
        "aws *",
    ): "it needs AWS credentials for the account in deploy/environments.toml",
    ("npx @aws/agentcore@* dev*",): (
        "it needs Node.js and the AgentCore CLI from npm, which the project does not install"
    ),
    ("make usage *",): (
        "it needs AWS credentials; tests/test_usage_report.py runs it against a Logs Insights "
        "server of its own"
    ),
    ("uv run python scripts/answer.py *",): (
        "it needs a running agent with an open question (tests/test_answer_script.py "
        "drives the script)"
    ),
}


@dataclass(frozen=True)
class Output:
    """How this test produces a block of output: the situation of SITUATIONS that prints
    it, and whether the block is all that it prints (whole) or some of its lines."""

    situation: str
    whole: bool = True


# The blocks of output the docs show (a ``` or ```text block), by document and how the
# block's first line starts, each with how this test produces it.
OUTPUTS = {
    ("docs/patterns/end-to-end.md", 'data: {"error": "Nothing to resume: these'): Output(
        "the_same_answers_twice"
    ),
    ("docs/patterns/end-to-end.md", 'data: {"error": "Refused the request: '): Output(
        "no_messages"
    ),
    ("docs/patterns/wire.md", 'data: {"error": "Refused the request: '): Output(
        "the_tests_bad_payloads", whole=False
    ),
    ("docs/patterns/wire.md", 'data: {"error": "Cannot resume: '): Output("a_null_answer"),
}

# The other ``` and ```text blocks of the docs, by document and how the block's first
# line starts, and why no test here produces them.
NOT_CHECKED = {
    ("docs/deploying.md", "deploy: environments.toml [staging] account must"): (
        "tests/test_deploy_settings.py makes each of its lines from the mistake it shows"
    ),
    ("docs/deploying.md", "# Welt's settings"): "Welt's settings, which you write",
    ("docs/deploying.md", "app/main.py "): "the files a deploy packs, not a command's output",
    ("docs/deploying.md", "build stage "): "the Dockerfile's stages, summed up",
    ("docs/patterns/wire.md", "FreshRandomness "): (
        "a diagram of the code a request goes through; its calls are checked as names"
    ),
    ("docs/patterns/wire.md", '{"error": "Refused the request: <JSON path>'): (
        "the form of every refusal, with placeholders; the examples below it are produced"
    ),
    ("docs/approvals.md", "fields @timestamp"): "a Logs Insights query you run, not output",
    ("docs/patterns/memory.md", "fields @timestamp"): "a Logs Insights query you run, not output",
    ("docs/deploying.md", "staging: endpoint live serves"): (
        "`make outputs` reads it from the deployed stack: it needs AWS"
    ),
    ("docs/deploying.md", "deploy: deploy/environments.toml [staging] account is the"): (
        "its second line needs AWS credentials for an account other than the environment's"
    ),
    ("docs/deploying.md", "npx --yes aws-cdk@"): (
        "the CDK command `make deploy` runs once its checks pass: it needs AWS"
    ),
    ("docs/deploying.md", "prod: the live endpoint moves"): (
        "`make rollback` compares with the deployed stack: it needs AWS"
    ),
    ("docs/deploying.md", "deploy: the runtime's environment variables take"): (
        "the synth says it, which needs the CDK; the template's tests synthesize every rendering"
    ),
    ("docs/patterns/files.md", "_big.pdf is too large"): (
        "it needs a tool that returns a file over 7 MB: tests/test_stream_hygiene.py has one"
    ),
    ("docs/patterns/end-to-end.md", 'data: {"data": "**Rehearsal mode:'): (
        "its question names the process that asked, which differs in every run"
    ),
    ("docs/patterns/end-to-end.md", 'data: {"tool_result": {"toolUseId": "rehearsal-q'): (
        "its draft's id is drawn at random in every run"
    ),
    ("docs/patterns/end-to-end.md", 'data: {"tool_result": {"toolUseId": "rehearsal-r'): (
        "its files' names are drawn at random, and its last line needs a restart between "
        "two processes (tests/test_serving.py and tests/test_restarts.py start them)"
    ),
}

# Paths the docs name that a fresh rendering does not have, and why that is right.
NOT_HERE = {
    ".env": "the reader creates it from .env.example; never committed",
    ".venv": "made by `make install`",
    "uv.lock": "written by `make install` the first time",
    "agentcore/cdk/": "generated by `agentcore create`; the README says how",
    "evals-results.json": "written by `make evals`",
    "evals-live-results.json": "written by `make evals-live`",
    "yours/tools/report.py": "a sample tool: AGENTS.md says 'when the sample tools are present'",
    "yours/tools/approval.py": "a sample tool, there with include_sample_tools",
    "yours/tools/documents.py": "a sample tool, there with include_sample_tools",
    "tests/test_model_api_key.py": "the model key's tests, with model_provider anthropic or openai",
    "tests/model_provider_api.py": "their stand-in of the provider's API, with the same answers",
    "text/event-stream": "a media type, not a path",
    "application/json": "a media type, not a path",
    "text/plain": "a media type, not a path",
    "linux/arm64": "a Docker platform, not a path",
    ".git": "made by `git init`",
    # made at run time, or elsewhere, by what the docs describe
    "./output": "the working folder a tool writes to at run time (docs/deploying.md)",
    ".DS_Store": "one of the AgentCore CLI's excluded names (docs/deploying.md)",
    ".pytest_cache": "one of the AgentCore CLI's excluded names; pytest makes it",
    "app/.venv": "what the AgentCore CLI must never pack (docs/deploying.md)",
    "threads/slack_T0_C0_1700000000.000100.json": "a stored run, under the storage folder",
    "Notes-1a2b3c4d.md": "an uploaded file's name in Slack (docs/patterns/files.md)",
    # the reader's own files, in examples (docs/patterns/testing.md)
    f"app/{PACKAGE}/yours/tools/orders.py": "the reader's example tool",
    "tests/yours/test_orders.py": "the reader's example test",
    # of earlier releases, named as history
    "policy.py": "deleted in 0.4.0; docs/approvals.md says so",
    # the template repository's, named as such ("the template's `bench/resume.py`"):
    # its docs, benchmarks and tests stay there, in the repository `_src_path` names
    "CHANGELOG.md": "the template's changelog",
    "docs/updating.md": "the template's docs: updating a project from release to release",
    "docs/performance.md": "the template's docs: what bench/ measures",
    "docs/tests.md": "the template's docs: its own tests",
    "bench/": "the template's benchmarks",
    "bench/bytecode.py": "a benchmark of the template's",
    "bench/restore.py": "a benchmark of the template's",
    "bench/resume.py": "a benchmark of the template's",
    "bench/seal.py": "a benchmark of the template's",
    "tests/test_deployment.py": "a test of the template's: it synthesizes every rendering",
}

# Names in code spans that look like code and are nobody's Python, and why they pass.
NOT_CODE = {
    # of earlier releases, named as history: what a project from 0.1.0 had, which
    # scripts/move_yours.py rewrites into rows, and which only an update renders
    "POLICY": "policy.py's table, deleted in 0.4.0; docs/approvals.md says so",
    "FILES_FROM": "the list of tools whose files went to the thread, deleted in 0.4.0",
    "PREBUILT_TOOLS": "the strands-tools a project from 0.1.0 listed, `PREBUILT` since 0.4.0",
}

# Names the docs give that only other answers bring into the project: each passes here
# when this project lacks it. The template's tests find each one in a rendering.
ELSEWHERE = {
    "generate_image": "the image tool, with include_image_generation",
    "start_model_provider_api": "the model key tests' stand-in, with anthropic or openai",
    "publish_report": "a sample tool (yours/tools/report.py), with include_sample_tools",
    "request_approval": "a sample tool (yours/tools/approval.py), with include_sample_tools",
    "write_document": "a sample tool (yours/tools/documents.py), with include_sample_tools",
    "_draft": "report.py's draft, with include_sample_tools",
    "LazyTool": "file_read's row in yours/tools/__init__.py, with include_sample_tools",
    "file_read": "strands-tools' file reader, a row of yours/tools/, with include_sample_tools",
    "REVIEW": "report.py's question, with include_sample_tools",
    "test_each_call_drafts_its_own_report": "report.py's test, with include_sample_tools",
    "test_published_file_is_byte_identical_to_the_approved_draft": (
        "report.py's test, with include_sample_tools"
    ),
    "test_two_documents_with_one_title_get_distinct_names": (
        "documents.py's test, with include_sample_tools"
    ),
}
# The same for messages, by how the quote starts.
SAID_ELSEWHERE = {
    "Approved:": "yours/tools/approval.py's, with include_sample_tools",
    "No decision; the human wrote:": "yours/tools/approval.py's, with include_sample_tools",
    "*Publish this report?*": "yours/tools/report.py's, with include_sample_tools",
    "Or say what to change": "yours/tools/report.py's, with include_sample_tools",
}


def documents(root: Path = ROOT) -> list[Path]:
    names = ["README.md", "AGENTS.md", ".env.example"]
    found = [root / name for name in names if (root / name).is_file()]
    readme = root / "README.md"
    if readme in found and README_CHECKED not in readme.read_text():
        found.remove(readme)
    return found + sorted((root / "docs").glob("**/*.md"))


def makefile_targets(makefile: Path) -> set[str]:
    targets: set[str] = set()
    for line in makefile.read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9][\w.-]*(?:\s+[A-Za-z0-9][\w.-]*)*)\s*:(?![=:])", line)
        if match:
            targets.update(match.group(1).split())
    return targets


def split_markdown(text: str) -> tuple[list[str], list[tuple[str, int, list[str]]]]:
    """The text outside fences, and each fenced block as (language, first line, lines)."""
    prose: list[str] = []
    blocks: list[tuple[str, int, list[str]]] = []
    block: tuple[str, int, list[str]] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        fence = re.match(r"^\s*```(\S*)", line)
        if fence and block is None:
            block = (fence.group(1), number, [])
        elif fence and block is not None:
            blocks.append(block)
            block = None
        elif block is not None:
            block[2].append(line)
        else:
            prose.append(line)
    return prose, blocks


# A section about updating from an old release ("## From 0.6.0 to 0.7.0") names what
# that release had: its names and paths are history, not claims about this one.
HISTORY = re.compile(r"^## From \d+\.\d+\.\d+ to ")


def current_prose(document: Path) -> str:
    """The prose of a document, outside the sections about updating from an old release."""
    prose, _ = split_markdown(document.read_text())
    kept, history = [], False
    for line in prose:
        if line.startswith("## "):
            history = HISTORY.match(line) is not None
        if not history:
            kept.append(line)
    return "\n".join(kept)


def code_spans(document: Path) -> list[str]:
    text = document.read_text()
    if document.suffix != ".md":
        comments = [line.lstrip("# ") for line in text.splitlines() if line.startswith("#")]
        return re.findall(r"`([^`]+)`", "\n".join(comments))
    return [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", current_prose(document))]


def sh_commands(document: Path) -> list[tuple[int, str]]:
    """Each command of the ```sh blocks: (line, command without its comment)."""
    if document.suffix != ".md":
        return []
    _, blocks = split_markdown(document.read_text())
    commands = []
    for language, start, lines in blocks:
        if language not in ("sh", "bash", "shell", "console"):
            continue
        pending_line = None
        pending: list[str] = []
        for offset, line in enumerate(lines, 1):
            stripped = line.strip()
            if not pending and (not stripped or stripped.startswith("#")):
                continue
            if pending_line is None:
                pending_line = start + offset
            pending.append(stripped)
            if stripped.endswith("\\") or not balanced(" ".join(pending)):
                continue
            command = " ".join(part.rstrip("\\").strip() for part in pending[:-1])
            command = (command + " " + re.sub(r"\s+#\s.*$", "", pending[-1])).strip()
            commands.append((pending_line, " ".join(command.split())))
            pending, pending_line = [], None
    return commands


def balanced(command: str) -> bool:
    """Whether a command's quotes are closed (a quoted argument may span lines)."""
    try:
        shlex.split(re.sub(r"\s+#\s.*$", "", command))
    except ValueError:
        return False
    return True


def why_not_run(command: str, not_run: dict = NOT_RUN) -> str | None:
    """The reason NOT_RUN gives for a command, if a pattern of it matches."""
    for patterns, reason in not_run.items():
        if any(fnmatch.fnmatchcase(command, pattern) for pattern in patterns):
            return reason
    return None


def named_targets(text: str) -> list[str]:
    targets = []
    for match in re.finditer(r"(?<![\w./-])make((?:[ \t]+[^\s`#;&|)]+)+)", text):
        for word in match.group(1).split():
            if "=" in word:
                continue
            if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", word):
                break
            targets.append(word)
    return targets


def path_candidates(code: str, package: str) -> list[str]:
    paths = []
    for word in code.split():
        word = word.strip("()[],;.:!?") if not word.startswith(".") else word.rstrip("),;:!?")
        word = re.sub(r"^\.$", "", word)
        for placeholder in ("<package>", "<pkg>", "<package_name>"):
            word = word.replace(placeholder, package)
        if not word or re.search(r"[<>\"'{}()\[\]=:$*@,`|&…]", word):
            continue
        if word.startswith(("/", "~", "-", "..", "#")) or "\\" in word:
            continue
        is_dotfile = re.fullmatch(r"\.[A-Za-z][\w.-]*/?", word) is not None
        if is_dotfile and word in SUFFIXES_ALONE:
            continue  # `.py`, `.rej`: a kind of file, not a file
        if "/" in word or word.endswith(PATH_SUFFIXES) or is_dotfile or word in NAMED_FILES:
            paths.append(word)
    return paths


@functools.cache
def names_under(root: Path) -> frozenset[str]:
    """Every file and folder name under root, outside SKIPPED_DIRS (never walked: .venv is big)."""
    names: set[str] = set()
    for _, folders, files in os.walk(root):
        folders[:] = [folder for folder in folders if folder not in SKIPPED_DIRS]
        names.update(folders, files)
    return frozenset(names)


def missing_paths(paths, roots: list[Path], package: str, known: dict) -> list[str]:
    def exists(path: str) -> bool:
        if path in known:
            return True
        for root in roots:
            if "/" not in path.rstrip("/"):
                if (root / path).exists() or path.rstrip("/") in names_under(root):
                    return True
            elif any(
                (base / path).exists()
                for base in (root, root / "app" / package, root / "app" / package / "yours")
            ):
                return True
        return False

    return sorted({path for path in paths if not exists(path)})


def test_every_make_target_the_docs_name_exists():
    targets = makefile_targets(ROOT / "Makefile")
    unknown = []
    for document in documents():
        code = code_spans(document) + [command for _, command in sh_commands(document)]
        unknown += [
            f"{document.name}: make {target}"
            for span in code
            for target in named_targets(span)
            if target not in targets
        ]
    assert not unknown, f"no such target in the Makefile: {unknown}"


def test_every_path_the_docs_name_exists():
    missing = []
    for document in documents():
        words = code_spans(document) + [command for _, command in sh_commands(document)]
        if document.suffix != ".md":  # a comment names files without backticks
            words += [line for line in document.read_text().splitlines() if line.startswith("#")]
        paths = [path for word in words for path in path_candidates(word, PACKAGE)]
        missing += [
            f"{document.name}: {path}" for path in missing_paths(paths, [ROOT], PACKAGE, NOT_HERE)
        ]
    assert not missing, f"named in the docs, missing in the project: {missing}"


# ---------------------------------------------------------------- names in the code

BUILTINS = frozenset(dir(builtins))
STDLIB = frozenset(sys.stdlib_module_names)
# Other libraries' modules: a dotted name that starts with one is that library's.
LIBRARIES = frozenset({
    "strands", "strands_tools", "strands_evals", "welt_io_strands", "bedrock_agentcore",
    "boto3", "botocore", "aws_cdk", "constructs", "copier", "pytest", "jsonschema", "mcp",
    "opentelemetry", "starlette", "uvicorn", "httpx", "moto",
})  # fmt: skip
# Who else's a name may be, as the words just before it say: "Strands' `Agent`".
OTHERS = re.compile(
    r"\b(?:Python|Strands|strands-tools|strands-agents-tools|strands-agents-evals|"
    r"welt-io-strands|the adapter|Welt|bedrock-agentcore|AgentCore(?: Evaluations)?|"
    r"boto3|botocore|copier|the CDK|aws-cdk-lib|CloudFormation|CloudWatch|STS|"
    r"OpenTelemetry|ADOT|pytest|jsonschema|Renovate|git)(?:'s?|\u2019s?)?\b"
)
# Files whose words name settings, answers and deployment keys besides the code's strings.
SETTINGS_FILES = (
    ".env.example", ".copier-answers.yml", "copier.yml", "Makefile", "Dockerfile",
    "pyproject.toml", "agentcore/agentcore.json", "deploy/environments.toml",
)  # fmt: skip
CAPS = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")
SHELL = {
    "make", "uv", "uvx", "git", "copier", "docker", "npx", "aws", "cdk", "agentcore",
    "python", "python3", "pip", "sh", "curl", "zizmor", "npm",
}  # fmt: skip


@dataclass
class Code:
    """What a project's code names: read from its files' syntax trees, never imported."""

    modules: dict[str, set[str]] = field(default_factory=dict)  # module -> the names it binds
    members: dict[str, set[str]] = field(default_factory=dict)  # class -> its members
    params: dict[str, set[str] | None] = field(default_factory=dict)  # None: any keyword
    required: dict[str, set[str]] = field(default_factory=dict)  # parameters with no default
    defined: set[str] = field(default_factory=set)  # every function and class, at any depth
    names: set[str] = field(default_factory=set)  # every identifier the code writes
    variables: set[str] = field(default_factory=set)  # names assigned, or taken as parameters
    imports: set[tuple[str, str]] = field(default_factory=set)  # (top module, name) bound
    foreign: set[str] = field(default_factory=set)  # names imported from another library
    dotted: set[str] = field(default_factory=set)  # every `a.b`, and each import's module.name
    strings: list[str] = field(default_factory=list)  # literals but docstrings; `\0`: a gap
    words: set[str] = field(default_factory=set)  # words of the strings and SETTINGS_FILES
    files: dict[str, set[str]] = field(default_factory=dict)  # file -> the identifiers in it
    # The same index with tests/ read too: a name only it has is the tests', not the code's.
    with_tests: "Code | None" = None

    def binds(self, module: str) -> set[str]:
        """The names a module binds; a package's, those of every module in it too."""
        found = set(self.modules.get(module, ()))
        for other, bound in self.modules.items():
            if other.startswith(f"{module}."):
                found |= bound
        return found

    def modules_named(self, short: str) -> list[str]:
        return [module for module in self.modules if module.rsplit(".", 1)[-1] == short]

    def knows(self, name: str, own: set[str]) -> bool:
        """Whether a bare name is the code's, a word of its strings, a builtin or the page's."""
        return any(name in known for known in (self.names, self.words, own, BUILTINS))


def module_of(path: Path, root: Path) -> str:
    """app/ and tests/ are on the path (`main`, `conftest`); the rest by folder (`evals.cases`)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[0] in ("app", "tests"):
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[set[str] | None, set[str]]:
    """A function's keywords (None when it takes **kwargs) and those with no default."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    required = {a.arg for a in positional[: len(positional) - len(args.defaults)]}
    required |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None}
    required -= {"self", "cls"}
    if args.kwarg:
        return None, required
    return {a.arg for a in [*positional, *args.kwonlyargs]} - {"self", "cls"}, required


def read_module(code: Code, tree: ast.Module, module: str) -> set[str]:
    bound = code.modules.setdefault(module, set())
    for statement in tree.body:  # what `module.name` may name
        nested = isinstance(statement, ast.If | ast.Try)
        for sub in ast.walk(statement) if nested else [statement]:
            if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bound.add(sub.name)
            elif isinstance(sub, ast.Import | ast.ImportFrom):
                bound.update((a.asname or a.name).split(".")[0] for a in sub.names)
            elif isinstance(sub, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                bound.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.add(node.name)
            code.defined.add(node.name)
            fixture = any("fixture" in ast.unparse(d) for d in node.decorator_list)
            taken, required = parameters(node)
            if node.name in code.params or fixture:  # two of one name: any keyword of either
                old = code.params.get(node.name, set())
                taken = None if fixture or old is None or taken is None else old | taken
                required = set()
            code.params[node.name], code.required[node.name] = taken, required
            arguments = [a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)]
            found.update(arguments)
            code.variables.update(arguments)
        elif isinstance(node, ast.ClassDef):
            found.add(node.name)
            code.defined.add(node.name)
            members = code.members.setdefault(node.name, set())
            fields, init = set(), None
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    members.add(item.name)
                    init = item if item.name == "__init__" else init
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members.add(item.target.id)
                    fields.add(item.target.id)
                elif isinstance(item, ast.Assign):
                    members.update(t.id for t in item.targets if isinstance(t, ast.Name))
            members.update(
                sub.attr
                for sub in ast.walk(node)
                if isinstance(sub, ast.Attribute)
                and isinstance(sub.value, ast.Name)
                and sub.value.id == "self"
                and isinstance(sub.ctx, ast.Store)
            )
            if init is not None:
                code.params[node.name], code.required[node.name] = parameters(init)
            else:  # a dataclass takes its fields; a subclass of another's, we cannot say
                code.params[node.name] = fields if fields else None
                code.required[node.name] = set()
        elif isinstance(node, ast.Name):
            found.add(node.id)
            if isinstance(node.ctx, ast.Store):
                code.variables.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
            if isinstance(node.value, ast.Name):
                found.add(f"{node.value.id}.{node.attr}")
        elif isinstance(node, ast.keyword) and node.arg:
            found.add(node.arg)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                found.add(alias.asname or alias.name.split(".")[0])
                found.update(alias.name.split("."))
                if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    code.imports.add((node.module.split(".")[0], alias.asname or alias.name))
                if isinstance(node, ast.ImportFrom) and node.module:
                    found.add(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.JoinedStr):
            code.strings.append(
                "".join(str(v.value) if isinstance(v, ast.Constant) else "\0" for v in node.values)
            )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            # not a docstring: one may name what no code has any more
            code.strings += [node.value] if id(node) not in docstrings else []
    code.dotted |= {name for name in found if "." in name}
    code.names |= {name for name in found if "." not in name}
    return found


@functools.cache
def code_of(*roots: Path, tests: bool = False) -> Code:
    """The names of the code that ships under the roots (a rendering, or several), and its words.

    The code that ships is every Python file but those of a root's tests/: a helper there
    (conftest.py's `project_registry()`) is not the agent's, so a doc that names one as the
    agent's is wrong however true the test is. With tests, tests/ is read too; the index
    without keeps that one as its `with_tests`.
    """
    if tests:
        return code_of(*roots).with_tests or Code()
    code = Code()
    for root in roots:
        read_files(code, root, [f for f in python_files(root) if f.parts[0] != "tests"])
        for name in SETTINGS_FILES:
            if (root / name).is_file():
                code.strings.append((root / name).read_text())
        code.strings += [path.read_text() for path in sorted((root / ".github").glob("**/*.yml"))]
    with_tests = copy.deepcopy(code)  # each file parsed once: the tests' index adds to a copy
    for root in roots:
        read_files(with_tests, root, [f for f in python_files(root) if f.parts[0] == "tests"])
    for index in (code, with_tests):
        index.foreign = {name for top, name in index.imports if top not in index.modules}
        for module in list(index.modules):  # a package binds its modules
            parts = module.split(".")
            for end in range(1, len(parts)):
                index.modules.setdefault(".".join(parts[:end]), set()).add(parts[end])
        for text in index.strings:
            index.words.update(re.findall(r"[A-Za-z_][\w-]*", text))
    code.with_tests = with_tests
    return code


def python_files(root: Path) -> list[Path]:
    """Every Python file under a root, relative to it, outside SKIPPED_DIRS and template/."""
    found = []
    for folder, folders, files in os.walk(root):
        folders[:] = [f for f in folders if f not in SKIPPED_DIRS and f != "template"]
        found += [(Path(folder) / name).relative_to(root) for name in files if name.endswith(".py")]
    return found


def read_files(code: Code, root: Path, paths: list[Path]) -> None:
    for path in paths:
        if path.name == "test_docs.py":  # this file: its examples
            continue
        try:
            tree = ast.parse((root / path).read_text())
        except SyntaxError:  # a file of the template's, still Jinja
            continue
        module = module_of(root / path, root)
        identifiers = read_module(code, tree, module)
        code.files.setdefault(str(path), set()).update(identifiers)
        code.names.add(module.rsplit(".", 1)[-1])


def looks_like_code(name: str) -> bool:
    """snake_case, CamelCase with a capital inside, or ALL_CAPS: a word of prose is none."""
    return (
        "_" in name.strip("_")
        or name.startswith("_")
        or re.search(r"[a-z][A-Z]", name) is not None
        or (len(name) > 1 and CAPS.fullmatch(name) is not None)
    )


def yours(name: str) -> bool:
    """A name of the reader's own in an example: `my_tool`, `MyGate`."""
    return name.startswith(("my_", "My"))


def chain_of(node: ast.expr) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


def unknown_in_chain(
    parts: list[str], code: Code, package: str, own: set[str], used: set[str] | None = None
) -> tuple[str, str] | None:
    """(missing name, why) for a dotted name that the code does not have, or None.

    A standard library's name must be one the code uses: `used` (the files a page is
    about), or else the whole project.
    """
    head, rest = parts[0], parts[1:]
    text = ".".join(parts)
    if head in LIBRARIES or yours(head):
        return None
    if head == package:
        module = head
        while rest and f"{module}.{rest[0]}" in code.modules:
            module = f"{module}.{rest.pop(0)}"
        if rest and rest[0] not in code.modules.get(module, ()):
            return rest[0], f"`{text}`: {module} has no `{rest[0]}`"
        return None
    if head in STDLIB and head not in code.variables:
        if f"{head}.{rest[0]}" not in (code.dotted if used is None else used):
            where = "the project" if used is None else "the files this page is about"
            return text, f"`{text}`: not used by {where}"
        return None
    modules = code.modules_named(head)
    if modules and head not in code.variables:
        if not any(rest[0] in code.binds(module) for module in modules):
            return rest[0], f"`{text}`: module {head} has no `{rest[0]}`"
        return None
    if head in code.members and rest[0] in code.members[head]:
        return None
    for part in rest if head in code.names or head in own else parts:
        if part not in code.names and part not in own:
            return part, f"`{text}`: no `{part}` in the code"
    return None


def unknown_in_tree(
    tree: ast.AST,
    code: Code,
    package: str,
    own: set[str],
    block: bool = False,
    used: set[str] | None = None,
) -> list[tuple[str, str]]:
    """(missing name, why) for each name of a span or block that the code does not have."""
    problems: list[tuple[str, str]] = []
    done: set[int] = set()
    arguments = {id(a) for node in ast.walk(tree) if isinstance(node, ast.Call) for a in node.args}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] != package:
                continue
            if node.module not in code.modules:
                problems.append((node.module, f"`{node.module}`: no such module"))
                continue
            if node.module != f"{package}.api":
                problems.append(
                    (node.module, f"imports {node.module}: yours/ imports {package}.api")
                )
            problems += [
                (a.name, f"`{node.module}` has no `{a.name}`")
                for a in node.names
                if a.name not in code.modules[node.module]
            ]
        elif isinstance(node, ast.Attribute) and id(node) not in done:
            inner: ast.expr = node
            while isinstance(inner, ast.Attribute):
                done.add(id(inner))
                inner = inner.value
            done.add(id(inner))
            parts = chain_of(node)
            problem = parts and unknown_in_chain(parts, code, package, own, used)
            if problem:
                problems.append(problem)
        elif isinstance(node, ast.Call):
            if block and isinstance(node.func, ast.Attribute) and node.func.attr == "interrupt":
                problems.append(("interrupt", "calls interrupt(): every question goes through ask"))
            if not isinstance(node.func, ast.Name):
                continue
            name = node.func.id
            done.add(id(node.func))
            if name == EXCERPT:
                continue
            if not any(name in known for known in (code.names, BUILTINS, own)) and not yours(name):
                problems.append((name, f"`{name}(`: no function or class of that name"))
                continue
            if name not in code.defined or name in code.foreign:
                continue  # another library's: its parameters are its own
            taken = code.params.get(name)
            problems += [
                (k.arg, f"`{name}({k.arg}=...)`: {name} takes no {k.arg}")
                for k in node.keywords
                if k.arg and taken is not None and k.arg not in taken
            ]
            elided = (
                any(isinstance(n, ast.Constant) and n.value is Ellipsis for n in ast.walk(node))
                or any(isinstance(a, ast.Starred) for a in node.args)
                or any(k.arg is None for k in node.keywords)
            )
            if block and not elided and len(node.args) == 0:
                missing = code.required.get(name, set()) - {k.arg for k in node.keywords}
                if missing:
                    problems.append(
                        (name, f"`{name}(...)` leaves out {', '.join(sorted(missing))}")
                    )
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in done:
            name = node.id
            if id(node) in arguments and not CAPS.fullmatch(name):
                continue  # an argument is often a placeholder: `Row(my_tool, ASK)`
            if looks_like_code(name) and not yours(name) and not code.knows(name, own):
                problems.append((name, f"`{name}`: no such name"))
    return problems


# What an excerpt of keyword arguments is parsed inside: `tools=..., plugins=...,`.
EXCERPT = "__excerpt__"


def parse_block(lines: list[str]) -> ast.Module | None:
    """A ```python block, or an excerpt of one: a few keyword arguments, say."""
    text = textwrap.dedent("\n".join(lines))
    for attempt in (text, f"{EXCERPT}(\n{text}\n)"):
        try:
            return ast.parse(attempt)
        except SyntaxError:
            pass
    return None


def python_blocks(document: Path) -> list[tuple[int, ast.Module | None]]:
    _, blocks = split_markdown(document.read_text())
    return [
        (start, parse_block(lines)) for language, start, lines in blocks if language == "python"
    ]


def examples(tree: ast.AST) -> set[str]:
    """What a block defines as the reader's own: a `@tool`, a `test_` function."""
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (
            node.name.startswith("test_")
            or any("tool" in ast.unparse(d) for d in node.decorator_list)
        )
    }


def own_names(document: Path) -> set[str]:
    """The names a document's ```python blocks bind or spell (a tool name in a dict, say)."""
    names: set[str] = set()
    for _, tree in python_blocks(document):
        for node in ast.walk(tree or ast.Module(body=[], type_ignores=[])):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg | ast.keyword) and node.arg:  # a keyword it passes too
                names.add(node.arg)
            elif isinstance(node, ast.alias):  # what it imports: checked as an import
                names.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.update(re.findall(r"\w+", node.value))
    return names


# A heading about the tests: "## Tested", "# Offline tests", "### `test_restarts.py`".
TESTS_HEADING = re.compile(r"\btest(?:s|ed|ing)?\b|\btest_\w+\.py\b|\bconftest\.py\b", re.I)
# Words of a sentence that make a name after them the tests': "the tests' `start`
# fixture", "The browser tests need ... `PLAYGROUND_BROWSER`", "`tests/conftest.py`
# builds `is_welt_payload`", "test_gate.py's".
TESTS = re.compile(r"\btests?\b|\btests/[\w/.-]+|\b(?:test_\w+|conftest)\.py\b", re.I)


def under_tests_heading(lines: list[str]) -> list[bool]:
    """For each line of a document, whether a heading it is under is about the tests.

    A heading's section runs to the next heading of its level or higher, so a page
    titled "# Offline tests" is about the tests throughout. Lines in fences are no
    headings.
    """
    flags, headings, fenced = [], [(0, False)], False
    for line in lines:
        if re.match(r"^\s*```", line):
            fenced = not fenced
        heading = None if fenced else re.match(r"^ {0,3}(#{1,6})\s+(.*)", line)
        if heading:
            level = len(heading.group(1))
            headings = [h for h in headings if h[0] < level]
            headings.append((level, TESTS_HEADING.search(heading.group(2)) is not None))
        flags.append(any(about for _, about in headings))
    return flags


def spans_in_context(document: Path) -> list[tuple[str, str, bool]]:
    """Each code span of the current prose, the words of its clause just before it, and
    whether what is before it says it is the tests': a heading, or its sentence (TESTS).

    Spans listed before it (`Proceed`, `Deny` or `Confirm`) and an opening parenthesis
    are left out, so that "Strands' interventions return `Proceed`, `Deny` or `Confirm`"
    gives each of the three the words that name Strands.
    """
    text = current_prose(document)
    tests_at = under_tests_heading(text.split("\n"))
    found = []
    for match in re.finditer(r"`([^`]+)`", text):
        before = " ".join(text[max(0, match.start() - 300) : match.start()].split())
        sentence = re.split(r"(?<=[.!?])\s|\|", before)[-1]
        before = re.sub(r"(?:`[^`]*`(?:,| or| and)? ?)+$", "", before).rstrip(" (")
        before = re.split(r"(?<=[.!?:;])\s|\|", before)[-1]
        span, words = " ".join(match.group(1).split()), " ".join(before.split()[-4:])
        about_tests = tests_at[text.count("\n", 0, match.start())]
        found.append((span, words, about_tests or TESTS.search(sentence) is not None))
    return found


def unknown_in_span(
    span: str, code: Code, package: str, own: set[str], used: set[str] | None = None
) -> list[tuple[str, str]]:
    span = span.replace("<package>", package).replace("<pkg>", package)
    words = span.split()
    if not words or words[0] in SHELL or words[0][0] in "$-|#/~":
        return []  # a command, an option, a query
    if re.fullmatch(r"[\w.]*\w-[\w.-]*", span):
        return []  # a slug: `prod-EVIL`, `aarch64-manylinux2014`
    if not span.startswith(("from ", "import ")) and (
        "/" in span or path_candidates(span, package)
    ):
        return []  # a path: the paths test checks it
    if re.search(r"\.(com|png|csv|mp4|zip)\b", span):
        return []  # a host or a file: `sts.amazonaws.com`, `image.png`
    keyword = re.fullmatch(r"(\w+)=", span)
    if keyword:
        name = keyword.group(1)
        return [] if name in code.names | own else [(name, f"`{span}`: no such parameter")]
    span = re.sub(r"^([A-Z][A-Z0-9_]+)=\S*$", r"\1", span)  # a setting and its value
    try:
        tree = ast.parse(span)
    except SyntaxError:
        call = re.match(r"([A-Za-z_]\w*(?:\.\w+)*)\(", span)  # `ask(tool_context,`
        if not call or len(call.group(1)) < 2:
            return []
        tree = ast.parse(f"{call.group(1)}()")
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.AnnAssign):
        return []  # `data: {...}`, an event as Welt sees it
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
        value = tree.body[0].value
        if isinstance(value, ast.Name):
            name = value.id
            if not (looks_like_code(name) or name[0].isupper()) or yours(name):
                return []
            if code.knows(name, own) or name in LIBRARIES:
                return []
            return [(name, f"`{name}`: no such name")]
    return unknown_in_tree(tree, code, package, own, used=used)


def opening_files(
    document: Path, root: Path, package: str, yours_too: bool = False
) -> list[str] | None:
    """The files a page opens with ("File: `app/<package>/...`"), as keys of Code.files.

    None when the page opens otherwise, or names a file this project lacks (a sample
    tool's page, without the sample tools): the template's tests read it where it is.
    None too for a file of yours/ unless `yours_too`: `copier update` leaves your copy of
    a sample as it was, so the page describes the template's, which its tests check.
    """
    prose, _ = split_markdown(document.read_text())
    opening = " ".join("\n".join(prose[1:]).strip().split("\n\n")[0].split())
    if not opening.startswith(("File:", "Files:")):
        return None
    files = []
    for span in re.findall(r"`([^`]+)`", opening):
        for path in path_candidates(span, package):
            found = [root / base / path for base in ("", f"app/{package}/")]
            found = [place for place in found if place.exists()]
            if not found:
                return None
            if not yours_too and any("yours" in place.parts for place in found):
                return None
            for place in found:
                places = sorted(place.glob("*.py")) if place.is_dir() else [place]
                files += [str(each.relative_to(root)) for each in places]
    return files


def unknown_names(
    document: Path, code: Code, package: str, root: Path | None = None, yours_too: bool = False
) -> list[tuple[str, str]]:
    """Every (missing name, why) of a document: its spans, its diagrams, its Python.

    With the project's root, a page that opens with `File:` is read against those files.
    """
    own = own_names(document)
    files = opening_files(document, root, package, yours_too) if root else None
    used = (
        {name for file in files for name in code.files.get(file, ()) if "." in name}
        if files
        else None
    )
    with_tests = code.with_tests or code
    problems = []
    theirs: set[str] = set()
    for span, before, about_tests in spans_in_context(document):
        found = unknown_in_span(span, code, package, own, used)
        if found and (OTHERS.search(before) or all(name in theirs for name, _ in found)):
            # named as another's once: so it stays in this document, and its parts too
            theirs |= {name for name, _ in found} | set(re.findall(r"\w+", span))
            continue
        if found and not unknown_in_span(span, with_tests, package, own, used):
            if about_tests or span.startswith("test_"):  # the tests', and said so
                theirs |= {name for name, _ in found} | set(re.findall(r"\w+", span))
                continue
            found = [(name, f"`{span}` is only the tests' (tests/): say so") for name, _ in found]
        problems += found
    text = document.read_text()
    tests_at = under_tests_heading(text.splitlines())
    _, blocks = split_markdown(text)
    for language, start, lines in blocks:
        if language == "":  # a diagram: its calls
            for line in lines:
                for call in re.findall(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\(", line):
                    problems += [
                        (name, f"line {start}: {why}")
                        for name, why in unknown_in_tree(
                            ast.parse(f"{call}()"),
                            with_tests if tests_at[start - 1] else code,
                            package,
                            own,
                        )
                    ]
    for start, tree in python_blocks(document):
        if tree is None:
            problems.append(("python", f"line {start}: the ```python block does not parse"))
            continue
        mine = examples(tree)
        # a test of yours (`def test_...`), or a block about the tests, may use the tests' names
        tests_too = tests_at[start - 1] or any(name.startswith("test_") for name in mine)
        against = with_tests if tests_too else code
        problems += [
            (name, f"line {start}: {why}")
            for name, why in unknown_in_tree(tree, against, package, own - mine, block=True)
        ]
        problems += [
            (node.name, f"line {start}: the code has no `{node.name}`")
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.ClassDef)
            and node.name not in mine
            and node.name not in against.defined
        ]
        if files:
            # the files' names, and the members of the project's classes they use (CallMemo's)
            theirs_too = {n for file in files for n in code.files.get(file, ())}
            theirs_too |= {m for n in list(theirs_too) for m in code.members.get(n, ())}
            problems += [
                (name, f"line {start}: `{name}` is not in {', '.join(files)}")
                for name in sorted(spoken_in(tree) - mine - theirs_too)
            ]
    return problems


def spoken_in(tree: ast.AST) -> set[str]:
    """The calls, attributes and names a block reads, not those it binds itself."""
    bound = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    read = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            read.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            read.add(node.id)
        elif isinstance(node, ast.keyword) and node.arg:
            read.add(node.arg)
    return read - bound - BUILTINS - {EXCERPT}


def test_every_code_name_the_docs_give_is_the_project_s_or_says_whose():
    code = code_of(ROOT)
    unknown = [
        f"{document.relative_to(ROOT)}: {why}"
        for document in documents()
        if document.suffix == ".md"
        for name, why in unknown_names(document, code, PACKAGE, ROOT)
        if name not in NOT_CODE and name not in ELSEWHERE
    ]
    assert not unknown, f"not in the code, and not said to be another library's: {unknown}"


# A placeholder of the docs (`…`, `<id>`) or an example value (a number, 'quoted', a file
# name, an ALL_CAPS setting) stands where the code's message has a gap.
GAP = re.compile(
    r"…|\.\.\.|<[^<>]*>|(?<!\w)'[^']*'|\b[A-Z][A-Z0-9_]+\b|\b[NX]\b|[\w.-]*\d[\w.,:-]*|\S+\.\w+\b"
    r"|\$\S*|\[[^\]]*\]|\\n|\*+|(?<!\w)_|_(?!\w)"  # a JSON path, `[staging]`, `\n`, emphasis
    r"|\w+(?:, \w+)+|\b[a-z]+_[a-z_]+\b"  # a list of values, a key such as model_id
    r"|\b[A-Z][a-z]+[A-Z]\w*"  # an exception's name: NoSuchBucket
    r"|(?<=[.!?:;])\s|[()]"  # and where a message may join another: "Cannot resume: <why>."
)
# Words of another library's message, quoted inside one of the agent's, and whose they are.
THEIR_WORDS = {
    "Additional properties are not allowed": "jsonschema's, in a refusal (docs/patterns/wire.md)",
    "should be non-empty": "jsonschema's, in a refusal (docs/patterns/wire.md)",
    "was unexpected": "jsonschema's, in a refusal (docs/patterns/wire.md)",
}


def quotes(document: Path) -> list[tuple[str, str]]:
    """Each quoted message of three words or more, with its sentence up to the quote.

    A ```text block's lines that start with `deploy: ` are the deploy command's
    messages, quoted whole.
    """
    _, blocks = split_markdown(document.read_text())
    texts = [current_prose(document)]
    texts += ["\n".join(lines) for language, _, lines in blocks if language in ("", "text")]
    found = [  # the deploy command's one-line errors, as a text block shows them
        (line.removeprefix("deploy: "), "")
        for language, _, lines in blocks
        if language == "text"
        for line in lines
        if line.startswith("deploy: ")
    ]
    for text in texts:
        text = re.sub(r"`[^`]*`", "\0", " ".join(text.replace("“", '"').replace("”", '"').split()))
        for match in re.finditer(r'"([^"]*)"', text):
            quote = match.group(1)
            if len(quote.split()) >= 3 and "\0" not in quote:
                found.append((quote, re.split(r"(?<=[.!?])\s", text[: match.start()])[-1]))
    return found


def said(quote: str, code: Code, theirs: dict[str, str] = THEIR_WORDS) -> bool:
    """Whether each part of the quote between gaps is in a string of the code."""

    def in_code(words: list[str]) -> bool:
        return len(" ".join(words)) >= 8 and any(" ".join(words) in s for s in code.strings)

    for words_of_theirs in theirs:
        quote = quote.replace(words_of_theirs, "…")
    for part in GAP.split(quote):
        words = part.split()
        if len(" ".join(words)) < 8 or in_code(words):
            continue
        if not (in_code(words[:-1]) or in_code(words[1:])):  # an example value at one end
            return False
    return True


def test_every_message_the_docs_quote_is_one_the_code_says():
    """A test's strings count: the message a test asserts (`match=...`) is the code's."""
    code = code_of(ROOT, tests=True)
    unsaid = [
        f"{document.relative_to(ROOT)}: {quote!r}"
        for document in documents()
        if document.suffix == ".md"
        for quote, sentence in quotes(document)
        if not said(quote, code) and not OTHERS.search(sentence)
        if not quote.startswith(tuple(SAID_ELSEWHERE))
    ]
    assert not unsaid, f"quoted, but no message of the code: {unsaid}"


# ---------------------------------------------------------------- links

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s<>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$")


def without_code(prose: list[str]) -> str:
    """The prose with each code span blanked: a link's text may hold one, a span never a link."""
    return re.sub(r"`[^`]+`", "code", "\n".join(prose))


def links(document: Path) -> list[str]:
    """Each link target of a Markdown document, outside code, as written."""
    text = without_code(split_markdown(document.read_text())[0])
    return LINK.findall(text) + DEFINITION.findall(text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text, lowercase, without punctuation, `-` for spaces."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@functools.cache
def anchors(document: Path) -> frozenset[str]:
    prose, _ = split_markdown(document.read_text())
    seen: dict[str, int] = {}
    found: set[str] = set()
    for line in prose:
        heading = HEADING.match(line)
        if heading:
            name = slug(heading.group(1))
            count = seen.get(name, 0)
            seen[name] = count + 1
            found.add(name if not count else f"{name}-{count}")
    found.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", document.read_text()))
    return frozenset(found)


def broken_links(document: Path, root: Path) -> list[str]:
    """The relative links of a document that name no file or folder under root, or no heading."""
    broken = []
    for target in links(document):
        if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target) or not target:
            continue  # a URL or mailto: not this test's to check
        path, _, anchor = unquote(target).partition("#")
        linked = (document.parent / path).resolve() if path else document.resolve()
        if not linked.is_relative_to(root.resolve()):
            broken.append(f"{target} (outside {root.name})")
        elif not linked.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and (linked.suffix != ".md" or anchor not in anchors(linked)):
            broken.append(f"{target} (no such heading in {linked.name})")
    return [f"{document.relative_to(root)}: {link}" for link in broken]


def test_every_relative_link_of_the_docs_resolves():
    broken = [
        link
        for document in documents()
        if document.suffix == ".md"
        for link in broken_links(document, ROOT)
    ]
    assert not broken, f"a link to nothing: {broken}"


# ---------------------------------------------------------------- commands


def commands_to_run(docs: list[Path]) -> list[str]:
    unaccounted, run = [], []
    for document in docs:
        for line, command in sh_commands(document):
            if command in RUN:
                run.append(command)
            elif why_not_run(command) is None:
                unaccounted.append(f"{document.name}:{line}: {command}")
    assert not unaccounted, (
        f"a ```sh command neither run by tests/test_docs.py (RUN) nor in its NOT_RUN, with "
        f"the reason: {unaccounted}"
    )
    return sorted(set(run))


def test_every_sh_command_is_run_here_or_listed_with_why_not():
    commands_to_run(documents())


@pytest.fixture(scope="module")
def copy_of_the_project(tmp_path_factory):
    copy = tmp_path_factory.mktemp("docs") / "project"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(*SKIPPED_DIRS))
    return copy


def test_the_cheap_sh_commands_work(copy_of_the_project):
    commands = commands_to_run(documents())
    if not commands:
        return
    if shutil.which("uv") is None or shutil.which("make") is None:
        pytest.skip(f"uv or make is not on PATH, so {commands} cannot run")
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    # The copy runs in this project's environment, offline, and never syncs it.
    env.update(
        UV_PROJECT_ENVIRONMENT=str(ROOT / ".venv"),
        UV_NO_SYNC="1",
        UV_OFFLINE="1",
        UV_PYTHON_DOWNLOADS="never",
        AWS_EC2_METADATA_DISABLED="true",
    )
    for command in commands:
        done = subprocess.run(
            shlex.split(command),
            cwd=copy_of_the_project,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN[command],
        )
        assert done.returncode == 0, f"{command}:\n{done.stdout}\n{done.stderr}"


# ---------------------------------------------------------------- output


def text_blocks(document: Path) -> list[tuple[int, list[str]]]:
    """Each ``` and ```text block of a Markdown document: (its first line, its lines)."""
    if document.suffix != ".md":
        return []
    _, blocks = split_markdown(document.read_text())
    return [
        (start, textwrap.dedent("\n".join(lines)).splitlines())
        for language, start, lines in blocks
        if language in ("", "text")
    ]


def listed_for(name: str, lines: list[str], table: dict) -> list:
    """The entries of a table (OUTPUTS, NOT_CHECKED) for a block of the named document."""
    first = next((line for line in lines if line.strip()), "")
    return [
        value for (doc, start), value in table.items() if doc == name and first.startswith(start)
    ]


def shows(block: list[str], printed: list[str], whole: bool = True) -> bool:
    """Whether a block shows what was printed: line for line, blank lines aside, `…` any text.

    Not whole: each line of the block is one of the lines printed.
    """
    shown = [
        re.compile(".*?".join(map(re.escape, line.split("…")))) for line in block if line.strip()
    ]
    lines = [line for line in printed if line.strip()]
    if not whole:
        return all(any(line.fullmatch(out) for out in lines) for line in shown)
    return len(shown) == len(lines) and all(
        line.fullmatch(out) for line, out in zip(shown, lines, strict=True)
    )


@dataclass(frozen=True)
class Request:
    """A request as a page's `curl` command sends it."""

    path: str
    headers: dict[str, str]
    body: bytes


def curl_request(command: str) -> Request:
    """The request a `curl` command sends: its path, its `-H` headers, its `-d` body."""
    path, headers, body = "/", {}, b""
    words = iter(shlex.split(command)[1:])
    for word in words:
        if word in ("-H", "--header"):
            name, _, value = next(words).partition(":")
            headers[name.strip()] = value.strip()
        elif word in ("-d", "--data"):
            body = next(words).encode()
        elif not word.startswith("-"):
            path = "/" + word.split("://")[-1].partition("/")[2]
    return Request(path, headers, body)


def request_before(document: Path, line: int) -> Request | None:
    """The request of the last `curl` command a document shows before a line, if any."""
    commands = [c for n, c in sh_commands(document) if n < line and c.startswith("curl ")]
    return curl_request(commands[-1]) if commands else None


@contextlib.contextmanager
def only_environment(env: dict[str, str]) -> Iterator[None]:
    """Only these variables, while it lasts: botocore reads the process's, not the settings'."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def served(**env: str) -> Iterator[Callable[..., list[str]]]:
    """The app `make serve` serves, in-process, in an environment of only `env` and:

    this one's PATH and locale, a home and stored runs in a folder of their own, no MCP
    server of yours, and no AWS credentials anywhere botocore looks (no AWS_ variable,
    empty config and credentials files, no instance metadata). It answers `send(request,
    payload)`, the payload in place of the request's body, with the lines it prints.
    """
    from starlette.testclient import TestClient

    factory = importlib.import_module(f"{PACKAGE}.factory")
    settings = importlib.import_module(f"{PACKAGE}.settings")
    with tempfile.TemporaryDirectory() as folder:
        empty = Path(folder) / "empty"
        empty.write_text("")
        kept = {name: os.environ[name] for name in ("PATH", "LANG", "LC_ALL") if name in os.environ}
        offline = {
            **kept,
            "HOME": folder,
            "AWS_CONFIG_FILE": str(empty),
            "AWS_SHARED_CREDENTIALS_FILE": str(empty),
            "AWS_EC2_METADATA_DISABLED": "true",
            "RUN_STORE": "session-storage",
            "SESSION_STORAGE_DIR": f"{folder}/sessions",
            "RUN_KEY_FILE": f"{folder}/run.key",
            "MCP_SERVERS": "off",
        }
        with only_environment({**offline, **env}):
            app = factory.create_app(settings.Settings.from_environment())
            # Where the docs' curl commands send: the server answers no other name.
            with TestClient(app, base_url="http://localhost:8080") as client:

                def send(request: Request, payload: object = None) -> list[str]:
                    body = request.body if payload is None else json.dumps(payload).encode()
                    reply = client.post(request.path, headers=request.headers, content=body)
                    return reply.text.splitlines()

                yield send


# What a situation sends when the page shows no request: Welt's request for a message.
A_MESSAGE = Request(
    "/invocations",
    {
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id": "slack_T0_C0_1700000000.000100",
    },
    b'{"messages": [{"role": "user", "content": [{"text": "<@U1>: hello"}]}]}',
)


def turn_of(text: str) -> dict:
    return {"messages": [{"role": "user", "content": [{"text": f"<@U1>: {text}"}]}]}


def questions_in(events: list[str]) -> list[dict]:
    return [json.loads(e.removeprefix("data: "))["interrupt"] for e in events if '"interrupt"' in e]


def answer_to(events: list[str], value: object, source: str) -> dict:
    """The answer to the question a reply ends on."""
    (question,) = questions_in(events)
    return {"interrupt_responses": {question["id"]: {"value": value, "source": source}}}


def bedrock_without_credentials(request: Request | None) -> list[str]:
    """The reply of the Bedrock model's agent to the page's request, with no AWS credentials."""
    with served(MODEL_PROVIDER="bedrock") as send:
        return send(request or A_MESSAGE)


def no_messages(request: Request | None) -> list[str]:
    """The reply to `{"messages": []}`, sent as the page's request is (its path, its headers)."""
    with served(MODEL_PROVIDER="rehearsal") as send:
        return send(request or A_MESSAGE, {"messages": []})


def the_tests_bad_payloads(request: Request | None) -> list[str]:
    """The replies to each bad payload of tests/welt_payloads.py, and to those past the bounds."""
    from welt_payloads import BAD_PAYLOADS, PAST_THE_BOUNDS

    payloads = [payload for payload, _, _ in BAD_PAYLOADS.values()]
    with served(MODEL_PROVIDER="rehearsal") as send:
        return [
            line
            for payload in [*payloads, *PAST_THE_BOUNDS.values()]
            for line in send(A_MESSAGE, payload)
        ]


def a_null_answer(request: Request | None) -> list[str]:
    """The reply to a null answer to the gate's question (rehearsal's `gate` scene)."""
    with served(MODEL_PROVIDER="rehearsal") as send:
        asked = send(A_MESSAGE, turn_of("gate"))
        return send(A_MESSAGE, answer_to(asked, None, "option"))


def the_same_answers_twice(request: Request | None) -> list[str]:
    """Rehearsal's walk-through to its end, its question answered in text and its report
    (with the sample tools) published, then the last answers sent again."""
    answers: dict = {}
    with served(MODEL_PROVIDER="rehearsal") as send:
        reply = send(request or A_MESSAGE, turn_of("hello"))
        while questions_in(reply):
            (question,) = questions_in(reply)
            pressed = "approve" in question["reason"]
            answers = (
                answer_to(reply, True, "option") if pressed else answer_to(reply, "ok", "input")
            )
            reply = send(A_MESSAGE, answers)
        return send(A_MESSAGE, answers)


SITUATIONS: dict[str, Callable[[Request | None], list[str]]] = {
    situation.__name__: situation
    for situation in (
        bedrock_without_credentials,
        no_messages,
        the_tests_bad_payloads,
        a_null_answer,
        the_same_answers_twice,
    )
}


def printed(document: Path, line: int, situation: str) -> list[str]:
    """What a situation prints, for the block of a document that starts at a line.

    The template's own tests call it on its docs, in a rendering's environment.
    """
    return SITUATIONS[situation](request_before(document, line))


def output_blocks() -> list[tuple[str, int, list[str], Output]]:
    return [
        (name, start, lines, output)
        for document in documents()
        for name in [document.relative_to(ROOT).as_posix()]
        for start, lines in text_blocks(document)
        for output in listed_for(name, lines, OUTPUTS)
    ]


def unaccounted_blocks(docs: list[Path], root: Path, listed: dict) -> list[str]:
    """The ``` and ```text blocks of the docs that no entry of `listed` is for."""
    return [
        f"{document.relative_to(root)}:{start}: {next((line for line in lines if line), '')}"
        for document in docs
        for start, lines in text_blocks(document)
        if not listed_for(document.relative_to(root).as_posix(), lines, listed)
    ]


def test_every_block_of_output_is_produced_here_or_listed_with_why_not():
    unaccounted = unaccounted_blocks(documents(), ROOT, OUTPUTS | NOT_CHECKED)
    assert not unaccounted, (
        f"a ``` or ```text block neither produced by tests/test_docs.py (OUTPUTS) nor in "
        f"its NOT_CHECKED, with the reason: {unaccounted}"
    )


OUTPUT_BLOCKS = output_blocks()


@pytest.mark.parametrize(
    "name, start, block, output",
    OUTPUT_BLOCKS,
    ids=[f"{name}:{start}" for name, start, _, _ in OUTPUT_BLOCKS],
)
def test_each_block_of_output_is_what_the_code_prints(name, start, block, output):
    shown = printed(ROOT / name, start, output.situation)

    assert shows(block, shown, output.whole), "\n".join(shown)


# ---------------------------------------------------------------- the rules themselves


def test_the_rules_catch_what_they_should(tmp_path):
    """The checks above fail on what they are for: a new unlisted command, a wrong path."""
    doc = tmp_path / "README.md"
    doc.write_text(
        "Run `make nonesuch` and `app/<package>/nowhere.py`.\n\n"
        "```sh\nmake lint\nmake serve   # serve on localhost:8080\n"
        "# deploy\nmake deploy ENV=staging\n"
        "agentcore invoke \\\n  '{}'\n\nuv run newthing\n```\n"
    )
    assert named_targets("make update ARGS=--defaults && make lint test") == [
        "update",
        "lint",
        "test",
    ]
    assert [command for _, command in sh_commands(doc)] == [
        "make lint",
        "make serve",
        "make deploy ENV=staging",
        "agentcore invoke '{}'",
        "uv run newthing",
    ]
    assert why_not_run("make serve") == "it starts a server"
    assert "AWS credentials" in why_not_run("make deploy ENV=staging")
    with pytest.raises(AssertionError, match=r"agentcore invoke '\{\}'.*uv run newthing"):
        commands_to_run([doc])
    paths = [path for span in code_spans(doc) for path in path_candidates(span, PACKAGE)]
    assert missing_paths(paths, [ROOT], PACKAGE, NOT_HERE) == [f"app/{PACKAGE}/nowhere.py"]


def test_the_name_rules_catch_a_name_the_code_lacks(tmp_path):
    """Gone names, wrong imports, wrong keywords and unsaid messages fail; the library's pass."""
    (tmp_path / "docs").mkdir()
    doc = tmp_path / "docs" / "page.md"
    doc.write_text(
        f"Import `{PACKAGE}.gate.interrupt_names` as `from {PACKAGE}.gate.interrupt_names "
        f"import interrupt_name`; call `agent.check_at_startup(registry)`, "
        "`Conversations(new_model=..., turns=3)` and `limit_notice`; read `main.invoke`, "
        "`agent.state`, `Settings.from_environment`, `RUN_STORE`, `my_tool`, "
        "`wire.MAX_FILE_BYTES` and `colorsys.rgb_to_hls`. It raises Strands' "
        "`ConcurrencyException`.\n\n"
        'The thread reads "Nothing to resume: the moon is down".\n\n'
        "```python\ndef model_settings(env):\n    return env\n\n\n"
        "@tool\ndef forecast(city: str) -> str:\n    return tool_context.interrupt(city)\n```\n"
    )
    code = code_of(ROOT)
    found = {name for name, _ in unknown_names(doc, code, PACKAGE, ROOT, yours_too=True)}
    assert found == {
        f"{PACKAGE}.gate.interrupt_names",  # yours/ imports only api
        "check_at_startup",
        "turns",
        "limit_notice",
        "invoke",
        "colorsys.rgb_to_hls",
        "model_settings",
        "interrupt",
    }
    assert [quote for quote, _ in quotes(doc)] == ["Nothing to resume: the moon is down"]
    assert not said("Nothing to resume: the moon is down", code)
    assert said("Nothing to resume in this thread: …", code)


def test_a_name_only_the_tests_have_passes_only_where_said_to_be_theirs(tmp_path):
    """conftest.py's `project_registry()` named as what refuses a bare tool is a wrong claim."""
    (tmp_path / "docs").mkdir()
    doc = tmp_path / "docs" / "page.md"
    doc.write_text(
        "# The gate\n\n"
        "`project_registry()` refuses a bare tool, and `Registry.of` really does.\n\n"
        "The tests' `agent_for` builds an agent, `tests/conftest.py` builds "
        "`is_welt_payload`, and `test_ping_answers_healthy` pings; `test_nonesuch` is "
        "nowhere.\n\n"
        "## Tested\n\n`offline_settings` keeps a test's runs in its own folder.\n\n"
        "## Served\n\n`local_client` talks to a server.\n\n"
        "```python\nsettings = offline_settings(folder)\n```\n\n"
        "```python\ndef test_mine():\n    assert local_client('http://127.0.0.1:1')\n```\n"
    )
    code = code_of(ROOT)

    found = {name for name, _ in unknown_names(doc, code, PACKAGE, ROOT)}

    assert found == {"project_registry", "test_nonesuch", "local_client", "offline_settings"}
    assert {name for name, _ in unknown_names(doc, code_of(ROOT, tests=True), PACKAGE)} == {
        "test_nonesuch"
    }


def test_the_output_rule_catches_a_block_that_is_not_what_was_printed(tmp_path):
    """A stale reply fails, `…` aside; so does a block that no table lists."""
    printed = ['data: {"error": "Bedrock cannot be called: no AWS credentials were found."}', ""]
    stale = 'data: {"error": "The agent failed: NoCredentialsError: Unable to locate credentials"}'
    (tmp_path / "docs").mkdir()
    doc = tmp_path / "docs" / "page.md"
    doc.write_text(
        "```sh\ncurl -N localhost:8080/invocations \\\n  -H 'Accept: text/event-stream' "
        "-d '{\"messages\": []}'\n```\n\n```\n" + stale + "\n```\n\n```text\nlisted\n```\n"
    )

    assert shows(['data: {"error": "Bedrock cannot be called: …"}'], printed)
    assert not shows([stale], printed)
    assert not shows([printed[0], printed[0]], printed)  # more than was printed
    assert shows(["b"], ["a", "", "b"], whole=False)
    assert not shows(["c"], ["a", "", "b"], whole=False)
    assert request_before(doc, 6) == Request(
        "/invocations", {"Accept": "text/event-stream"}, b'{"messages": []}'
    )
    assert unaccounted_blocks([doc], tmp_path, {("docs/page.md", "list"): ""}) == [
        f"docs/page.md:6: {stale}"
    ]


def test_the_link_rule_catches_a_link_to_nothing(tmp_path):
    """A link to a missing file or heading fails; one to a real file, heading or URL passes."""
    (tmp_path / "docs" / "patterns").mkdir(parents=True)
    (tmp_path / "docs" / "deploying.md").write_text(
        "# Deploying\n\n## Container or CodeZip: the `deploy_build` question\n\n"
        "## Tracing and logs\n\n## Tracing and logs\n\n```sh\n# not a heading\n```\n"
    )
    doc = tmp_path / "docs" / "patterns" / "wire.md"
    doc.write_text(
        "# The wire\n\nSee [deploying](../deploying.md), [the build question]"
        "(../deploying.md#container-or-codezip-the-deploy_build-question), [logs]"
        "(../deploying.md#tracing-and-logs-1), [this page](#the-wire), [a URL]"
        "(https://example.com/x.md#y) and `[code](nowhere.md)`.\n\n"
        "Broken: [gone](../performance.md), [no heading](../deploying.md#not-a-heading),\n"
        "[wrapped\nlink text](stored-runs.md), [out](../../../elsewhere.md) and\n[ref].\n\n"
        "[ref]: ../updating.md#from-051-to-060\n"
    )
    assert slug("`python_version` (default 3.13)") == "python_version-default-313"
    assert slug("Which Welt this speaks") == "which-welt-this-speaks"
    assert broken_links(doc, tmp_path) == [
        "docs/patterns/wire.md: ../performance.md (no such file)",
        "docs/patterns/wire.md: ../deploying.md#not-a-heading (no such heading in deploying.md)",
        "docs/patterns/wire.md: stored-runs.md (no such file)",
        "docs/patterns/wire.md: ../../../elsewhere.md (outside " + tmp_path.name + ")",
        "docs/patterns/wire.md: ../updating.md#from-051-to-060 (no such file)",
    ]
