"""Move your files into app/<package>/yours/, where 0.4.0 keeps them. Run by check-update.sh.

Before 0.4.0 your files sat among the template's: TOOLS in tools/__init__.py,
your tool modules in tools/, prompt.py, tools/mcp_servers.py, and the tests
of the sample tools in tests/. `copier update` never renders your files, so
it cannot move them; this script does, once, and finds nothing to do after:

- Each of them moves into yours/ (tools into yours/tools/), in place of the
  skeleton copier has just created there, and the four sample tests move
  into tests/yours/. Every other file in tools/ that the template does not
  own moves into yours/tools/ too.
- Their relative imports become absolute (`from ..interrupt_names import`
  becomes `from <package>.interrupt_names import`), and every import of a
  moved module, anywhere in the project, names its new place.
- A TOOLS list of bare tools, with FILES_FROM beside it and policy.py
  (projects generated before 0.2.0), becomes one Row per tool, with the
  decision policy.py gave it; then FILES_FROM and policy.py go.

A file in yours/ that is already committed is never overwritten: the script
names it, leaves the old file where it is, and exits 1.
"""

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

# The files of tools/ that the template owns; everything else there was yours.
TEMPLATE_TOOLS = {"registry.py", "lazy.py", "left_out.py", "prebuilt.py", "mcp.py", "call_memo.py"}
SAMPLE_TESTS = ("test_ask_human.py", "test_approval.py", "test_files.py", "test_report.py")
SKELETON = {
    "__init__.py", "tools/__init__.py", "prompt.py", "mcp_servers.py", "model_options.py",
    "model_prices.py",
}  # fmt: skip
NOT_CODE = {"__pycache__", ".venv", ".git", "node_modules"}

ROWS_DOCSTRING = '''"""The agent's tools: one row each. Add a tool here, in one line.

A row names the tool, whether the gate asks a human before each call (ASK)
or lets it run (ALLOW: harmless, or it asks for itself), and whether the
files it returns are uploaded to the Slack thread. Like all of yours/, this
file is yours: `copier update` leaves it alone.
"""'''


def main(root: Path) -> int:
    package = package_name(root)
    if package is None or not (root / "app" / package).is_dir():
        return 0
    migration = Migration(root, package)
    if migration.conflicts:
        for old, new in migration.conflicts:
            print(f"kept {old}: {new} is committed already; merge the two by hand", file=sys.stderr)
        return 1
    migration.run()
    return 0


def package_name(root: Path) -> str | None:
    answers = root / ".copier-answers.yml"
    if not answers.is_file():
        return None
    found = re.search(r"^package_name: *['\"]?(\w+)", answers.read_text(), re.MULTILINE)
    return found.group(1) if found else None


class Migration:
    """What moves where, and the module names that change with it."""

    def __init__(self, root: Path, package: str) -> None:
        self.root = root
        self.package = package
        self.code = root / "app" / package
        self.yours = self.code / "yours"
        self.moves: list[tuple[Path, Path, str]] = []  # old path, new path, old module name
        self.conflicts: list[tuple[Path, Path]] = []
        self.modules: dict[str, str] = {}  # old module (or package) name -> new one
        tools = self.code / "tools"
        init = tools / "__init__.py"
        if init.is_file() and re.search(r"^TOOLS\b", init.read_text(), re.MULTILINE):
            self.move(init, self.yours / "tools" / "__init__.py", "tools", "yours.tools")
        self.move(self.code / "prompt.py", self.yours / "prompt.py", "prompt", "yours.prompt")
        mcp_servers = tools / "mcp_servers.py"
        self.move(
            mcp_servers, self.yours / "mcp_servers.py", "tools.mcp_servers", "yours.mcp_servers"
        )
        for path in sorted(tools.iterdir()) if tools.is_dir() else ():
            if (
                path.name in TEMPLATE_TOOLS | NOT_CODE | {"__init__.py", "mcp_servers.py"}
                or path.suffix in (".rej", ".orig")
                or path.name.startswith(".")
            ):
                continue
            if path.suffix == ".py" or path.is_dir():  # a module or a package
                name = path.stem if path.suffix == ".py" else path.name
                self.move(
                    path, self.yours / "tools" / path.name, f"tools.{name}", f"yours.tools.{name}"
                )
            else:  # a file a tool reads, say
                self.move(path, self.yours / "tools" / path.name)
        for name in SAMPLE_TESTS:
            self.move(self.root / "tests" / name, self.root / "tests" / "yours" / name)

    def move(self, old: Path, new: Path, old_module: str = "", new_module: str = "") -> None:
        if not old.exists():
            return
        if new.exists() and self.committed(new):
            self.conflicts.append((old.relative_to(self.root), new.relative_to(self.root)))
            return
        self.moves.append((old, new, f"{self.package}.{old_module}" if old_module else ""))
        if old_module:
            self.modules[f"{self.package}.{old_module}"] = f"{self.package}.{new_module}"

    def committed(self, path: Path) -> bool:
        """Whether the last commit has the file (copier has just created the skeleton)."""
        relative = path.relative_to(self.root).as_posix()
        listed = subprocess.run(
            ["git", "ls-tree", "--name-only", "HEAD", "--", relative],
            cwd=self.root,
            capture_output=True,
            text=True,
        )
        if listed.returncode == 0:
            return bool(listed.stdout.strip())
        skeleton = path.is_relative_to(self.yours) and path.relative_to(self.yours).as_posix()
        return skeleton not in SKELETON  # no git to ask: only the skeleton gives way

    def run(self) -> None:
        if not self.moves:
            return
        moved: dict[Path, str] = {}  # the new path of each moved module -> its old name
        for old, new, module in self.moves:
            if new.is_dir():
                shutil.rmtree(new)
            new.parent.mkdir(parents=True, exist_ok=True)
            old.replace(new)
            print(f"moved {old.relative_to(self.root)} -> {new.relative_to(self.root)}")
            if module and new.is_dir():
                for path in new.rglob("*.py"):
                    inner = ".".join(path.relative_to(new).with_suffix("").parts)
                    moved[path] = f"{module}.{inner}".removesuffix(".__init__")
            elif module:
                moved[new] = module
        rows = self.yours / "tools" / "__init__.py"
        policy = self.code / "policy.py"
        if rows in moved:
            rows.write_text(Rows(self, rows.read_text(), policy).rewritten())
            if policy.is_file():
                policy.unlink()
                print(f"deleted {policy.relative_to(self.root)}: its decisions are in the rows")
        for path in self.python_files():
            text = path.read_text()
            rewritten = Imports(self, path, text, moved.get(path)).rewritten()
            if rewritten != text:
                path.write_text(rewritten)

    def python_files(self) -> list[Path]:
        return sorted(
            path
            for path in self.root.rglob("*.py")
            if not NOT_CODE & set(path.relative_to(self.root).parts)
            and not path.relative_to(self.root).parts[0].startswith(".")
        )

    def new_name(self, module: str) -> str:
        """Where a module is now: its new name if it moved, else the same."""
        for old, new in self.modules.items():
            if module == old or (module.startswith(old + ".") and old != f"{self.package}.tools"):
                return new + module[len(old) :]
        if module == f"{self.package}.policy":
            return f"{self.package}.tools.registry"  # ASK and ALLOW; the rows hold the rest
        return module


