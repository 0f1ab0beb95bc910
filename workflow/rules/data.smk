# Raw files (checksummed) -> canonical tables + vocabulary -> word embeddings.


def source_fetch(source):
    """The fetch options of a source; datasets sharing a source must agree on them."""
    options = {json.dumps(d.get("fetch", {}), sort_keys=True) for d in C["datasets"].values() if d["source"] == source}
    if len(options) != 1:
        raise ValueError(f"datasets with source {source!r} have different `fetch` options: {sorted(options)}")
    return options.pop()


rule download:
    output:
        "data/raw/{source}/manifest.json",
    params:
        cfg=lambda w: source_fetch(w.source),
    log:
        "logs/download/{source}.log",
    threads: res("download", "threads")
    resources:
        mem_mb=res("download", "mem_mb"),
        runtime=res("download", "runtime"),
    shell:
        "ansel download --source {wildcards.source} --config {params.cfg:q} --out {output} > {log} 2>&1"


rule preprocess:
    input:
        lambda w: f"data/raw/{C['datasets'][w.dataset]['source']}/manifest.json",
    output:
        directory("data/processed/{dataset}"),
    params:
        cfg=lambda w: json.dumps(C["datasets"][w.dataset]),
        raw=lambda w, input: os.path.dirname(input[0]),
    log:
        "logs/preprocess/{dataset}.log",
    threads: res("preprocess", "threads")
    resources:
        mem_mb=res("preprocess", "mem_mb"),
        runtime=res("preprocess", "runtime"),
    shell:
        "ansel preprocess --config {params.cfg:q} --dataset {wildcards.dataset} "
        "--raw {params.raw} --out {output} > {log} 2>&1"


rule embeddings:
    input:
        "data/processed/{dataset}",
    output:
        "data/embeddings/{dataset}/{method}-{dim}.npy",
        "data/embeddings/{dataset}/{method}-{dim}.json",
    params:
        cfg=lambda w: json.dumps(
            {
                "word2vec": C["datasets"][w.dataset].get("word2vec", {}),
                "pretrained": C.get("embeddings", {}).get("pretrained", {}),
            }
        ),
    log:
        "logs/embeddings/{dataset}/{method}-{dim}.log",
    threads: res("embeddings", "threads")
    resources:
        mem_mb=res("embeddings", "mem_mb"),
        runtime=res("embeddings", "runtime"),
    shell:
        "ansel embeddings --config {params.cfg:q} --processed {input} --method {wildcards.method} "
        "--dim {wildcards.dim} --out {output[0]} > {log} 2>&1"
