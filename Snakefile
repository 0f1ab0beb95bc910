# ansel: one DAG from raw data to every paper table and figure (see README.md).
from snakemake.utils import min_version

import sys
from pathlib import Path

from ansel import config as A
from ansel import forkserver
from ansel import paper_targets as P
from ansel import snakemake_wakeups
from ansel import targets as T

min_version("9.0")
# Snakemake's scheduler otherwise wakes hundreds of times a second by the DAG's end (see the module).
snakemake_wakeups.install()


A.read_yaml("params.yaml")  # a syntax error or a key given twice: named with its line before Snakemake reads it
for path in workflow.config_settings.configfiles:  # --configfile: Snakemake kept the last of two equal keys
    A.read_yaml(path)


configfile: "params.yaml"


# --configfile and --config values are already in `config` (nested --config scalars as strings):
# typed, then applied again over the preset so that they win.
S = workflow.config_settings
OVERRIDES = A.deep_merge(S.overwrite_config, A.typed_overrides(S.config))
config.update(A.deep_merge(config, OVERRIDES))
# A refused value is named by where it came from: --config, a --configfile, params.yaml ...
A.check_schema(config, A.params_schema(), A.config_origin(S.configfiles, S.config, "params.yaml"))
C = A.apply_preset(config, OVERRIDES)
# ... and, once the preset is applied, presets/<name>.yaml where it gave the value.
ORIGIN = A.config_origin(S.configfiles, S.config, "params.yaml", A.preset_file(C["preset"]))
A.check_schema(C, A.params_schema(), ORIGIN)
# Typed settings, ranges, splits: refused here, before any job runs, naming the key and its source.
A.validate(C, ORIGIN)
P.check_published(C, C["papers"])  # a published value no table or figure looks up: a misspelt label
# e.g. a model only another preset trains; said once, by the main process (not again by each cluster job)
for warning in P.unused_model_overrides(C, OVERRIDES, ORIGIN) if workflow.is_main_process else ():
    print(warning, file=sys.stderr)
A.export_data_settings(C)


wildcard_constraints:
    dataset=r"[A-Za-z0-9_]+",
    model=r"[A-Za-z0-9_]+(@[A-Za-z0-9_]+=[A-Za-z0-9_.+-]+)?",  # a model, or a variant: <model>@<key>=<value>
    seed=r"\d+",
    method=r"[A-Za-z0-9_]+",
    dim=r"\d+",


# Local runs fork their jobs from one warm process (ansel.forkserver): a job then costs its work,
# not ~4 s of imports. ANSEL_FORKSERVER=off runs every job in a process of its own.
onstart:
    if workflow.local_exec and not workflow.remote_exec and os.environ.get("ANSEL_FORKSERVER") != "off":
        forkserver.start(Path("logs/forkserver.log"))
        shell.prefix(forkserver.shell_prefix())  # the jobs' `ansel`: a client that skips the console script


onsuccess:
    forkserver.stop()


onerror:
    forkserver.stop()


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        P.paper_outputs(C),
    default_target: True


# Coarse targets that DVC stages call (dvc.yaml): all data, all runs, one paper's outputs.
rule data_all:
    input:
        sorted({f for f in P.paper_inputs(C) if f.startswith(("data/", "results/stats/"))}),
        sorted({T.processed_dir(r.dataset) for r in RUNS.values()}),
        sorted({e for r in RUNS.values() for e in [run_embeddings(r)] if e}),


rule runs_all:
    input:
        [f"{d}/metrics.json" for d in RUNS],
        # every other file the tables and figures read under the runs stage's DVC outputs (a last-epoch
        # run_last.trec, a table's step times): made by a paper's stage, dvc.lock would record them twice
        sorted(
            {f for f in P.paper_inputs(C) if f.startswith(("results/runs/", "results/timings/", "results/benchmarks/"))}
        ),


for paper in C["papers"]:

    rule:
        name:
            f"paper_{paper}"
        input:
            P.paper_outputs(C, [paper]),