class Imports:
    """One file's imports, pointed at the modules' new places; a moved file's made absolute."""

    def __init__(self, migration: Migration, path: Path, text: str, old_module: str | None):
        self.migration = migration
        self.text = text
        self.moved = old_module is not None
        # The name relative imports are resolved against: where the file was.
        self.module = old_module or self.current_module(path)
        self.is_package = path.name == "__init__.py"

    def current_module(self, path: Path) -> str | None:
        app = self.migration.code.parent
        if not path.is_relative_to(app):
            return None
        return ".".join(path.relative_to(app).with_suffix("").parts).removesuffix(".__init__")

    def rewritten(self) -> str:
        try:
            tree = ast.parse(self.text)
        except SyntaxError:
            return self.text
        edits = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                replacement = self.import_from(node)
                if replacement is not None:
                    edits[node] = replacement
        text = self.dotted_names(apply(self.text, edits))
        return text if text == self.text else sort_first_party_imports(text, self.migration.package)

    def import_from(self, node: ast.ImportFrom) -> str | None:
        package = self.migration.package
        if node.level:
            if self.module is None:
                return None
            base = self.module if self.is_package else self.module.rpartition(".")[0]
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            module = f"{base}.{node.module}" if node.module else base
        elif node.module == package or (node.module or "").startswith(package + "."):
            module = node.module
        else:
            return None
        statement = ast.get_source_segment(self.text, node) or ""
        if module == f"{package}.tools":
            return self.tools_import(node)
        new = self.migration.new_name(module)
        if new == module and not (node.level and self.moved):
            return None
        return re.sub(r"^from\s+[.\w]+", f"from {new}", statement, count=1)

    def tools_import(self, node: ast.ImportFrom) -> str | None:
        """From the tools package: the template's modules stay there; TOOLS and your tools moved."""
        package = self.migration.package
        stay = [alias for alias in node.names if f"{alias.name}.py" in TEMPLATE_TOOLS]
        move = [alias for alias in node.names if alias not in stay]
        if not move and not (node.level and self.moved):
            return None
        lines = []
        for module, names in ((f"{package}.tools", stay), (f"{package}.yours.tools", move)):
            if names:
                listed = ", ".join(
                    alias.name + (f" as {alias.asname}" if alias.asname else "") for alias in names
                )
                lines.append(f"from {module} import {listed}")
        return "\n".join(lines)

    def dotted_names(self, text: str) -> str:
        """Moved modules named elsewhere: `import` lines, mock.patch targets."""
        for old, new in self.migration.modules.items():
            if old != f"{self.migration.package}.tools":  # the template's tools/ stays
                text = re.sub(rf"(?<![\w.]){re.escape(old)}(?!\w)", new, text)
        return text


class Rows:
    """A TOOLS list of bare tools (0.1.0, 0.2.0) rewritten as one Row per tool."""

    def __init__(self, migration: Migration, text: str, policy: Path) -> None:
        self.text = text
        settings = (migration.code / "settings.py").read_text()
        gated = re.search(r"^GATE_UNLISTED_TOOLS = (True|False)", settings, re.MULTILINE)
        self.answered = "ALLOW" if gated and gated.group(1) == "False" else "ASK"
        self.unlisted = self.answered
        self.policy: dict[str, str] = {}
        if policy.is_file():
            for node in ast.parse(policy.read_text()).body:
                target = node.targets[0] if isinstance(node, ast.Assign) else None
                if (
                    isinstance(target, ast.Name)
                    and target.id == "UNLISTED"
                    and decision(node.value)
                ):
                    self.unlisted = decision(node.value)
                if isinstance(target, ast.Name) and target.id == "POLICY":
                    for key, value in zip(node.value.keys, node.value.values, strict=True):
                        if isinstance(key, ast.Constant) and decision(value):
                            self.policy[key.value] = decision(value)

    def rewritten(self) -> str:
        tree = ast.parse(self.text)
        assigned = {
            node.targets[0].id: node
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
        }
        tools, files = assigned.get("TOOLS"), assigned.get("FILES_FROM")
        if tools is None or not isinstance(tools.value, ast.List):
            return self.text
        uploads = {e.value for e in getattr(files and files.value, "elts", ()) if is_text(e)}
        edits: dict[ast.AST, str] = {}
        needed = set()
        for element in tools.value.elts:
            if isinstance(element, ast.Starred):
                if getattr(element.value, "id", "") == "PREBUILT_TOOLS":
                    edits[element] = "*PREBUILT"
                continue
            if isinstance(element, ast.Call) and getattr(element.func, "id", "") == "Row":
                continue
            name = bare_tool_name(element)
            gate = self.policy.get(name, self.unlisted)
            upload = ", files_to_thread=True" if name in uploads else ""
            edits[element] = f"Row({ast.get_source_segment(self.text, element)}, {gate}{upload})"
            needed |= {gate, "Row"}
            told = "from policy.py" if name in self.policy else "unlisted"
            print(f"  {name}: Row(..., {gate}{upload}), {told}")
        if not edits and files is None:
            return self.text
        self.warn_about_what_rows_cannot_hold(tools.value)
        if files is not None:
            edits[files] = ""
        relative = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.level == 1]
        registry = next((n for n in relative if n.module == "registry"), None)
        for node in relative:
            if node.module == "prebuilt":
                edits[node] = self.prebuilt_import(node)
        if registry is not None:
            names = {alias.name for alias in registry.names} | needed
            edits[registry] = f"from .registry import {', '.join(sorted(names, key=member_order))}"
        elif needed and relative:
            first = relative[0]
            line = f"from .registry import {', '.join(sorted(needed, key=member_order))}"
            existing = edits.get(first, ast.get_source_segment(self.text, first))
            edits[first] = f"{line}\n{existing}" if existing else line
        docstring = ast.get_docstring(tree)
        if docstring and ("policy.py" in docstring or "FILES_FROM" in docstring):
            edits[tree.body[0]] = ROWS_DOCSTRING
        text = apply(self.text, edits)
        return re.sub(r"\n{4,}", "\n\n\n", text).rstrip("\n") + "\n"

    def prebuilt_import(self, node: ast.ImportFrom) -> str:
        names = {alias.name for alias in node.names}
        if "PREBUILT_TOOLS" in names:
            names.add("PREBUILT")
        names -= {"PREBUILT_TOOLS", "PREBUILT_FILES_FROM", "PREBUILT_POLICY"}
        return f"from .prebuilt import {', '.join(sorted(names))}" if names else ""

    def warn_about_what_rows_cannot_hold(self, tools: ast.List) -> None:
        listed = {bare_tool_name(e) for e in tools.elts if not isinstance(e, ast.Starred)}
        for name, gate in sorted(self.policy.items()):
            if name not in listed and gate != self.unlisted:
                print(
                    f"  policy.py said {gate} for {name}, which is not in TOOLS; for an MCP "
                    "tool, say it in yours/mcp_servers.py's MCP_DECISIONS",
                    file=sys.stderr,
                )
        if self.unlisted != self.answered:
            print(
                f"  policy.py gave tools without a row {self.unlisted}; they now get the "
                f"gate_unlisted_tools answer, {self.answered}: change it with "
                f"copier update --data gate_unlisted_tools={self.unlisted == 'ASK'}",
                file=sys.stderr,
            )


