"""The suite's layout: a test module imports shared helpers from tests/support, never another test module (so any
test file runs, moves or is deselected alone), and every support module is used by some test (no dead helpers)."""
from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SUPPORT = TESTS / "support"


def imported_modules(tree: ast.AST, package: str = "tests") -> set[str]:
    """Dotted names of every module an import statement anywhere in TREE (a module of PACKAGE) may load:
    `from tests import a` names both `tests` and `tests.a`, as `a` may be a module."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def imports_of_test_modules(code: str, own_name: str) -> list[str]:
    """The test modules (`tests.test_*`) CODE imports, other than itself."""
    return sorted(m for m in imported_modules(ast.parse(code))
                  if m.startswith("tests.test_") and m.count(".") == 1 and m != own_name)


def strings_in(tree: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def test_the_import_check_sees_every_spelling_of_a_test_module_import():
    assert imports_of_test_modules("from tests.test_a import x", "tests.test_b") == ["tests.test_a"]
    assert imports_of_test_modules("def f():\n    from .test_a import x\n", "tests.test_b") == ["tests.test_a"]
    assert imports_of_test_modules("from tests import test_a, support", "tests.test_b") == ["tests.test_a"]
    assert imports_of_test_modules("import tests.test_a", "tests.test_b") == ["tests.test_a"]
    assert imports_of_test_modules("from tests.support.test_data import x\nfrom tests.support import run_inputs\n"
                                 "from .support.live_cli import scene\nimport tests.test_b", "tests.test_b") == []


def test_no_test_module_imports_another():
    offenders = {}
    for path in sorted(TESTS.glob("test_*.py")):
        found = imports_of_test_modules(path.read_text(encoding="utf-8"), f"tests.{path.stem}")
        if found:
            offenders[path.name] = found
    assert offenders == {}, f"move what these share into tests/support/: {offenders}"


def test_every_support_module_is_used_by_a_test():
    """Used: imported by a test module, or named in one as a module to run (`-m tests.support.x`, a registry entry
    `tests.support.x:NAME`) or as a file (`support/x.py`)."""
    imported, strings = set(), set()
    for path in TESTS.glob("test_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported |= imported_modules(tree)
        strings |= strings_in(tree)
    unused = []
    for path in sorted(SUPPORT.glob("*.py")):
        if path.stem == "__init__":
            continue
        dotted = f"tests.support.{path.stem}"
        named = any(s == dotted or s.startswith(dotted + ":") or s == path.name for s in strings)
        if dotted not in imported and not named:
            unused.append(path.name)
    assert unused == [], f"no test uses these support modules: {unused}"
