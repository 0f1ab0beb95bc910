"""The path a table's config takes through the code, from the rule's command to the rendered file
(issue 55, acceptance 1): how many modules it passes through, and how often it climbs back up to a
module above the one that holds it. Figures, not a timed test.

What is counted. The table job runs ``ansel table --config <file> ...`` (the table rule); this runs
the same command (``ansel.cli.main``: the spec's parse, the runs' check, the kind's rendering) with the
rule's own config file (``logs/table/<paper>/<table>.config.json``, which the rule writes: build
the table through Snakemake first, so its inputs exist too), rendering to a temporary prefix, under
``sys.setprofile``. The roots are the parsed command line (the ``argparse.Namespace`` the verb is
called with) and what it holds (the config). A function of an ``ansel`` module is *called with the
config* when one of its arguments is a root, or an object derived from one: a dict, list, tuple,
set or dataclass instance held by a root (the config's ``paper_settings``) or returned by a call
with the config (the table's spec and its rows and columns, the cells a table lists), recursively;
runs (``Run``, ``Variant``: a run's identity, dataset, model and seed, which names files) and
collections of runs only are not followed, and neither are strings, numbers, DataFrames or arrays.
A dict built around such an object (``{**table, "question": q}``) carries it. The *caller* of such
a call is the nearest ``ansel`` frame below it (pandas or a comprehension may sit between).

Printed twice: with every derived object (the typed spec of ``ansel.specs`` included), and for
the raw config alone (dataclass instances not followed: the parsed spec is not the config).

- modules: the distinct ``ansel`` modules of those calls' functions, in order of first call;
- upward calls: those calls whose callee's module sits *above* the caller's module in the import
  layering: the callee's module imports the caller's, directly or through others (the import graph
  of ``tests/test_imports.py``: lazy imports inside functions count). A base class calling its
  subclass's method, or a lower module calling back into the one that called it, is such a call.
  Printed as every such call, as distinct (caller function, callee function) pairs, and as distinct
  (caller module, callee module) pairs;
- calls to a higher import level (level: 0 for a module importing no ansel module, else 1 + the
  highest level it imports): the same count where "above" is a higher level, related or not;
- climbs in the sequence: consecutive calls with the config where the second's module sits above
  the first's (the path returning up after a call into a lower module): every step and distinct
  (from, to) module pairs.

    python benchmarks/bench_config_path.py [PAPER/TABLE ...]   (default apnet/trecqa_cnn)
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
FOLLOWED = (dict, list, tuple, set, frozenset)


def import_graph() -> dict[str, set[str]]:
    """tests/test_imports.py's graph: module -> the ansel modules it imports (lazy imports too)."""
    spec = importlib.util.spec_from_file_location("_test_imports", ROOT / "tests" / "test_imports.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.import_graph()


def above(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """module -> the modules above it: those that import it, directly or transitively."""
    importers: dict[str, set[str]] = {m: set() for m in graph}
    for module, imports in graph.items():
        for imported in imports:
            importers[imported].add(module)
    closure = {}
    for module in graph:
        seen, todo = set(), [module]
        while todo:
            for nxt in importers[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        closure[module] = seen
    return closure


def levels(graph: dict[str, set[str]]) -> dict[str, int]:
    """module -> its import level: 0 where it imports no ansel module, else 1 + the highest level it imports."""
    found: dict[str, int] = {}

    def level(module: str) -> int:
        if module not in found:
            found[module] = 1 + max((level(m) for m in graph[module]), default=-1)
        return found[module]

    for module in graph:
        level(module)
    return found


class Tracer:
    """Records the calls of ansel functions with the config (the module docstring's definition)."""

    def __init__(self, typed: bool) -> None:
        from ansel.targets import Run, Variant

        self.typed = typed  # dataclass instances (the parsed spec) are followed
        self.skip = (Run, Variant)
        self.tainted: dict[int, object] = {}  # id -> object (held, so no id is reused)
        self.carrying: set[int] = set()  # frames of calls with the config, awaiting their return
        self.calls: list[tuple[str, str, str, str]] = []  # (caller module, caller fn, callee module, callee fn)

    def taint(self, obj, depth: int = 0) -> None:
        if depth > 8 or id(obj) in self.tainted or self.runs_only(obj):
            return
        if isinstance(obj, argparse.Namespace):
            children = list(vars(obj).values())
        elif isinstance(obj, dict):
            children = list(obj.values())
        elif isinstance(obj, FOLLOWED[1:]):
            children = list(obj)
        elif self.typed and dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            children = [getattr(obj, f.name) for f in dataclasses.fields(obj)]
        else:
            return
        self.tainted[id(obj)] = obj
        for child in children:
            self.taint(child, depth + 1)

    def runs_only(self, obj) -> bool:
        """A run, or a non-empty collection of runs only (what a table's runs are: files, not settings)."""
        if isinstance(obj, FOLLOWED[1:]) and obj:
            return all(isinstance(o, self.skip) for o in obj)
        return isinstance(obj, self.skip)

    def carries(self, value) -> bool:
        if id(value) in self.tainted:
            return True
        if isinstance(value, dict):  # a dict built around a spec, e.g. {**table, "question": q}
            return any(id(v) in self.tainted for v in value.values())
        return False

    def __call__(self, frame, event, arg) -> None:
        module = frame.f_globals.get("__name__", "")
        if event == "return" and id(frame) in self.carrying:
            self.carrying.discard(id(frame))
            self.taint(arg)
            return
        if event != "call" or not module.startswith("ansel"):
            return
        code = frame.f_code
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        values = [frame.f_locals.get(n) for n in names]
        for v in values:
            if isinstance(v, argparse.Namespace):  # the rule's command line, parsed: the root
                self.taint(v)
        if not any(self.carries(v) for v in values):
            return
        self.carrying.add(id(frame))
        caller = frame.f_back
        while caller is not None and not caller.f_globals.get("__name__", "").startswith("ansel"):
            caller = caller.f_back
        if caller is not None:
            self.calls.append((caller.f_globals["__name__"], caller.f_code.co_name, module, code.co_name))
        else:
            self.calls.append(("", "", module, code.co_name))


def measure(paper: str, table: str, typed: bool) -> Tracer:
    from ansel import cli

    config = ROOT / "logs" / "table" / paper / f"{table}.config.json"
    if not config.exists():
        sys.exit(f"{config}: no config of the table's job; build results/tables/{paper}/{table}.md first")
    from ansel.report import notes  # noqa: F401 (imported before tracing: import time is no path)
    from ansel.specs import parse_table
    from ansel.table_kinds import kind_of

    spec = yaml.safe_load((ROOT / "workflow" / "papers" / f"{paper}.yaml").read_text())
    raw = next(t for t in spec["tables"] if t["id"] == table)  # parsed uncached: the traced run parses it again
    published = (ROOT / kind_of(parse_table(json.loads(config.read_text()), paper, raw)).published).as_posix()
    tracer = Tracer(typed)
    with tempfile.TemporaryDirectory() as tmp:
        argv = ["table", "--config", str(config), "--paper", paper, "--table", table]
        argv += ["--published", published, "--out-prefix", f"{tmp}/{table}"]
        sys.setprofile(tracer)
        try:
            cli.main(argv)
        finally:
            sys.setprofile(None)
    return tracer


def report(name: str, tracer: Tracer, graph: dict[str, set[str]], layers: dict[str, set[str]]) -> None:
    modules = list(dict.fromkeys(m for _, _, m, _ in tracer.calls))
    up = [c for c in tracer.calls if c[0] and c[2] in layers.get(c[0], set())]
    print(f"{name}: {len(tracer.calls)} calls with the config, through {len(modules)} modules")
    for m in modules:
        print(f"  {m}")
    pairs = Counter((a, af, b, bf) for a, af, b, bf in up)
    print(
        f"  upward calls (callee's module imports the caller's): {len(up)} calls, "
        f"{len(pairs)} distinct (caller, callee) functions, {len({(a, b) for a, _, b, _ in up})} distinct module pairs"
    )
    for (a, af, b, bf), n in sorted(pairs.items()):
        print(f"    {a}.{af} -> {b}.{bf}  x{n}")
    level = levels(graph)
    by_level = [c for c in tracer.calls if c[0] and level.get(c[2], 0) > level.get(c[0], 0)]
    print(
        f"  calls to a module on a higher import level (level = 1 + the highest of what it imports): "
        f"{len(by_level)} calls, {len({(a, af, b, bf) for a, af, b, bf in by_level})} distinct (caller, callee) "
        f"functions, {len({(a, b) for a, _, b, _ in by_level})} distinct module pairs"
    )
    sequence = [m for _, _, m, _ in tracer.calls]
    steps = [(a, b) for a, b in zip(sequence, sequence[1:]) if b in layers.get(a, set())]
    print(
        f"  climbs in the sequence (a call's module above the previous call's): {len(steps)} steps, "
        f"{len(set(steps))} distinct module pairs"
    )
    for (a, b), n in sorted(Counter(steps).items()):
        print(f"    {a} -> {b}  x{n}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tables", nargs="*", default=["apnet/trecqa_cnn"], help="PAPER/TABLE, built through Snakemake")
    a = p.parse_args()
    graph = import_graph()
    layers = above(graph)
    for item in a.tables:
        paper, table = item.split("/")
        for typed, what in ((True, "the config and the spec parsed from it"), (False, "the raw config alone")):
            report(f"{item}, {what}", measure(paper, table, typed), graph, layers)


if __name__ == "__main__":
    main()