def decision(node: ast.expr) -> str | None:
    value = node.id if isinstance(node, ast.Name) else getattr(node, "value", None)
    return {"ASK": "ASK", "ask": "ASK", "ALLOW": "ALLOW", "allow": "ALLOW"}.get(value)


def is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def bare_tool_name(node: ast.expr) -> str:
    """The name a bare entry of TOOLS has: its variable, or LazyTool's first argument."""
    if isinstance(node, ast.Call) and node.args and is_text(node.args[0]):
        return node.args[0].value
    if isinstance(node, ast.Attribute):
        return node.attr
    return getattr(node, "id", ast.unparse(node))


def member_order(name: str) -> tuple[int, str]:
    """The order ruff sorts imported names in: CONSTANTS, Classes, then the rest."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def apply(text: str, edits: dict[ast.AST, str]) -> str:
    """Replace each node's source with its new text; an empty text removes the line."""
    starts = [0]
    for line in text.encode().splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    data = text.encode()
    order = sorted(edits.items(), key=lambda edit: (edit[0].lineno, edit[0].col_offset))
    for node, new in reversed(order):
        start = starts[node.lineno - 1] + node.col_offset
        end = starts[node.end_lineno - 1] + node.end_col_offset
        if not new and data[end : end + 1] == b"\n":
            end += 1
        data = data[:start] + new.encode() + data[end:]
    return data.decode()


def sort_first_party_imports(text: str, package: str) -> str:
    """Sort each top-level run of `from <package>... import`, joining runs split by blank lines."""
    lines = text.splitlines(keepends=True)
    runs: list[list[ast.ImportFrom]] = [[]]
    for node in ast.parse(text).body:
        module = getattr(node, "module", None) or ""
        if not (
            isinstance(node, ast.ImportFrom)
            and not node.level
            and (module == package or module.startswith(package + "."))
        ):
            runs.append([])
            continue
        last = runs[-1][-1] if runs[-1] else None
        if last and any(line.strip() for line in lines[last.end_lineno : node.lineno - 1]):
            runs.append([])  # a comment between them
        if last and last.end_lineno >= node.lineno:
            runs.append([])  # two statements on one line
        runs[-1].append(node)
    for run in reversed([run for run in runs if len(run) > 1]):
        ordered = sorted(run, key=lambda node: node.module.lower())
        pieces = ["".join(lines[node.lineno - 1 : node.end_lineno]) for node in ordered]
        lines[run[0].lineno - 1 : run[-1].end_lineno] = pieces
    return "".join(lines)


if __name__ == "__main__":
    sys.exit(main(Path.cwd()))
