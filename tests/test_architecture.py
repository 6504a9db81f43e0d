"""The architecture's limits, counted from the tree itself (``ast``, no import of the modules checked):

- no module of the package over 600 lines;
- no import circle anywhere, inside a folder too: the graph of every ``import`` / ``from ... import`` of
  a ctxeval module in src, at module level and inside functions (those under ``if TYPE_CHECKING:`` are
  not run, and left out), a package's ``__init__`` counted as the package; ``from pkg import name``
  points at ``pkg.name`` when that is a module, at ``pkg`` otherwise;
- imports inside functions only for what is listed below with its reason: a third-party module that is
  an optional extra or heavy to import (:data:`LAZY_THIRD_PARTY`), an internal module kept out of
  ``import ctxeval``, the CLI's start or a small run (:data:`LAZY_INTERNAL`); never the standard library;
- no public verb (a function in ``ctxeval.__all__``) over 12 parameters.

The lists only shrink: an entry nothing uses any more fails the test until it is removed. The
checkers are themselves tested on a planted package (``test_the_checks_find_planted_offenders``)."""

from __future__ import annotations

import ast
import inspect
import sys
from collections import deque
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

import ctxeval

PACKAGE = Path(ctxeval.__file__).resolve().parent
MAX_LINES = 600
MAX_PARAMS = 12

#: modules over MAX_LINES today (path under src/ctxeval -> why; remove the entry once it is split)
LONG_MODULES: dict[str, str] = {}

#: public verbs over MAX_PARAMS today (name -> why; remove the entry once it takes settings objects)
LONG_VERBS: dict[str, str] = {}

#: third-party modules imported inside functions (top-level name -> why not at the module's top)
LAZY_THIRD_PARTY: dict[str, str] = {
    "pyspark": "the spark extra; imported when the Spark engine runs",
    "pyarrow": "the pandas / spark extras; the Spark engine's Arrow batches",
    "pandas": "the pandas extra; to_pandas() and the notebook display",
    "matplotlib": "the report extra; the HTML report's plots",
    "httpx": "the judge extra; the LLM judge's client",
    "certifi": "comes with httpx (the judge extra); the client's CA bundle",
    "langchain_core": "the langchain extra; collect / chunking over a LangChain object",
    "llama_index": "the llamaindex extra; collect / chunking over a LlamaIndex object",
    "haystack": "the haystack extra; chunking over a Haystack splitter",
    "ragas": "an optional import: a RAGAS EvaluationDataset only when one is asked for",
    "ir_datasets": "the irds extra; irds:<id> inputs",
    "tiktoken": "optional; the tiktoken tokenizer only when a budget names it",
    "polars": "core, but ~150 ms to import: `import ctxeval`, the selector and small TREC runs go without it",
    "rich": "core, but ~40 ms to import: only the text renderers and the progress bar draw with it",
    "rapidfuzz": "core, but only text similarity (the similarity measures, near-name hints) and location use it",
    "numpy": "core; _native.status() (`ctxeval --version`) reads no array and goes without it",
}

#: internal modules imported inside functions: (importer, imported module) as fnmatch patterns -> why not at
#: the importer's top (each a module that costs a small run, `import ctxeval` or the CLI's start several ms)
LAZY_INTERNAL: dict[tuple[str, str], str] = {
    ("ctxeval._cli*", "ctxeval.*"): "`ctxeval --help` imports every command module to list it, and each "
    "command's --help its own: a command loads its verb, renderers and readers when it runs (--help: 142 "
    "modules; 213 with them at the top)",
    ("ctxeval._context", "ctxeval._context.*"): "the providers register themselves on the first closure(): "
    "a run of classical measures builds no side data and loads none of them",
    ("*", "ctxeval._core.extras"): "the side data's values (~40 frozen dataclasses, ~15 ms): only runs that "
    "build side data load them",
    ("*", "ctxeval._context.utility"): "the utility provider (and what it reads): only runs with utility measures",
    ("*", "ctxeval._context.spans"): "chunk tables and span labels: only runs that read them",
    ("*", "ctxeval._context.pool"): "the pool provider: only runs that read a pool",
    ("*", "ctxeval._context.labels"): "judged-label notes: only runs of judged labels",
    ("*", "ctxeval._io.labels"): "the judged-label sidecar reader: only qrels with a sidecar",
    ("*", "ctxeval._io.subtopics"): "subtopic qrels: only the diversity measures",
    ("*", "ctxeval._io.fairness"): "fairness groups and targets: only AWRF",
    ("*", "ctxeval._io.side"): "the side files' readers (polars): only runs that name a side file",
    ("*", "ctxeval._io.samples*"): "the sample-set format (polars, ~35 ms): only sample sets",
    ("*", "ctxeval._io.irds"): "irds:<id> names: only when one is given",
    ("ctxeval._render.report", "ctxeval._render.html"): "the HTML report's modules: only to_html loads them "
    "(and tests stand a renderer in for html.render_html)",
    ("ctxeval._demo", "ctxeval._render.report"): "the demo's HTML section looks compare up when it runs "
    "(tests stand a stub in for report.compare)",
}


