# One run = (dataset, model config, seed): a directory of weights, curves, metrics and a TREC run.


def run_cfg(w):
    return run_config(C, w.dataset, w.model, int(w.seed))


def embeddings_input(w):
    cfg = run_cfg(w)
    if not cfg["embeddings"]:
        return []
    return f"data/embeddings/{w.dataset}/{cfg['embeddings']}-{cfg['hparams']['embedding_dim']}.npy"


rule train:
    """Train with dev selection, then score every eval split with the selected weights."""
    input:
        processed="data/processed/{dataset}",
        embeddings=embeddings_input,
    output:
        model="results/runs/{dataset}/{model}/seed{seed}/model.pt",
        log="results/runs/{dataset}/{model}/seed{seed}/log.csv",
        config="results/runs/{dataset}/{model}/seed{seed}/config.json",
        metrics="results/runs/{dataset}/{model}/seed{seed}/metrics.json",
        run="results/runs/{dataset}/{model}/seed{seed}/run.trec",
    params:
        cfg=lambda w: json.dumps(run_cfg(w)),
        embeddings=lambda w, input: f"--embeddings {input.embeddings}" if input.embeddings else "",
    log:
        "logs/train/{dataset}/{model}/seed{seed}.log",
    threads: res("train", "threads")
    resources:
        mem_mb=res("train", "mem_mb"),
        runtime=res("train", "runtime"),
        gpu=res("train", "gpu"),
    shell:
        "ansel train --config {params.cfg:q} --processed {input.processed} {params.embeddings} "
        "--run-dir results/runs/{wildcards.dataset}/{wildcards.model}/seed{wildcards.seed} "
        "--threads {threads} > {log} 2>&1"
