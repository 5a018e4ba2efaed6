"""
The import graph of L{kubetwist}, read statically (every C{import} statement, also those inside
functions): no cycle between top-level packages, and each package imports only the layers
under it (../shared/DESIGN.md section 7).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

import kubetwist

ROOT = Path(kubetwist.__file__).parent

#: DESIGN.md section 7, top first: a package may import packages of a lower layer only.
LAYERS: list[set[str]] = [
    {"testing"},
    {"app", "tap", "__main__"},
    {"controlplane", "apiextensions", "aggregator", "extension"},
    {"server"},
    {"endpoints"},
    {"apis"},
    {"registry"},
    {"admission", "authentication", "authorization", "audit", "flowcontrol", "egress"},
    {"storage"},
    {"apimachinery", "cel"},
    {"runtime"},
]

#: Imports still going the wrong way, each to be removed by the work named (path relative to
#: the kubetwist package, imported package).  Empty now; nothing may be added here.
PENDING: dict[tuple[str, str], str] = {}


def _package(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "kubetwist" or len(parts) < 2:
        return None
    return parts[1]


@lru_cache(maxsize=1)
def import_edges() -> dict[tuple[str, str], set[str]]:
    """
    C{{(importing package, imported package): {file, ...}}} over every module of kubetwist
    (top-level modules such as C{tap} count as packages); read once per test run.
    """
    edges: dict[tuple[str, str], set[str]] = defaultdict(set)
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        module = ".".join(("kubetwist",) + rel.with_suffix("").parts)
        is_package = path.name == "__init__.py"
        if is_package:
            module = module.rsplit(".", 1)[0]
        source = _package(module)
        if source is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module.split(".")
                    if not is_package:
                        base = base[:-1]
                    base = base[:len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                targets = [target]
                if target == "kubetwist":
                    targets = [f"kubetwist.{a.name}" for a in node.names]
            for target in targets:
                imported = _package(target)
                if imported is not None and imported != source:
                    edges[(source, imported)].add(rel.as_posix())
    return edges


def _without_pending(edges: dict[tuple[str, str], set[str]]) -> dict[tuple[str, str], set[str]]:
    out = {}
    for (a, b), files in edges.items():
        rest = {f for f in files if (f, b) not in PENDING}
        if rest:
            out[(a, b)] = rest
    return out


def cycles(edges: dict[tuple[str, str], set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one package (Tarjan)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
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
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _layer(package: str) -> int:
    for i, layer in enumerate(LAYERS):
        if package in layer:
            return i
    raise KeyError(package)


class ImportGraphTests(SynchronousTestCase):
    def test_no_cycles_between_packages(self) -> None:
        """No two top-level packages import each other, directly or through others."""
        edges = _without_pending(import_edges())
        found = cycles(edges)
        detail = []
        for component in found:
            for (a, b), files in sorted(edges.items()):
                if a in component and b in component:
                    detail.append(f"{a} -> {b}: {', '.join(sorted(files))}")
        self.assertEqual(found, [], "\n".join(detail))

    def test_layers(self) -> None:
        """Every import goes down the layers of DESIGN.md section 7 (or stays in a layer)."""
        wrong = [f"{a} -> {b}: {', '.join(sorted(files))}"
                 for (a, b), files in sorted(_without_pending(import_edges()).items())
                 if _layer(b) < _layer(a)]
        self.assertEqual(wrong, [])

    def test_every_package_has_a_layer(self) -> None:
        """A new top-level package needs its place in L{LAYERS}."""
        packages = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()}
        packages |= {p.stem for p in ROOT.glob("*.py") if p.stem != "__init__"}
        self.assertEqual(packages - set().union(*LAYERS), set())

    def test_detects_a_cycle(self) -> None:
        """The cycle search finds a cycle through three packages, and only it."""
        edges = {("a", "b"): {"x"}, ("b", "c"): {"x"}, ("c", "a"): {"x"}, ("c", "d"): {"x"}}
        self.assertEqual(cycles(edges), [["a", "b", "c"]])
