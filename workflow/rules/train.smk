# One run = (dataset, model variant, seed): training writes the dev-selected weights, the curves,
# the resolved config and the selected epoch's dev scores; the evaluate rule scores the rest.
# Wall times go to results/timings, outside the run directory: its files are the same bytes for
# the same seed, so the DVC-tracked results/runs hashes the same on a rerun.


rule train:
    """Train with dev selection (test is never looked at)."""
    input:
        processed="data/processed/{dataset}",
        embeddings=lambda w: run_embeddings(run_of(w)) or [],
    output:
        model="results/runs/{dataset}/{model}/seed{seed}/model.pt",
        log="results/runs/{dataset}/{model}/seed{seed}/log.csv",
        config="results/runs/{dataset}/{model}/seed{seed}/config.json",
        dev_scores="results/runs/{dataset}/{model}/seed{seed}/dev_scores.pt",
        timings="results/timings/{dataset}/{model}/seed{seed}.json",
    params:
        cfg=lambda w: json.dumps(RUN_CONFIGS[run_of(w).dir]),
        # the code the run trains with (ansel.code_digest): an edit of it reruns exactly its runs
        code=lambda w: train_code(RUN_CONFIGS[run_of(w).dir]["arch"]),
        embeddings=lambda w, input: f"--embeddings {input.embeddings}" if input.embeddings else "",
        run_dir=lambda w: run_of(w).dir,
    log:
        "logs/train/{dataset}/{model}/seed{seed}.log",
    threads: res("train", "threads")
    resources:
        mem_mb=res("train", "mem_mb"),
        runtime=res("train", "runtime"),
        gpu=res("train", "gpu"),
        gpu_mem_mb=device_mem_mb,
    shell:
        "ansel train --config {params.cfg:q} --processed {input.processed} {params.embeddings} "
        "--run-dir {params.run_dir} --timings {output.timings} --threads {threads} > {log} 2>&1"


# Timed beside the runs: the runs stage (dvc.yaml) owns results/benchmarks and lists this code.
rule step_times:
    """A table's ``protocol: benchmark`` column: each row's training step timed with every text at
    the run's maximum lengths, warm-up excluded (ansel.training.step_times); it takes every core, so
    nothing else runs beside a timing."""
    input:
        processed=lambda w: T.processed_dir(benchmark_configs(w.paper, w.table)[0]),
        vocab=lambda w: [c["vocab"] for c in benchmark_configs(w.paper, w.table)[1].values() if c.get("vocab")],
        code=package_code("training"),
    output:
        "results/benchmarks/{paper}/{table}.json",
    params:
        cfg=lambda w: json.dumps(benchmark_configs(w.paper, w.table)[1]),
        code=lambda w: sorted({train_code(c["arch"]) for c in benchmark_configs(w.paper, w.table)[1].values()}),
    log:
        "logs/step_times/{paper}/{table}.log",
    threads: every_core("train")
    resources:
        mem_mb=res("train", "mem_mb"),
        runtime=res("train", "runtime"),
        gpu=res("train", "gpu"),
    shell:
        "ansel step-times --config {params.cfg:q} --processed {input.processed} --out {output} "
        "--threads {threads} > {log} 2>&1"
