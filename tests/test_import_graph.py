"""The import graph, read from the source (every import statement, those inside functions included): no import
cycle between any two of vistar's modules, nor between its packages; the contracts package imports none of them,
the device helpers only the contracts, features import neither metrics nor the engine, the engine imports neither
the judge layer nor the CLI. Plugins named in the registry's import list (strings resolved at run time) are not
edges: that list is how the engine finds them without depending on them."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "vistar"


def _module(path: Path) -> tuple[str, str]:
    """(dotted module name, the package its relative imports start from)."""
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def _imports(path: Path, source: str | None = None):
    """(line, module, names imported from it, whether it is `from . import names`) of every import statement."""
    package = _module(path)[1]
    source = path.read_text(encoding="utf-8") if source is None else source
    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield node.lineno, target, tuple(a.name for a in node.names), not node.module
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, a.name, (), False) for a in node.names)


def _targets(path: Path, source: str | None = None):
    """(line, module) of every import; `from . import x` also names x, a module of that package."""
    for line, target, names, bare in _imports(path, source):
        yield line, target
        if bare:
            yield from ((line, f"{target}.{name}") for name in names)


def _layer(module: str) -> str | None:
    """vistar.<package> (a top-level module such as vistar.ontology counts as its own layer)."""
    parts = module.split(".")
    return parts[1] if parts[0] == "vistar" and len(parts) > 1 else None


def package_edges() -> dict[tuple[str, str], list[str]]:
    edges: dict[tuple[str, str], list[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        src = _layer(_module(path)[0])
        for line, target in _targets(path):
            dst = _layer(target)
            if dst and src and dst != src:
                edges.setdefault((src, dst), []).append(f"{path.relative_to(ROOT.parent)}:{line}")
    return edges


def modules() -> dict[str, Path]:
    """Every module of vistar by dotted name (a package is its `__init__`)."""
    return {_module(path)[0]: path for path in sorted(ROOT.rglob("*.py"))}


def module_edges() -> dict[tuple[str, str], list[str]]:
    """(importer, imported module) -> where, between vistar's own modules. `from pkg import name` is an edge to the
    module `pkg.name` when there is one (a submodule), else to `pkg`; an import of a submodule is not counted as an
    import of its package's `__init__` (Python runs that first, but the package does not depend on the module)."""
    known = modules()
    edges: dict[tuple[str, str], list[str]] = {}
    for src, path in known.items():
        for line, target in _module_targets(path, known):
            if target != src:
                edges.setdefault((src, target), []).append(f"{path.relative_to(ROOT.parent)}:{line}")
    return edges


def _module_targets(path: Path, known, source: str | None = None):
    """(line, vistar module) of every import of one file (see `module_edges`)."""
    for line, base, names, _ in _imports(path, source):
        submodules = [f"{base}.{name}" for name in names if f"{base}.{name}" in known]
        yield from ((line, m) for m in submodules)
        if len(submodules) < len(names) or not names:
            while base and base not in known:
                base = base.rpartition(".")[0]
            if base:
                yield line, base


def cyclic_groups(edges) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan): each holds every module of a cycle."""
    graph: dict[str, list[str]] = {}
    for a, b in edges:
        graph.setdefault(a, []).append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
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

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


def _cycle(edges) -> list[str] | None:
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_walker_sees_lazy_and_relative_imports():
    """The walker itself: an import inside a function and a relative one are both edges."""
    probe = ROOT / "features" / "probe.py"
    code = "import numpy\nfrom . import ocr\ndef f():\n    from ..metrics import tr\n    import vistar.cli\n"
    assert sorted(_targets(probe, code)) == [(1, "numpy"), (2, "vistar.features"), (2, "vistar.features.ocr"),
                                             (4, "vistar.metrics"), (5, "vistar.cli")]
    assert ("features", "metrics") in {(_layer("vistar.features.probe"), _layer(t)) for _, t in _targets(probe, code)}


def test_no_cycle_between_packages():
    edges = package_edges()
    cycle = _cycle(edges)
    where = [f"{a} -> {b}: {edges[(a, b)][0]}" for a, b in zip(cycle, cycle[1:])] if cycle else []
    assert cycle is None, "import cycle: " + "; ".join(where)


def test_forbidden_layer_imports():
    edges = package_edges()
    forbidden = [(a, b) for a, b in edges if a == "api"]
    forbidden += [(a, b) for a, b in edges if a == "runtime" and b != "api"]
    forbidden += [e for e in [("features", "metrics"), ("features", "engine"), ("engine", "vlm"), ("engine", "cli")]
                  if e in edges]
    assert not forbidden, {e: edges[e] for e in forbidden}


def test_walker_resolves_modules_not_attributes():
    """`from . import ocr_steps` reaches the module, not the package's `__init__`; `from .ocr_steps import read_one`
    the module too (read_one is no module); `from ..api import OcrLine` the package."""
    probe = ROOT / "features" / "probe.py"
    code = "from . import ocr_steps\nfrom .ocr_steps import read_one\nfrom ..api import OcrLine\n"
    assert sorted(_module_targets(probe, modules(), code)) == [(1, "vistar.features.ocr_steps"),
                                                                (2, "vistar.features.ocr_steps"), (3, "vistar.api")]


def test_cycle_finder_finds_every_module_of_a_cycle():
    edges = {("a", "b"): [], ("b", "c"): [], ("c", "a"): [], ("c", "d"): [], ("d", "e"): [], ("e", "d"): [], ("f", "a"): []}
    assert cyclic_groups(edges) == [["a", "b", "c"], ["d", "e"]]
    assert cyclic_groups({("a", "b"): [], ("b", "c"): []}) == []


@pytest.mark.slow
def test_the_graph_covers_every_module():
    """Every .py file of vistar is a node, and each one's imports were read (a file that fails to parse fails here)."""
    known = modules()
    assert len(known) == len(list(ROOT.rglob("*.py")))
    importers = {a for a, _ in module_edges()}
    assert {"vistar.engine.runner", "vistar.features.ocr", "vistar.metrics.tr", "vistar.cli"} <= importers


def test_no_cycle_between_modules():
    edges = module_edges()
    groups = cyclic_groups(edges)
    where = {f"{a} -> {b}": places[0] for (a, b), places in edges.items() if any(a in g and b in g for g in groups)}
    assert not groups, f"import cycles: {groups}; edges inside them: {where}"
