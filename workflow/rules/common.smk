# Helpers of the rules: runs as records, per-rule resources, the code each stage runs.
import functools
import json
import math
import re
from pathlib import Path

from snakemake.exceptions import WorkflowError

from ansel import figure_kinds as FK
from ansel import table_kinds as K
from ansel.run_files import stored
from ansel.typos import typo_of

# Every run the preset's tables and figures read, by directory: a rule finds its run's record
# here from its output path, and never parses a name back into a config.
RUNS = {r.dir: r for r in P.paper_runs(C)}
# Each run's resolved config, computed (and checked: a sweep or grid point's value too) while the
# DAG is built; a refused value named by its source, as A.validate names it.
with A.naming_the_source(ORIGIN):
    RUN_CONFIGS = {d: r.config(C) for d, r in RUNS.items()}


def res(rule_name, key):
    return {**C["resources"]["default"], **C["resources"].get(rule_name, {})}[key]


def every_core(rule_name):
    """A timing job's threads: every core of a local run, so nothing runs beside it; on a cluster
    (no total of cores: each job its own allocation) the rule's own threads."""
    try:
        return workflow.cores
    except WorkflowError:
        return res(rule_name, "threads")


def package_code(package):
    """A stage's code as inputs: Snakemake's `code` trigger covers a rule's own command only, so
    an edit of the code a stage runs would otherwise leave its outputs stale."""
    return sorted(str(p) for p in Path("src/ansel", package).glob("*.py"))


def train_code(arch):
    """The digest of the code a run of ``arch`` trains with (its timings record the same)."""
    from ansel.code_digest import train_code_digest
    from ansel.models.registry import arch_module

    return train_code_digest(arch_module(arch))


def run_of(w):
    """The run record of a rule's `{dataset}/{model}/seed{seed}` wildcards."""
    path = T.run_dir(w.dataset, w.model, int(w.seed))
    if path not in RUNS:
        trained = sorted(r.seed for r in RUNS.values() if (r.dataset, r.variant.name) == (w.dataset, w.model))
        elsewhere = sorted({r.dataset for r in RUNS.values() if r.variant.name == w.model})
        hint = (
            f": the preset trains seeds {trained} of it"
            if trained
            else f": the preset trains {w.model} on {', '.join(elsewhere)} only; a pairing no table makes is "
            "trained by hand (`ansel train`, docs/running.md)"
            if elsewhere
            else typo_of(path, RUNS)
        )
        raise ValueError(f"{path}: not a run of the preset's tables or figures{hint} (see `snakemake -n all`)")
    return RUNS[path]


def device_mem_mb(w):
    """Device memory a train or evaluate job reserves (Snakemake resource ``gpu_mem_mb``): the
    run's peak measured by an earlier training on a GPU plus a quarter, else the preset's value.
    With ``--resources gpu_mem_mb=<the device's MB>``, Snakemake runs as many jobs at once as fit."""
    run = run_of(w)
    measured = T.measured_peak_mb(run)
    return math.ceil(measured * 1.25) if measured else res("train", "gpu_mem_mb")


def run_embeddings(run):
    """The embeddings file a run starts from, or None (random initialisation)."""
    return A.embeddings_file(RUN_CONFIGS[run.dir])


# the methods corpus_embeddings makes (a pattern matching nothing when no recipe is configured)
RECIPES_PATTERN = "|".join(map(re.escape, C.get("embeddings", {}).get("word2vec", {}))) or "(?!)"


def pretrained_file(w):
    """The input a pretrained vectors method reads (its source's download manifest, or a file of
    your own: embeddings.pretrained); word2vec needs none."""
    return [] if w.method == "word2vec" else A.pretrained_file(C, w.method)[1]


def source_fetch(source):
    """The fetch options of a source (refused unless the preset's datasets or vectors read it: A.configured);
    datasets sharing a source must agree on them (vectors take none)."""
    A.configured("source", source, A.preset_sources(C), C)
    options = {json.dumps(d.get("fetch", {}), sort_keys=True) for d in C["datasets"].values() if d["source"] == source}
    if not options:
        return "{}"
    if len(options) != 1:
        raise ValueError(f"datasets with source {source!r} have different `fetch` options: {sorted(options)}")
    return options.pop()


def built_table(paper, table_id):
    """A table's spec (K.spec_table), refused unless the preset builds it (P.check_built)."""
    table = K.spec_table(C, paper, table_id)
    P.check_built(C, "table", paper, table_id)
    return table


def built_figure(paper, figure_id):
    """A figure's spec (P.spec_figure), refused unless the preset builds it (P.check_built)."""
    spec = P.spec_figure(C, paper, figure_id)
    P.check_built(C, "figure", paper, figure_id)
    return spec


def table_inputs(w):
    """The files a table job reads (TableKind.inputs), each as it is stored: a record rendering in place
    holds its run files gzipped (ansel.run_files)."""
    table = built_table(w.paper, w.table)
    return [str(stored(f)) for f in K.kind_of(table).inputs(C, table)]


def figure_inputs(w):
    """The files a figure job reads (FigureKind.inputs), each as it is stored (table_inputs)."""
    spec = built_figure(w.paper, w.figure)
    return [str(stored(f)) for f in FK.kind_of(spec).inputs(C, spec)]


def table_cfg(w):
    """The slice of the config a table job reads (ansel.table_kinds: TableKind.job_config)."""
    table = built_table(w.paper, w.table)
    return json.dumps(K.kind_of(table).job_config(C, PAPERS, table))


def figure_cfg(w):
    """The slice of the config a figure job reads (ansel.figure_kinds: FigureKind.job_config)."""
    spec = built_figure(w.paper, w.figure)
    return json.dumps(FK.kind_of(spec).job_config(C, spec))


# params.yaml as written (preset: full): the papers' settings, which table notes compare runs against.
PAPERS = A.load(preset="full")


@functools.cache
def benchmark_configs(paper, table):
    """A table's step-times dataset and row configs (TableKind.benchmark_configs), resolved once."""
    spec = built_table(paper, table)
    return K.kind_of(spec).benchmark_configs(C, spec)
