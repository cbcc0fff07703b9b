"""The package layering, read from the source (every import statement, those inside functions included):
no import cycle between vistar's packages, the contracts package imports none of them, features do not import
metrics, the engine imports neither the judge layer nor the CLI. Plugins named in the registry's import list
(strings resolved at run time) are not edges: that list is how the engine finds them without depending on them."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "vistar"


def _module(path: Path) -> tuple[str, str]:
    """(dotted module name, the package its relative imports start from)."""
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def _targets(path: Path, source: str | None = None):
    package = _module(path)[1]
    source = path.read_text(encoding="utf-8") if source is None else source
    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield node.lineno, target
            if not node.module:  # `from . import x`: x is a module of that package
                yield from ((node.lineno, f"{target}.{a.name}") for a in node.names)
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names)


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
    forbidden += [e for e in [("features", "metrics"), ("engine", "vlm"), ("engine", "cli")] if e in edges]
    assert not forbidden, {e: edges[e] for e in forbidden}


def module_edges(package: str) -> dict[tuple[str, str], list[str]]:
    """Imports between the modules of one package (every module file, imports inside functions included).
    `from . import sibling` imports the sibling only: its package, which Python imports before the importing
    module anyway, is an edge only when the statement takes a name defined in it (`from . import PROTOCOLS`)."""
    folder = ROOT.parent.joinpath(*package.split("."))
    modules = {_module(path)[0] for path in folder.rglob("*.py")}
    edges: dict[tuple[str, str], list[str]] = {}
    for path in sorted(folder.rglob("*.py")):
        src = _module(path)[0]
        by_line: dict[int, set[str]] = {}
        for line, target in _targets(path):
            by_line.setdefault(line, set()).add(target)
        for line, targets in sorted(by_line.items()):
            for target in targets:
                names = {t for t in targets if t.startswith(target + ".")}
                siblings_only = src.startswith(target + ".") and names and names <= modules
                if target in modules and target != src and not siblings_only:
                    edges.setdefault((src, target), []).append(f"{path.relative_to(ROOT.parent)}:{line}")
    return edges


def test_no_cycle_between_the_judge_layer_modules():
    """vistar/vlm: no module imports one that (directly or through others) imports it back, lazily or not."""
    edges = module_edges("vistar.vlm")
    assert ("vistar.vlm.judge", "vistar.vlm.cache") in edges  # the walker sees this package's modules
    cycle = _cycle(edges)
    where = [f"{a} -> {b}: {edges[(a, b)][0]}" for a, b in zip(cycle, cycle[1:])] if cycle else []
    assert cycle is None, "import cycle: " + "; ".join(where)
