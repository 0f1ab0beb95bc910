# Evaluation is a stage: a trained run scored from its selected weights. An edit of the evaluation
# code re-scores without retraining, and a failed evaluation leaves the trained weights in place.


rule evaluate:
    """Every eval split scored with the dev-selected weights (the training's dev scores reused while
    the scoring code is unchanged); metrics per split and the TREC run file."""
    input:
        model="results/runs/{dataset}/{model}/seed{seed}/model.pt",
        config="results/runs/{dataset}/{model}/seed{seed}/config.json",
        dev_scores="results/runs/{dataset}/{model}/seed{seed}/dev_scores.pt",
        processed="data/processed/{dataset}",
        code=package_code("evaluation"),
    output:
        metrics="results/runs/{dataset}/{model}/seed{seed}/metrics.json",
        run="results/runs/{dataset}/{model}/seed{seed}/run.trec",
    params:
        run_dir=lambda w: run_of(w).dir,
    log:
        "logs/evaluate/{dataset}/{model}/seed{seed}.log",
    threads: res("evaluate", "threads")
    resources:
        mem_mb=res("evaluate", "mem_mb"),
        runtime=res("evaluate", "runtime"),
        gpu=res("evaluate", "gpu"),
        gpu_mem_mb=device_mem_mb,
    shell:
        "ansel evaluate --processed {input.processed} --run-dir {params.run_dir} --threads {threads} > {log} 2>&1"


rule evaluate_last:
    """Every eval split scored with the last epoch's weights (model_last.pt, which training keeps under
    train.keep_last): the per-question run file of a paper that reports its last iteration, read by
    the paired tests of its tables' (last epoch) columns."""
    input:
        model="results/runs/{dataset}/{model}/seed{seed}/model.pt",  # training kept model_last.pt beside it
        config="results/runs/{dataset}/{model}/seed{seed}/config.json",
        # read for the digest of the data the run trained on (a corrupt one is refused), not for its scores
        dev_scores="results/runs/{dataset}/{model}/seed{seed}/dev_scores.pt",
        processed="data/processed/{dataset}",
        code=package_code("evaluation"),
    output:
        metrics="results/runs/{dataset}/{model}/seed{seed}/metrics_last.json",
        run="results/runs/{dataset}/{model}/seed{seed}/run_last.trec",
    params:
        run_dir=lambda w: run_of(w).dir,
    log:
        "logs/evaluate/{dataset}/{model}/seed{seed}.last.log",
    threads: res("evaluate", "threads")
    resources:
        mem_mb=res("evaluate", "mem_mb"),
        runtime=res("evaluate", "runtime"),
        gpu=res("evaluate", "gpu"),
        gpu_mem_mb=device_mem_mb,
    shell:
        "ansel evaluate --last --processed {input.processed} --run-dir {params.run_dir} --threads {threads} > {log} 2>&1"
