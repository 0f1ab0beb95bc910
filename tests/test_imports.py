"""The import graph of src/ansel: no circles, no trainer in the report, no torch where no model runs."""

import ast
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _module(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """module -> the ansel modules it imports anywhere (lazy imports inside functions too)."""
    modules = {_module(p): p for p in SRC.glob("ansel/**/*.py")}
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(
                        package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                    )
                # `from ansel.models import io` imports the module ansel.models.io
                edges |= {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names}
        graph[name] = {e for e in edges if e in modules and e != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in graph[todo.pop()] - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


def test_no_import_circle_anywhere_in_src():
    graph = import_graph()
    assert len(graph) > 40 and "ansel.training.trainer" in graph
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c", "a"]]


def test_nothing_in_report_reaches_the_trainer():
    graph = import_graph()
    for module in (m for m in graph if m.startswith("ansel.report")):
        assert not {"ansel.training.trainer", "ansel.training.sampler"} & reachable(graph, module), module


def test_commands_that_run_no_model_do_not_import_torch():
    modules = [
        "ansel.cli",
        "ansel.commands",
        "ansel.data.download",
        "ansel.data.preprocess",
        "ansel.data.registry",
        "ansel.embeddings",
        "ansel.report.tables",
        "ansel.report.figures",
        "ansel.report.notes",
        "ansel.targets",
        "ansel.config",
        "ansel.training.config",
        "ansel.evaluation.config",
        "ansel.models.registry",
    ]
    code = f"import sys; {'; '.join(f'import {m}' for m in modules)}; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_scoring_and_negative_sampling_do_not_import_pandas():
    """pandas (and the pyarrow it loads: ~60 MB resident) reads datasets; a process that scores or
    trains on id matrices it already holds does without it."""
    modules = ["ansel.data.batches", "ansel.evaluation.scoring", "ansel.training.sampler", "ansel.models.base"]
    code = f"import sys; {'; '.join(f'import {m}' for m in modules)}; print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
