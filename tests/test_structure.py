"""The package's structure rules (issue 21), read from the source with ``ast``:

(a) no policy name as a string literal in ``mrfq/`` outside ``mrfq/policies.py`` (the
    registry is the one place names are spelled; docstrings may mention them);
(b) no import circle among mrfq's modules (imports at module level and inside functions);
(c) no module above 450 lines, except the packet kernel;
(d) every import inside a function says why on its line or the line above (a comment);
    a run of consecutive imports shares the comment above its first line.

Each failure lists ``file:line`` so it can be found.
"""

import ast
import io
import subprocess
import sys
import tokenize
from functools import cache
from pathlib import Path

from mrfq import policies

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "mrfq"
MAX_LINES = 450
LONG_ALLOWED = {"mrfq/packet/kernel.py"}


def _modules() -> dict[str, Path]:
    """Dotted module name → file, for every module of the package."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


# --- (a) policy names only in the registry ---------------------------------------------------

def _string_statements(tree: ast.Module) -> set[int]:
    """ids of the string constants that are whole expression statements: docstrings (of
    the module, classes, functions) and attribute docstrings, which no code reads."""
    return {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)}


def test_no_policy_name_literal_outside_the_registry():
    names = {p.name for kind in policies.KINDS for p in policies.entries(kind)}
    found = []
    for path in MODULES.values():
        if path == PACKAGE / "policies.py":
            continue
        tree = _tree(path)
        skip = _string_statements(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in skip and node.value in names):
                found.append((_where(path, node.lineno), node.col_offset, node.value))
    found = [f"{where}: {value!r}" for where, _, value in sorted(
        found, key=lambda f: (f[0].split(":")[0], int(f[0].split(":")[1]), f[1]))]
    assert not found, "policy names spelled outside mrfq/policies.py:\n" + "\n".join(found)


def test_the_literal_scan_sees_a_name_and_skips_a_docstring():
    tree = ast.parse('"""drf in a docstring"""\nx = {"bmf": 1}\n')
    skip = _string_statements(tree)
    seen = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and id(n) not in skip]
    assert seen == ["bmf"]


# --- (b) no import circle --------------------------------------------------------------------

def _imports(name: str, path: Path) -> list[tuple[str, int]]:
    """(imported mrfq module, line) of every import statement of a module, at any depth.

    ``from package import name`` imports the submodule ``package.name`` when there is one,
    otherwise the package itself. Importing a submodule also runs its parents'
    ``__init__``; those implied edges are left out (every package would be a circle
    with its own submodules)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    edges = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            edges += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                edges.append((full if full in MODULES else base, node.lineno))
    return [(target, line) for target, line in edges if target in MODULES and target != name]


def _import_graph() -> dict[str, dict[str, int]]:
    """module → {imported module: first line}."""
    graph = {}
    for name, path in MODULES.items():
        targets: dict[str, int] = {}
        for target, line in _imports(name, path):
            targets.setdefault(target, line)
        graph[name] = targets
    return graph


def _circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle():
    graph = _import_graph()
    problems = []
    for component in _circles(graph):
        members = set(component)
        edges = [f"  {_where(MODULES[a], line)}: {a} imports {b}"
                 for a in component for b, line in sorted(graph[a].items()) if b in members]
        problems.append(" ↔ ".join(component) + "\n" + "\n".join(edges))
    assert not problems, "import circles:\n" + "\n".join(problems)


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1, "d": 1}, "d": {}}
    assert _circles(graph) == [["a", "b", "c"]]
    assert _circles({"a": {"b": 1}, "b": {}}) == []


# --- (c) module length -----------------------------------------------------------------------

def test_no_module_above_the_line_limit():
    long = []
    for path in MODULES.values():
        where = str(path.relative_to(ROOT))
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES and where not in LONG_ALLOWED:
            long.append(f"{where}: {lines} lines")
    assert not long, f"modules above {MAX_LINES} lines:\n" + "\n".join(long)


# --- (d) imports inside functions say why ----------------------------------------------------

def _comment_lines(source: str) -> set[int]:
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {token.start[0] for token in tokens if token.type == tokenize.COMMENT}


def _unexplained_imports(source: str) -> list[int]:
    """Lines of the imports inside a function with no comment on their lines or on the
    line above; an import directly below another import of the same function shares the
    comment of the first of the run."""
    tree = ast.parse(source)
    parents = _parents(tree)
    comments = _comment_lines(source)
    imports = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            parent = parents[node]
            while parent is not None and not isinstance(
                    parent, ast.FunctionDef | ast.AsyncFunctionDef):
                parent = parents.get(parent)
            if parent is not None:
                imports.append(node)
    starts = {node.lineno: node for node in imports}
    bad = []
    for node in sorted(imports, key=lambda n: n.lineno):
        first = node
        while first.lineno - 1 in {n.end_lineno for n in starts.values()}:
            first = next(n for n in starts.values() if n.end_lineno == first.lineno - 1)
        lines = set(range(node.lineno, node.end_lineno + 1)) | {first.lineno - 1}
        if not lines & comments:
            bad.append(node.lineno)
    return bad


def test_imports_inside_functions_say_why():
    bad = []
    for path in MODULES.values():
        bad += [_where(path, line) for line in _unexplained_imports(path.read_text())]
    assert not bad, "imports inside a function without a comment saying why:\n" + \
        "\n".join(bad)


def test_the_import_comment_check():
    source = ("import os  # top level: not checked\n"
              "def f():\n"
              "    # the reason\n"
              "    import a\n"
              "    import b\n"
              "\n"
              "    import c\n"
              "    import d  # its own reason\n"
              "    from e import (\n"
              "        g)\n")
    assert _unexplained_imports(source) == [7, 9]  # e shares c's (missing) comment


# --- (e) one direction: nothing lower imports anything higher --------------------------------

#: the layers of the house, lowest first (README "Layout"): a module may import its own
#: layer and the ones below. Fluid and packet are two realisations side by side: neither
#: imports the other (what a packet point needs from the fluid model, the kinds pass in).
LAYERS = (
    ("mrfq.errors", "mrfq.policies", "mrfq.seeds", "mrfq.io", "mrfq.fields", "mrfq.progress",
     "mrfq.workloads", "mrfq.arrivals", "mrfq.sizes", "mrfq.counts", "mrfq.explicit",
     "mrfq.intervals", "mrfq.executor", "mrfq.arguments"),
    ("mrfq.scenario",),
    ("mrfq.fluid", "mrfq.packet"),
    ("mrfq.stats", "mrfq.allocation", "mrfq.cluster"),
    ("mrfq.kinds",),
    ("mrfq.point_plan", "mrfq.sweeps", "mrfq.simulation", "mrfq.advisor", "mrfq.plan_text"),
    ("mrfq.validation", "mrfq.plots", "mrfq.plot_cluster", "mrfq.plot_network",
     "mrfq.plot_flows"),
    ("mrfq.table_warnings", "mrfq.pipeline", "mrfq.api"),
    ("mrfq.cli", "mrfq.console", "mrfq.__main__", "mrfq"),
)
SIBLINGS = {"mrfq.fluid": "mrfq.packet", "mrfq.packet": "mrfq.fluid"}


def _layer(module: str) -> tuple[int, str]:
    """(layer index, the layer entry that holds it) of a module: the longest prefix."""
    best = None
    for i, layer in enumerate(LAYERS):
        for entry in layer:
            if module == entry or module.startswith(entry + "."):
                if best is None or len(entry) > len(best[1]):
                    best = (i, entry)
    assert best is not None, f"{module} is in no layer: add it to LAYERS (and the README)"
    return best


def test_no_module_imports_a_higher_layer():
    upward = []
    for name, path in MODULES.items():
        layer, entry = _layer(name)
        for target, line in _imports(name, path):
            target_layer, target_entry = _layer(target)
            if target_layer > layer or SIBLINGS.get(entry) == target_entry:
                upward.append(f"{_where(path, line)}: {name} (layer {layer}) imports "
                              f"{target} (layer {target_layer})")
    assert not upward, "imports against the direction:\n" + "\n".join(upward)


def test_the_layer_rule_sees_an_upward_import():
    assert _layer("mrfq.kinds.packet") == (4, "mrfq.kinds")
    assert _layer("mrfq.fluid.method")[0] < _layer("mrfq.sweeps")[0]
    assert SIBLINGS[_layer("mrfq.packet.engine")[1]] == _layer("mrfq.fluid.markov")[1]


def test_the_command_line_does_not_load_scipy_stats_at_start():
    """scipy.stats (0.3-0.6 s of import time) loads on first use, not with `mrfq` or its
    command line: `--help` and every refused input start without it."""
    probe = "import sys, mrfq.cli; print('scipy.stats' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False", result.stdout + result.stderr
