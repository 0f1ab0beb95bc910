"""`preset=full` from nothing, over HTTP: a copy of the checkout with no data and no mirror builds
AP's WikiQA table (results/tables/apnet/wikiqa.md) with the upstream URL rewritten to a local
server (`data.upstream_rewrite`) that serves WikiQACorpus.zip as Microsoft does: download (zip
members verified against sources.yaml), preprocessing, word vectors, one short training per row
(a `scale` override; 60-d: every head count of the DAG divides it), evaluation and the table, by the normal Snakemake rules."""
import gzip
import http.server
import io
import json
import os
import threading
import zipfile
from pathlib import Path

import pytest

MIRROR = Path(os.environ.get("ANSEL_DATA_MIRROR") or Path(__file__).parents[3] / "shared/datasets")
ZIP = "/download.microsoft.com/download/E/5/F/E5FCFCEE-7005-4814-853D-DAA7C66507E0/WikiQACorpus.zip"


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.server.requests.append(self.path)
        body = self.server.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def wikiqa_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for split in ("train", "dev", "test"):
            z.writestr(f"WikiQACorpus/WikiQA-{split}.tsv",
                       gzip.decompress((MIRROR / f"wikiqa/WikiQA-{split}.tsv.gz").read_bytes()))
    return buf.getvalue()


@pytest.mark.skipif(not (MIRROR / "wikiqa").is_dir(), reason="needs the WikiQA files of the mirror to serve")
def test_apnet_wikiqa_table_of_the_full_preset_from_an_http_upstream(tmp_path, wt):
    repo = tmp_path / "repo"
    wt.copy_worktree(Path(__file__).parents[2], repo)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.files, server.requests = {ZIP: wikiqa_zip()}, []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config = {"preset": "full", "seeds": 1,
                  "data": {"upstream_rewrite": {"https://": f"http://127.0.0.1:{server.server_address[1]}/"}},
                  "scale": {"hparams": {"embedding_dim": 60, "hidden": 4, "filters": 8},
                            "train": {"epochs": 1, "max_batches": 2}}}
        env = {**wt.run_env(repo, tmp_path / "site-cache"), "ANSEL_DATA_MIRROR": ""}
        out = wt.sh(["snakemake", "--profile", "workflow/profiles/local", "--cores", "2",
                     "results/tables/apnet/wikiqa.md", "--config", *(f"{k}={json.dumps(v)}" for k, v in config.items())],
                    repo, env)
    finally:
        server.shutdown()
        server.server_close()
    assert server.requests == [ZIP], out  # one download of the archive for its three members
    manifest = json.loads((repo / "data/raw/wikiqa/manifest.json").read_text())
    assert sorted(manifest) == ["WikiQA-dev.tsv", "WikiQA-test.tsv", "WikiQA-train.tsv"]
    table = (repo / "results/tables/apnet/wikiqa.md").read_text()
    for row in ("QA-CNN", "QA-biLSTM", "AP-CNN", "AP-biLSTM", "BM25 (context)"):
        assert f"| {row} " in table, table
    run = json.loads((repo / "results/runs/wikiqa/apnet_ap_cnn_wikiqa/seed1/metrics.json").read_text())
    assert run["test"]["n_questions"] == 243  # the paper's protocol: test questions with a correct answer
