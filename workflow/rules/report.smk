# Seeds aggregated into each paper's tables (published value beside ours) and figures.

# `snakemake --report results/report.html` (make report): every table and figure, grouped by paper
# (category = the paper's id), and all of them on its first page (workflow/report/workflow.rst,
# whose inline-figure directive ansel.report_page registers).
# A table's or figure's job reads its config (tens of KB of JSON) from a file written beside its
# log, kept for a failed job's reader, not from its command line; `params.cfg` still reruns the job
# when the config changes.
from ansel import report_page  # noqa: F401
from ansel.files import write_text_atomic


report: "../report/workflow.rst"


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
        table_inputs,
        spec="workflow/papers/{paper}.yaml",
        published=lambda w: K.kind_of(built_table(w.paper, w.table)).published,
        benchmark=lambda w: [T.benchmark_file(w.paper, w.table)] * bool(benchmark_configs(w.paper, w.table)[0]),
        code=package_code("report") + package_code("table_kinds") + ["src/ansel/specs.py", "src/ansel/published.py"],
    output:
        # the long form (one row per cell, numbers unrounded), to download from the report
        report("results/tables/{paper}/{table}.csv", category="{paper}", subcategory="tables (CSV)",
               labels={"table": "{table}"}),
        "results/tables/{paper}/{table}.md",
        "results/tables/{paper}/{table}.tex",
        report("results/tables/{paper}/{table}.html", category="{paper}", subcategory="tables",
               labels={"table": "{table}"}),
        # DVC metrics: {row: {column: {mean, std, n, published}}}; top_answers: {aid: {label, model: {score, rank}}}
        "results/tables/{paper}/{table}.json",
    params:
        cfg=table_cfg,
    log:
        out="logs/table/{paper}/{table}.log",
        config="logs/table/{paper}/{table}.config.json",
    resources:
        mem_mb=res("table", "mem_mb"),
        runtime=res("table", "runtime"),
    localrule: True
    run:
        write_text_atomic(Path(log.config), params.cfg)
        shell("ansel table --config {log.config} --paper {wildcards.paper} --table {wildcards.table} "
              "--published {input.published} --out-prefix results/tables/{wildcards.paper}/{wildcards.table} "
              "> {log.out} 2>&1")


rule figure:
    input:
        figure_inputs,
        spec="workflow/papers/{paper}.yaml",
        code=package_code("report") + ["src/ansel/specs.py", "src/ansel/published.py"],
    output:
        report("figures/{paper}/{figure}.png", category="{paper}", subcategory="figures",
               labels={"figure": "{figure}"}),
        "figures/{paper}/{figure}.pdf",
    params:
        cfg=figure_cfg,
    log:
        out="logs/figure/{paper}/{figure}.log",
        config="logs/figure/{paper}/{figure}.config.json",
    resources:
        mem_mb=res("figure", "mem_mb"),
        runtime=res("figure", "runtime"),
    localrule: True
    run:
        write_text_atomic(Path(log.config), params.cfg)
        shell("ansel figure --config {log.config} --paper {wildcards.paper} --figure {wildcards.figure} "
              "--out-prefix figures/{wildcards.paper}/{wildcards.figure} > {log.out} 2>&1")
