# Raw files (checksummed) -> canonical tables + vocabulary -> word embeddings.


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
        # what preprocessing reads of the dataset block: an edit of its `eval` reruns no preprocessing
        cfg=lambda w: json.dumps(A.preprocess_config(C["datasets"][w.dataset])),
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
        processed="data/processed/{dataset}",
        pretrained=pretrained_file,
    output:
        vectors="data/embeddings/{dataset}/{method}-{dim}.npy",
        coverage="data/embeddings/{dataset}/{method}-{dim}.json",
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
        "ansel embeddings --config {params.cfg:q} --processed {input.processed} --method {wildcards.method} "
        "--dim {wildcards.dim} --out {output.vectors} > {log} 2>&1"
