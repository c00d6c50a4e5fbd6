"""The package's imports point one way: the contracts of pyproject.toml hold and no module imports
itself back through others (a cycle makes import order matter and hides which layer is which)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every group of modules that import each other, directly or through others (Tarjan)."""
    modules = sorted(graph.modules)
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(start: str) -> None:  # iterative: the package's chains are deeper than is safe to recurse
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        order[start] = low[start] = len(order)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in order:
                    order[target] = low[target] = len(order)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.find_modules_directly_imported_by(target)))))
                elif target in on_stack:
                    low[module] = min(low[module], order[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == order[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                if len(group) > 1:
                    cycles.append(sorted(group))

    for module in modules:
        if module not in order:
            visit(module)
    return cycles


def test_no_module_imports_itself_back_through_others() -> None:
    assert import_cycles(grimp.build_graph("oracleproto")) == []


def test_the_cycle_check_finds_two_and_three_module_cycles() -> None:
    graph = grimp.ImportGraph()
    edges = [("p.a", "p.b"), ("p.b", "p.a"), ("p.c", "p.d"), ("p.d", "p.e"), ("p.e", "p.c")]
    for importer, imported in edges:
        graph.add_import(importer=importer, imported=imported)
    graph.add_import(importer="p.f", imported="p.a")  # leads into a cycle without being in one
    assert sorted(import_cycles(graph)) == [["p.a", "p.b"], ["p.c", "p.d", "p.e"]]


def test_the_import_contracts_hold() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(lint_imports), "--no-cache"], check=False, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout
