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
        lambda w: f"data/raw/{A.dataset_config(C, w.dataset)['source']}/manifest.json",
    output:
        directory("data/processed/{dataset}"),
    params:
        # what preprocessing reads of the dataset block: an edit of its `eval` reruns no preprocessing
        cfg=lambda w: json.dumps(A.preprocess_config(A.dataset_config(C, w.dataset))),
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
    wildcard_constraints:
        method=f"(?!(?:{RECIPES_PATTERN})-)[^/]+",  # corpus vectors: corpus_embeddings
    params:
        cfg=lambda w: json.dumps(
            {
                "word2vec": A.dataset_config(C, w.dataset).get("word2vec", {}),
                "pretrained": {} if w.method == "word2vec" else {w.method: A.pretrained_file(C, w.method)[0]},
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


# Corpus vectors (params.yaml embeddings.word2vec.<recipe>): word2vec trained once on the training
# splits of the recipe's datasets (once for recipes that train alike: config.trained_recipe), then
# post-processed and aligned to each dataset's vocabulary by corpus_embeddings.
rule corpus_vectors:
    input:
        # the corpus's datasets as the preset resolves them (smoke: its synthetic corpus)
        lambda w: list(dict.fromkeys(T.processed_dir(A.dataset_name(C, d))
                                     for d in A.word2vec_recipe(C, w.recipe)["corpus"])),
    output:
        vectors="data/vectors/{recipe}-{dim}.npy",
        words="data/vectors/{recipe}-{dim}.words.json",
        info="data/vectors/{recipe}-{dim}.json",
    params:
        cfg=lambda w: json.dumps({k: v for k, v in A.word2vec_recipe(C, w.recipe).items()
                                  if k in A.RECIPE_TRAINING_KEYS}),
    log:
        "logs/vectors/{recipe}-{dim}.log",
    threads: res("embeddings", "threads")
    resources:
        mem_mb=res("embeddings", "mem_mb"),
        runtime=res("embeddings", "runtime"),
    shell:
        "ansel corpus-vectors --config {params.cfg:q} --processed {input} --dim {wildcards.dim} "
        "--out {output.vectors} > {log} 2>&1"


rule corpus_embeddings:
    input:
        processed="data/processed/{dataset}",
        vectors=lambda w: f"data/vectors/{A.trained_recipe(C, w.method)}-{w.dim}.npy",
    output:
        vectors="data/embeddings/{dataset}/{method}-{dim}.npy",
        coverage="data/embeddings/{dataset}/{method}-{dim}.json",
        vocab="data/embeddings/{dataset}/{method}-{dim}.vocab.json",
    wildcard_constraints:
        method=RECIPES_PATTERN,
    params:
        cfg=lambda w: json.dumps({"recipes": {w.method: A.word2vec_recipe(C, w.method)}}),
    log:
        "logs/embeddings/{dataset}/{method}-{dim}.log",
    threads: res("embeddings", "threads")
    resources:
        mem_mb=res("embeddings", "mem_mb"),
        runtime=res("embeddings", "runtime"),
    shell:
        "ansel embeddings --config {params.cfg:q} --processed {input.processed} --method {wildcards.method} "
        "--vectors {input.vectors} --dim {wildcards.dim} --out {output.vectors} > {log} 2>&1"
