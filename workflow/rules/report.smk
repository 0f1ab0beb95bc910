# Seeds aggregated into each paper's tables (published value beside ours) and figures.


def report_cfg():
    """The slice of the config a table or figure depends on (so only it triggers re-rendering)."""
    return json.dumps(
        {
            "preset": C["preset"],
            "seeds": C["seeds"],
            "dataset_alias": C.get("dataset_alias", {}),
            "datasets": {d: {} for d in C["datasets"]},
        }
    )


rule table:
    input:
        lambda w: [f"{d}/metrics.json" for d in T.table_runs(C, T.spec_table(C, w.paper, w.table))],
        spec="workflow/papers/{paper}.yaml",
        published="workflow/papers/published_results.csv",
    output:
        report("results/tables/{paper}/{table}.csv", category="{paper}", labels={"table": "{table}"}),
        "results/tables/{paper}/{table}.md",
        "results/tables/{paper}/{table}.tex",
    params:
        cfg=report_cfg(),
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
        lambda w: [f"{d}/log.csv" for d in T.figure_runs(C, T.spec_figure(w.paper, w.figure))],
        spec="workflow/papers/{paper}.yaml",
    output:
        report("figures/{paper}/{figure}.png", category="{paper}", labels={"figure": "{figure}"}),
        "figures/{paper}/{figure}.pdf",
    params:
        cfg=report_cfg(),
    log:
        "logs/figure/{paper}/{figure}.log",
    resources:
        mem_mb=res("figure", "mem_mb"),
        runtime=res("figure", "runtime"),
    localrule: True
    shell:
        "ansel figure --config {params.cfg:q} --paper {wildcards.paper} --figure {wildcards.figure} "
        "--out-prefix figures/{wildcards.paper}/{wildcards.figure} > {log} 2>&1"
