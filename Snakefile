# ansel: one DAG from raw data to every paper table and figure (see README.md).
import json
import os
from pathlib import Path

from snakemake.utils import min_version, validate

from ansel.config import apply_preset, run_config
from ansel import targets as T

min_version("9.0")


configfile: "params.yaml"


SCHEMA = "workflow/schemas/params.schema.yaml"
validate(config, SCHEMA)
# --config values are already in `config`; they are applied again over the preset so that they win.
C = apply_preset(config, workflow.config_settings.overwrite_config)
validate(C, SCHEMA)  # the preset's overrides obey the same schema
if C.get("data", {}).get("mirror"):
    # Through the environment, not params: where files come from must not rerun the DAG
    # (they are verified by checksum either way).
    os.environ["ANSEL_DATA_MIRROR"] = os.path.abspath(C["data"]["mirror"])


wildcard_constraints:
    dataset=r"[A-Za-z0-9_]+",
    model=r"[A-Za-z0-9_]+(@[A-Za-z0-9_]+=[A-Za-z0-9_.+-]+)?",  # <model>@<hparam>=<value>: a sweep point
    seed=r"\d+",
    method=r"[A-Za-z0-9_]+",
    dim=r"\d+",


def res(rule_name, key):
    return {**C["resources"]["default"], **C["resources"].get(rule_name, {})}[key]


def run_embeddings(dataset, model):
    """The embeddings file a run starts from, or None (random initialisation)."""
    cfg = run_config(C, dataset, model, 1)
    if not cfg["embeddings"]:
        return None
    return f"data/embeddings/{dataset}/{cfg['embeddings']}-{cfg['hparams']['embedding_dim']}.npy"


include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        T.paper_outputs(C),
    default_target: True


# Coarse targets that DVC stages call (dvc.yaml): all data, all runs, one paper's outputs.
INPUTS = T.paper_inputs(C)
RUNS = T.paper_runs(INPUTS)


rule data_all:
    input:
        sorted({f for f in INPUTS if f.startswith(("data/", "results/stats/"))}),
        sorted({f"data/processed/{d.split('/')[2]}" for d in RUNS}),
        sorted({e for d in RUNS for e in [run_embeddings(*d.split("/")[2:4])] if e}),


rule runs_all:
    input:
        [f"{d}/metrics.json" for d in RUNS],


for paper in C["papers"]:

    rule:
        name:
            f"paper_{paper}"
        input:
            [o for o in T.paper_outputs(C) if o.split("/")[-2] == paper],
