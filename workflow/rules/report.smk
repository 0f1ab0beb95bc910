# Seeds aggregated into each paper's tables (published value beside ours) and figures.

# The renderers are inputs: Snakemake's `code` trigger covers a rule's own command only, so an
# edit of how a table or figure is built (its notes, its aggregation) would otherwise leave the
# rendered files stale.
REPORT_CODE = sorted(str(p) for p in Path("src/ansel/report").glob("*.py"))


def report_cfg():
    """The slice of the config a table or figure depends on (so only it triggers re-rendering)."""
    return {
        "preset": C["preset"],
        "seeds": C["seeds"],
        "dataset_alias": C.get("dataset_alias", {}),
        "datasets": {d: {} for d in C["datasets"]},
    }


def models_cfg(models):
    """What model_config needs to resolve these models (hparams, train, the preset's scale)."""
    return {"models": {m: C["models"][m] for m in models}, "train": C["train"], "scale": C.get("scale", {})}


def table_cfg(w):
    """report_cfg plus the row models' configs: a row with an lr grid shows its point best on dev."""
    rows = T.spec_table(C, w.paper, w.table)["rows"]
    return json.dumps({**report_cfg(), **models_cfg(sorted({r["model"] for r in rows if r.get("model")}))})


def figure_cfg(w):
    """report_cfg plus the configs of the models a figure reads (their seeds; a sweep derives its
    runs from its base model) and the preset's sweep values."""
    spec = T.spec_figure(w.paper, w.figure)
    if spec["kind"] != "sweep":
        return json.dumps({**report_cfg(), **models_cfg(spec.get("models") or [spec["model"]])})
    return json.dumps({**report_cfg(), **models_cfg([spec["base_model"], spec["reference_model"]]),
                       "papers": {w.paper: {"sweeps": C["papers"][w.paper].get("sweeps", {})}}})


rule dataset_stats:
    """Statistics of a processed dataset (ansel.data.stats), read by tables of kind dataset_stats."""
    input:
        "data/processed/{dataset}",
    output:
        "results/stats/{dataset}.csv",
    log:
        "logs/dataset_stats/{dataset}.log",
    resources:
        mem_mb=res("dataset_stats", "mem_mb"),
        runtime=res("dataset_stats", "runtime"),
    shell:
        "ansel stats --processed {input} --out {output} > {log} 2>&1"


rule table:
    input:
        lambda w: T.table_inputs(C, T.spec_table(C, w.paper, w.table)),
        spec="workflow/papers/{paper}.yaml",
        published=lambda w: T.published_file(T.spec_table(C, w.paper, w.table)),
        code=REPORT_CODE,
    output:
        report("results/tables/{paper}/{table}.csv", category="{paper}", labels={"table": "{table}"}),
        "results/tables/{paper}/{table}.md",
        "results/tables/{paper}/{table}.tex",
        "results/tables/{paper}/{table}.json",  # {row: {column: {mean, std, n, published}}}: DVC metrics
    params:
        cfg=table_cfg,
    log:
        "logs/table/{paper}/{table}.log",
    resources:
        mem_mb=res("table", "mem_mb"),
        runtime=res("table", "runtime"),
    localrule: True
    shell:
        "ansel table --config {params.cfg:q} --paper {wildcards.paper} --table {wildcards.table} "
        "--published {input.published} --out-prefix results/tables/{wildcards.paper}/{wildcards.table} > {log} 2>&1"


rule figure:
    input:
        lambda w: T.figure_inputs(C, T.spec_figure(w.paper, w.figure)),
        spec="workflow/papers/{paper}.yaml",
        code=REPORT_CODE,
    output:
        report("figures/{paper}/{figure}.png", category="{paper}", labels={"figure": "{figure}"}),
        "figures/{paper}/{figure}.pdf",
    params:
        cfg=figure_cfg,
    log:
        "logs/figure/{paper}/{figure}.log",
    resources:
        mem_mb=res("figure", "mem_mb"),
        runtime=res("figure", "runtime"),
    localrule: True
    shell:
        "ansel figure --config {params.cfg:q} --paper {wildcards.paper} --figure {wildcards.figure} "
        "--out-prefix figures/{wildcards.paper}/{wildcards.figure} > {log} 2>&1"
