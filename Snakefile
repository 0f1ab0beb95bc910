# ansel: one DAG from raw data to every paper table and figure (see README.md).
import json
import os

from snakemake.utils import min_version, validate

from ansel.config import apply_preset, run_config
from ansel import targets as T

min_version("9.0")


configfile: "params.yaml"


SCHEMA = "workflow/schemas/params.schema.yaml"
validate(config, SCHEMA)
C = apply_preset(config)
validate(C, SCHEMA)  # the preset's overrides obey the same schema
if C.get("data", {}).get("mirror"):
    # Through the environment, not params: where files come from must not rerun the DAG
    # (they are verified by checksum either way).
    os.environ["ANSEL_DATA_MIRROR"] = os.path.abspath(C["data"]["mirror"])


wildcard_constraints:
    dataset=r"[A-Za-z0-9_]+",
    model=r"[A-Za-z0-9_]+",
    seed=r"\d+",
    method=r"[A-Za-z0-9_]+",
    dim=r"\d+",


def res(rule_name, key):
    return {**C["resources"]["default"], **C["resources"].get(rule_name, {})}[key]


include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        T.paper_outputs(C),
    default_target: True
