"""`preset=full` from nothing, over HTTP: a copy of the checkout with no data and no mirror builds
AP's WikiQA table (results/tables/apnet/wikiqa.md) with the upstream URL rewritten to a local
server (`data.upstream_rewrite`) that serves WikiQACorpus.zip as Microsoft does: download (zip
members verified against sources.yaml), preprocessing, word vectors, one short training per row
(a `scale` override; 60-d: every head count of the DAG divides it), evaluation and the table, by the normal Snakemake rules."""

import json
from pathlib import Path

import numpy as np
import pytest

from tests.upstream import GOOGLENEWS, MIRROR, WIKIQA_ZIP, serving, wikiqa_corpus_zip, word2vec_bin_gz


@pytest.mark.ci  # the whole path from an empty checkout to a table (five trainings): CI's, after the suite
@pytest.mark.skipif(not (MIRROR / "wikiqa").is_dir(), reason="needs the WikiQA files of the mirror to serve")
def test_apnet_wikiqa_table_of_the_full_preset_from_an_http_upstream(tmp_path, wt):
    repo = tmp_path / "repo"
    wt.copy_worktree(Path(__file__).parents[2], repo)
    with serving() as server:
        server.files[WIKIQA_ZIP] = wikiqa_corpus_zip()
        words = [
            "what",
            "is",
            "the",
            "of",
            "a",
            "in",
            "how",
            "who",
            "WHAT",
            "river",
        ]  # "WHAT": not a word of the vocabulary
        rng = np.random.default_rng(0)
        server.files[GOOGLENEWS] = word2vec_bin_gz([(w, rng.normal(size=60).tolist()) for w in words])
        config = {
            "preset": "full",
            "seeds": 1,
            "data": {"upstream_rewrite": {"https://": f"{server.url}/"}},
            "scale": {
                "hparams": {"embedding_dim": 60, "hidden": 4, "filters": 8},
                "train": {"epochs": 1, "max_batches": 2},
            },
        }
        env = {**wt.run_env(repo, tmp_path / "site-cache"), "ANSEL_DATA_MIRROR": ""}
        out = wt.sh(
            [
                "snakemake",
                "--profile",
                "workflow/profiles/local",
                "--cores",
                "2",
                "results/tables/apnet/wikiqa.md",
                "--config",
                *(f"{k}={json.dumps(v)}" for k, v in config.items()),
            ],
            repo,
            env,
        )
    assert sorted(server.requests) == sorted([WIKIQA_ZIP, GOOGLENEWS]), (
        out
    )  # one download of the archive for its members
    vectors = json.loads((repo / "data/embeddings/wikiqa/googlenews-60.json").read_text())
    assert 0 < vectors["coverage"] < 1, vectors  # the file covers some of the vocabulary: the rest starts at random
    manifest = json.loads((repo / "data/raw/wikiqa/manifest.json").read_text())
    assert sorted(manifest) == ["WikiQA-dev.tsv", "WikiQA-test.tsv", "WikiQA-train.tsv"]
    table = (repo / "results/tables/apnet/wikiqa.md").read_text()
    for row in ("QA-CNN", "QA-biLSTM", "AP-CNN", "AP-biLSTM", "BM25 (context)"):
        assert f"| {row} " in table, table
    run = json.loads((repo / "results/runs/wikiqa/apnet_ap_cnn_wikiqa/seed1/metrics.json").read_text())
    assert run["test"]["n_questions"] == 243  # the paper's protocol: test questions with a correct answer
