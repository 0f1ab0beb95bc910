"""bench_matchzoo.py's ratios against MatchZoo-py come from the last like-for-like peer run
(benchmarks/peer/last.json, both sides measured there), in triples on both sides; none without one."""

import importlib.util
import json
import sys

import pytest

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_matchzoo", ROOT / "benchmarks/bench_matchzoo.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_without_a_peer_run_no_ratio_is_printed(bench, tmp_path, capsys):
    bench.print_peer_ratios(tmp_path / "last.json")
    assert "no peer run" in capsys.readouterr().out


def _printed_row(bench, tmp_path, capsys, **figures) -> dict[str, str]:
    """{column: cell} of the Markdown table row ``print_peer_ratios`` prints for a peer run of one row
    of these figures."""
    row = {"settings": "peer", "trained_embeddings": True, **figures}
    run = tmp_path / "last.json"
    run.write_text(
        json.dumps(
            {
                "when": "2026-11-26T13:00:00Z",
                "cores": 2,
                "summary": [row],
                "args": {"rounds": 3, "steps": 200, "threads": 2},
            }
        )
    )
    bench.print_peer_ratios(run)
    lines = [ln.strip("|").split("|") for ln in capsys.readouterr().out.splitlines() if ln.startswith("|")]
    header, cells = [c.strip() for c in lines[0]], [c.strip() for c in lines[2]]
    assert len(lines) == 3 and cells[0] == row["model"]
    return dict(zip(header, cells))


def test_the_ratios_are_the_peer_runs_own_figures_divided(bench, tmp_path, capsys):
    cells = _printed_row(
        bench,
        tmp_path,
        capsys,
        model="mv_lstm",
        embedding_updates="sparse",
        peer_triples_per_s=400.0,
        ansel_triples_per_s=1300.0,
        peer_candidates_per_s=3000.0,
        ansel_candidates_per_s=21000.0,
        peer_peak_rss_mb=710.0,
        ansel_peak_rss_mb=530.0,
    )
    assert cells["vectors"] == "trained, sparse" and cells["triples/s ansel"] == "1,300"
    assert cells["triples/s ratio"] == "3.2x ok" and cells["cand/s ratio"] == "7.0x ok"
    assert (cells["RSS MB MZ-py"], cells["RSS MB ansel"], cells["RSS below MZ-py"]) == ("710", "530", "ok")


def test_memory_above_the_peers_is_flagged(bench, tmp_path, capsys):
    cells = _printed_row(
        bench,
        tmp_path,
        capsys,
        model="arc_i",
        embedding_updates="dense",
        peer_triples_per_s=148.0,
        ansel_triples_per_s=304.0,
        peer_candidates_per_s=6561.0,
        ansel_candidates_per_s=39283.0,
        peer_peak_rss_mb=704.0,
        ansel_peak_rss_mb=753.0,
    )
    assert cells["triples/s ratio"] == "2.1x LOW" and cells["RSS below MZ-py"] == "HIGH"


@pytest.mark.parametrize(
    "row, label",
    [
        ({"trained_embeddings": False}, "frozen"),
        ({"trained_embeddings": True, "embedding_updates": "dense"}, "trained"),  # a run before the fused side
        ({"trained_embeddings": True, "embedding_updates": "dense", "optimizer_kernel": "fused"}, "trained, fused"),
        ({"trained_embeddings": True, "embedding_updates": "sparse", "optimizer_kernel": "loop"}, "trained, sparse"),
    ],
)
def test_each_ansel_side_is_named_by_its_update(bench, row, label):
    assert bench.vectors_label(row) == label