# --- the checkers (a root folder in, facts out) -------------------------------------------------------


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    line: int
    text: str
    in_function: bool
    top: str  # the imported top-level name (the package's own for relative imports)
    internal: bool  # an import of the package's own modules
    targets: tuple[str, ...]  # the ctxeval modules it names (empty for other packages)


def modules(root: Path, package: str = "ctxeval") -> dict[str, Path]:
    """Every module under ``root`` by its dotted name; a package's ``__init__`` is the package."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _statements(tree: ast.AST) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement with whether it sits inside a function, skipping ``if TYPE_CHECKING:``."""
    out: list[tuple[ast.Import | ast.ImportFrom, bool]] = []
    todo: deque[tuple[ast.AST, bool]] = deque([(tree, False)])
    while todo:
        node, in_function = todo.popleft()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                todo.extend((c, in_function) for c in child.orelse)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                out.append((child, in_function))
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            todo.append((child, inner))
    return sorted(out, key=lambda pair: pair[0].lineno)


def imports(root: Path, package: str = "ctxeval") -> list[Import]:
    found = modules(root, package)
    out = []
    for name, path in found.items():
        for node, in_function in _statements(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                top = node.names[0].name.split(".")[0]
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                    here = here[: len(here) - (node.level - 1)]
                    base = ".".join([*here, base] if base else here)
                top = base.split(".")[0]
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in found else base for a in node.names]
            internal = tuple(sorted({t for t in targets if t in found and t != name})) if top == package else ()
            out.append(Import(name, node.lineno, ast.unparse(node), in_function, top, top == package, internal))
    return out


def graph(found: list[Import], names: dict[str, Path]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {name: set() for name in names}
    for imp in found:
        edges[imp.module].update(imp.targets)
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One circle (a shortest path back to its first module) per strongly connected group of modules
    (Tarjan's algorithm, iterative), each group's members in the order of the circle, then the rest."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    out = []
    for group in sorted(groups):
        members, first = set(group), group[0]
        back: dict[str, str] = {first: first}
        queue, last = deque([first]), first
        while queue:  # breadth first inside the group: the shortest way back to `first`
            node = queue.popleft()
            if first in edges[node]:
                last = node
                break
            for nxt in sorted(edges[node] & members):
                if nxt not in back:
                    back[nxt] = node
                    queue.append(nxt)
        path = [last]
        while path[-1] != first:
            path.append(back[path[-1]])
        cycle = [*reversed(path), first]
        out.append(cycle + sorted(members - set(cycle)))
    return out


def _kind(imp: Import) -> str:
    if imp.internal:
        return "internal"
    if imp.top in sys.stdlib_module_names or imp.top == "__future__":
        return "stdlib"
    return "third-party"


def _in_functions(found: list[Import]) -> dict[str, list[Import]]:
    out: dict[str, list[Import]] = {"internal": [], "stdlib": [], "third-party": []}
    for imp in found:
        if imp.in_function:
            out[_kind(imp)].append(imp)
    return out


def _listed(importer: str, target: str) -> tuple[str, str] | None:
    """The first LAZY_INTERNAL entry allowing ``importer`` to import ``target`` inside a function."""
    return next((key for key in LAZY_INTERNAL if fnmatch(importer, key[0]) and fnmatch(target, key[1])), None)


def _where(imps: list[Import]) -> list[str]:
    return [f"{i.module}:{i.line}: {i.text}" for i in imps]


# --- the checks on the tree ---------------------------------------------------------------------------

_NAMES = modules(PACKAGE)
_FOUND = imports(PACKAGE)


def _circle(members: list[str]) -> str:
    cycle = members[: members.index(members[0], 1) + 1]
    rest = members[len(cycle) :]
    return " -> ".join(cycle) + (f" (in one group with {', '.join(rest)})" if rest else "")


def _lines(path: Path) -> int:
    with path.open("rb") as fh:
        return sum(1 for _ in fh)


def test_no_module_over_600_lines() -> None:
    sizes = {p.relative_to(PACKAGE).as_posix(): _lines(p) for p in sorted(PACKAGE.rglob("*.py"))}
    over = {name: n for name, n in sizes.items() if n > MAX_LINES and name not in LONG_MODULES}
    assert not over, f"modules over {MAX_LINES} lines (split them): {over}"
    shrunk = {name: sizes.get(name) for name in LONG_MODULES if sizes.get(name, 0) <= MAX_LINES}
    assert not shrunk, f"no longer over {MAX_LINES} lines (or gone): remove from LONG_MODULES: {shrunk}"


def test_no_import_circles() -> None:
    edges = graph(_FOUND, _NAMES)
    assert sum(map(len, edges.values())) > 500  # the check sees the imports
    found = circles(edges)
    assert not found, "import circles (move the shared piece down):\n" + "\n".join(_circle(c) for c in found)


def test_imports_inside_functions_are_listed() -> None:
    lazy = _in_functions(_FOUND)
    assert not lazy["stdlib"], "standard-library imports inside functions (move them to the top):\n" + "\n".join(
        _where(lazy["stdlib"])
    )
    unlisted = [i for i in lazy["third-party"] if i.top not in LAZY_THIRD_PARTY]
    assert not unlisted, "third-party imports inside functions, not in LAZY_THIRD_PARTY:\n" + "\n".join(
        _where(unlisted)
    )
    unlisted = [i for i in lazy["internal"] if not all(_listed(i.module, t) for t in i.targets)]
    assert not unlisted, "internal imports inside functions (move them to the top, or list them):\n" + "\n".join(
        _where(unlisted)
    )
    used = {i.top for i in lazy["third-party"]} | {_listed(i.module, t) for i in lazy["internal"] for t in i.targets}
    stale = sorted(map(str, (set(LAZY_THIRD_PARTY) | set(LAZY_INTERNAL)) - used))
    assert not stale, f"listed as imported inside functions, but no function does (remove them): {stale}"


def _verbs() -> dict[str, int]:
    out = {}
    for name in ctxeval.__all__:
        obj = getattr(ctxeval, name)
        if inspect.isfunction(obj):
            out[name] = len(inspect.signature(obj).parameters)
    return out


def test_no_public_verb_over_12_parameters() -> None:
    verbs = _verbs()
    assert "evaluate" in verbs and "compare" in verbs  # the check sees the verbs
    over = {name: n for name, n in verbs.items() if n > MAX_PARAMS and name not in LONG_VERBS}
    assert not over, f"public verbs over {MAX_PARAMS} parameters (group them in settings objects): {over}"
    shrunk = {name: verbs.get(name) for name in LONG_VERBS if verbs.get(name, 0) <= MAX_PARAMS}
    assert not shrunk, f"no longer over {MAX_PARAMS} parameters (or gone): remove from LONG_VERBS: {shrunk}"


def test_the_checks_find_planted_offenders(tmp_path: Path) -> None:
    """A planted package: a circle through a package's ``__init__`` and one inside a folder, an import
    under ``if TYPE_CHECKING:`` (no edge), one inside a function of each kind."""
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("from .sub import c\n")
    (root / "a.py").write_text("from .b import x\n")
    (root / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import d\n"
        "def f():\n    import json\n    import numpy\n    from . import a\n"
    )
    (root / "d.py").write_text("import pkg.b\n")
    (root / "sub" / "__init__.py").write_text("")
    (root / "sub" / "c.py").write_text("from pkg import sub\nfrom .. import a\n")
    names = modules(root, "pkg")
    found = imports(root, "pkg")
    edges = graph(found, names)
    assert edges == {
        "pkg": {"pkg.sub.c"},
        "pkg.a": {"pkg.b"},
        "pkg.b": {"pkg.a"},
        "pkg.d": {"pkg.b"},
        "pkg.sub": set(),
        "pkg.sub.c": {"pkg.sub", "pkg.a"},
    }
    assert circles(edges) == [["pkg.a", "pkg.b", "pkg.a"]]
    edges["pkg.sub"].add("pkg")  # a package's __init__ importing its parent, which imports a submodule
    assert circles(edges) == [["pkg", "pkg.sub.c", "pkg.sub", "pkg"], ["pkg.a", "pkg.b", "pkg.a"]]
    assert (
        _circle(circles(edges | {"pkg.a": {"pkg.b", "pkg.d"}})[1])
        == "pkg.a -> pkg.b -> pkg.a (in one group with pkg.d)"
    )
    lazy = {kind: [(i.module, i.text) for i in imps] for kind, imps in _in_functions(found).items()}
    assert lazy == {
        "internal": [("pkg.b", "from . import a")],
        "stdlib": [("pkg.b", "import json")],
        "third-party": [("pkg.b", "import numpy")],
    }
