# Raw files (checksummed) -> canonical tables + vocabulary -> word embeddings.


rule download:
    output:
        "data/raw/{dataset}/manifest.json",
    params:
        cfg=lambda w: json.dumps(C["datasets"][w.dataset]),
    log:
        "logs/download/{dataset}.log",
    threads: res("download", "threads")
    resources:
        mem_mb=res("download", "mem_mb"),
        runtime=res("download", "runtime"),
    shell:
        "ansel download --config {params.cfg:q} --out {output} > {log} 2>&1"


rule preprocess:
    input:
        "data/raw/{dataset}/manifest.json",
    output:
        directory("data/processed/{dataset}"),
    params:
        cfg=lambda w: json.dumps(C["datasets"][w.dataset]),
    log:
        "logs/preprocess/{dataset}.log",
    threads: res("preprocess", "threads")
    resources:
        mem_mb=res("preprocess", "mem_mb"),
        runtime=res("preprocess", "runtime"),
    shell:
        "ansel preprocess --config {params.cfg:q} --dataset {wildcards.dataset} "
        "--raw data/raw/{wildcards.dataset} --out {output} > {log} 2>&1"


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
