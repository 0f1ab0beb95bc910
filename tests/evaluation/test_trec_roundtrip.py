"""run.trec, scored by the real trec_eval (pytrec_eval's C binding), gives exactly the metrics ansel
computes on the in-memory scores (issue 32: scores written to 8 decimals became ties that trec_eval
broke by docno, so trec_eval's P@1 on a smoke run was 0.1875 where metrics.json said 0.2000).

Ties: trec_eval sorts by score descending, then docno descending (strcmp); ansel's ``rank`` sorts
by score descending, then aid descending (aids are strings), so exact ties are broken the same way
by both and need no special casing here (test_exact_ties_are_broken_like_trec_eval).
trec_eval keeps a score as a C ``float`` (``TEXT_RESULTS.sim``): float32 model scores reach it
exactly, but float64 scores (lexical models) that differ only beyond float32 precision tie there
and not in ansel (test_trec_eval_reads_scores_in_single_precision).
"""

from __future__ import annotations

import ctypes
import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ansel.evaluation.metrics import per_question, rank, ranking_metrics, write_trec_run

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier (the `test` extra) is not installed")

ROOT = Path(__file__).resolve().parents[2]
# ansel's metric -> trec_eval's measure (binary relevance: label > 0)
MEASURES = {"MAP": "map", "MRR": "recip_rank", "P@1": "P_1", "nDCG@3": "ndcg_cut_3", "nDCG@5": "ndcg_cut_5"}
LEGACY_SCORE = re.compile(r"-?(\d+\.\d{8}|nan|inf)")  # what the old f"{score:.8f}" wrote


def _atof():
    """The C library's atof (what trec_eval reads scores with), or None where it cannot be loaded."""
    try:
        f = ctypes.CDLL(None).atof
    except (OSError, AttributeError):
        return None
    f.restype, f.argtypes = ctypes.c_double, [ctypes.c_char_p]
    return f


def qrels_of(scored: pd.DataFrame) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for q, a, label in zip(scored.qid.astype(str), scored.aid.astype(str), scored.label):
        qrels[q][a] = int(label > 0)
    return dict(qrels)


def trec_eval(run_path: Path, qrels: dict) -> dict[str, dict[str, float]]:
    """Per-question trec_eval measures of a run file (read as trec_eval reads it: by its scores)."""
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    return pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES.values())).evaluate(dict(run))


def means(per_q: dict[str, dict[str, float]], qids) -> dict[str, float]:
    return {ours: float(np.mean([per_q[q][theirs] for q in qids])) for ours, theirs in MEASURES.items()}


def near_tie_ranking(dtype) -> pd.DataFrame:
    """Questions whose scores differ only beyond the 8th decimal (adjacent float32s, held as
    ``dtype``), with exact ties, negative and tiny/huge scores (scientific notation), and aids
    whose string order is not their numeric order."""

    def ulps(x, k):  # x moved k float32s up (k < 0: down): distinct for trec_eval too (see below)
        x = np.float32(x)
        for _ in range(abs(k)):
            x = np.nextafter(x, np.float32(np.inf if k > 0 else -np.inf))
        return x

    base = np.float32(0.0012345678)
    rows = [  # q0: the positive a9 one ulp below a1; to 8 decimals they tie and trec_eval put a9 first
        ("q0", "a1", 0, ulps(base, 1)),
        ("q0", "a9", 1, base),
        ("q0", "a5", 0, np.float32(-3.5)),
        # q1: the same with negative logits
        ("q1", "a2", 0, ulps(-base, 1)),
        ("q1", "a3", 1, -base),
        ("q1", "a10", 0, ulps(-base, -2)),
        # q2: an exact tie of a positive and a negative: both orders put a7 before a10 (strcmp)
        ("q2", "a10", 1, base),
        ("q2", "a7", 0, base),
        ("q2", "a8", 0, ulps(base, -1)),
        # q3: scores written in scientific notation
        ("q3", "a1", 1, np.float32(1e-5)),
        ("q3", "a2", 0, ulps(1e-5, 1)),
        ("q3", "a3", 0, np.float32(3e16)),
        # q4: no positive (dropped by no_positive=drop, 0 under zero)
        ("q4", "a1", 0, base),
        ("q4", "a2", 0, ulps(base, 1)),
    ]
    rng = np.random.default_rng(32)
    for q in range(5, 60):
        n = int(rng.integers(2, 15))
        centre = rng.choice([-1, 1]) * 10 ** rng.uniform(-6, -1)
        aids = rng.choice(30, n, replace=False)
        labels = rng.random(n) < 0.3
        for aid, label, k in zip(aids, labels, rng.integers(-3, 4, n)):  # few distinct values: ties too
            rows.append((f"q{q}", f"a{aid}", int(label), ulps(centre, int(k))))
    df = pd.DataFrame(rows, columns=["qid", "aid", "label", "score"])
    df["score"] = df.score.astype(dtype)
    return df.sample(frac=1, random_state=0).reset_index(drop=True)  # file order must not matter


def write_legacy(scored: pd.DataFrame, path: Path) -> None:
    """The old writer (scores to 8 decimals), only to show the fixture exposes it."""
    with open(path, "w") as f:
        for r in rank(scored).itertuples(index=False):
            f.write(f"{r.qid} Q0 {r.aid} {r.rank} {r.score:.8f} legacy\n")


def ansel_vs_trec_eval(scored: pd.DataFrame, run_path: Path):
    """(ansel's per-question metrics, trec_eval's) on the questions with a positive."""
    ours = per_question(scored)
    theirs = trec_eval(run_path, qrels_of(scored))
    return ours, theirs


@pytest.mark.parametrize("dtype", ["float32", "float64"])  # model scores; lexical (BM25, counts) scores
def test_written_scores_round_trip_and_trec_eval_agrees(tmp_path, dtype):
    scored = near_tie_ranking(dtype)
    path = tmp_path / "run.trec"
    write_trec_run(scored, path, "x")
    lines = [line.split() for line in path.read_text().splitlines()]
    assert all(len(fields) == 6 for fields in lines)

    # order and rank column as before: rank() order, ranks 1..n per question
    ranked = rank(scored)
    assert [(q, a, int(r)) for q, _, a, r, _, _ in lines] == list(zip(ranked.qid, ranked.aid, ranked["rank"]))

    # every score reads back (Python float and C atof alike) as the in-memory value, exactly
    written = [s for *_, s, _ in lines]
    expected = ranked.score.to_numpy().astype(np.float64)
    assert np.array_equal(np.array([float(s) for s in written]), expected)
    assert np.array_equal(np.array([float(s) for s in written]).astype(dtype), ranked.score.to_numpy())
    atof = _atof()
    if atof is not None:
        assert np.array_equal(np.array([atof(s.encode()) for s in written]), expected)

    # written ties are exactly the in-memory ties
    as_written = ranked.assign(text=written)
    assert as_written.groupby(["qid", "text"]).ngroups == ranked.groupby(["qid", "score"]).ngroups
    assert ranked.duplicated(["qid", "score"]).any()  # the fixture has exact ties too

    # trec_eval on the file == ansel on the in-memory scores, question by question and on average
    ours, theirs = ansel_vs_trec_eval(scored, path)
    assert set(theirs) == set(ours.index)
    with_pos = list(ours.index[ours.n_pos > 0])
    for q in with_pos:
        for m, measure in MEASURES.items():
            assert theirs[q][measure] == pytest.approx(ours.loc[q, m], abs=1e-12), (q, m)
    drop, zero = ranking_metrics(scored, "drop"), ranking_metrics(scored, "zero")
    for m, value in means(theirs, with_pos).items():
        assert value == pytest.approx(drop[m], abs=1e-12), m
    for m, value in means(theirs, list(ours.index)).items():
        assert value == pytest.approx(zero[m], abs=1e-12), m

    # the fixture is sensitive: to 8 decimals the same ranking gives trec_eval other numbers
    legacy = tmp_path / "legacy.trec"
    write_legacy(scored, legacy)
    old = means(trec_eval(legacy, qrels_of(scored)), with_pos)
    assert any(abs(old[m] - drop[m]) > 1e-6 for m in ("MAP", "MRR", "P@1"))


def test_exact_ties_are_broken_like_trec_eval(tmp_path):
    """Equal scores: ansel ranks by aid descending (strings: a9 > a2 > a10 > a1), as trec_eval
    ranks by docno descending; so exact ties give the same metrics, whatever the numeric order."""
    scored = pd.DataFrame(
        {"qid": "q", "aid": ["a1", "a10", "a2", "a9"], "label": [1, 0, 1, 0], "score": np.float32(0.25)}
    )
    assert list(rank(scored).aid) == ["a9", "a2", "a10", "a1"]
    write_trec_run(scored, tmp_path / "run.trec", "x")
    ours, theirs = ansel_vs_trec_eval(scored, tmp_path / "run.trec")
    for m, measure in MEASURES.items():
        assert theirs["q"][measure] == pytest.approx(ours.loc["q", m], abs=1e-12), m
    assert ours.loc["q", "P@1"] == 0 and ours.loc["q", "MAP"] == pytest.approx((1 / 2 + 2 / 4) / 2)


def test_trec_eval_reads_scores_in_single_precision(tmp_path):
    """A known limit, not ansel's: float64 scores distinct only beyond float32 precision are
    written exactly (they read back bit for bit) but trec_eval ties them (then docno descending)."""
    scores = np.array([0.5, np.nextafter(0.5, 1.0)])  # one float64 ulp apart, equal as float32
    scored = pd.DataFrame({"qid": "q", "aid": ["a1", "a2"], "label": [1, 0], "score": scores})
    write_trec_run(scored, tmp_path / "run.trec", "x")
    written = [line.split()[4] for line in (tmp_path / "run.trec").read_text().splitlines()]
    assert [float(s) for s in written] == [scores[1], scores[0]]  # exact, in ansel's order
    ours, theirs = ansel_vs_trec_eval(scored, tmp_path / "run.trec")
    assert ours.loc["q", "P@1"] == 0.0 and theirs["q"]["P_1"] == 0.0  # a2 first in both (by luck)
    scored = scored.assign(aid=["a2", "a1"])  # a1 scored higher, but trec_eval puts a2 first
    write_trec_run(scored, tmp_path / "run.trec", "x")
    ours, theirs = ansel_vs_trec_eval(scored, tmp_path / "run.trec")
    assert ours.loc["q", "P@1"] == 0.0 and theirs["q"]["P_1"] == 1.0


# ---- the checkout's own runs ------------------------------------------------------------------


def checkout_runs(home: Path) -> list[Path]:
    return sorted(
        p.parent
        for p in home.glob("results/runs/synthetic_*/*/seed*/run.trec")
        if (p.parent / "metrics.json").exists() and (p.parent / "config.json").exists()
    )


def split_qrels(processed: Path, split: str) -> dict[str, dict[str, int]]:
    """``<split>:<qid>`` -> {aid: relevance} of a processed dataset's split, as run.trec names them."""
    cands = pd.read_parquet(processed / f"candidates-{split}.parquet", columns=["qid", "aid", "label"])
    return qrels_of(cands.assign(qid=split + ":" + cands.qid.astype(str)))


def test_checkout_runs_score_the_same_under_trec_eval(request):
    """Every results/runs/synthetic_*/*/seed*/run.trec of this checkout (of the session's small smoke
    DAG where this one has none: tests/small_dag.py) under trec_eval gives its metrics.json
    (every split with ranking metrics), with qrels rebuilt as ``evaluate_run`` scores: the run's
    ``data/processed/<dataset>/candidates-<split>.parquet`` rows of the questions in the run (a
    ``sample_questions`` draw keeps whole questions), relevant where label > 0.

    Files written before the fix (8 decimals) are checked only for splits whose written scores
    have no tie within a question: there, rounding kept the in-memory order; a written tie may be
    a rounding artefact (re-run ``evaluate``: the rule depends on the evaluation code)."""
    home, runs = ROOT, checkout_runs(ROOT)
    if not runs:
        home = request.getfixturevalue("small_dag")
        runs = checkout_runs(home)
    assert runs, f"{home}: no results/runs/synthetic_*/*/seed*/run.trec with metrics.json"
    qrels_cache: dict[tuple[Path, str], dict] = {}
    checked, legacy_tied, failures = 0, 0, []
    for run_dir in runs:
        cfg = json.loads((run_dir / "config.json").read_text())
        metrics = json.loads((run_dir / "metrics.json").read_text())
        processed = home / "data" / "processed" / cfg["dataset"]
        splits = [s for s, m in metrics.items() if isinstance(m, dict) and "MAP" in m]
        if not splits or not processed.is_dir():
            continue
        written: dict[str, dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
        legacy = True
        with open(run_dir / "run.trec") as f:
            for line in f:
                qid, _, aid, _, score, _ = line.split()
                written[qid.split(":", 1)[0]][qid][aid] = score
                legacy = legacy and LEGACY_SCORE.fullmatch(score) is not None
        for split in splits:
            where = f"{run_dir.relative_to(home)} {split}"
            texts = written.get(split, {})
            if legacy and any(len(set(d.values())) < len(d) for d in texts.values()):
                legacy_tied += 1
                continue
            if (processed, split) not in qrels_cache:
                qrels_cache[processed, split] = split_qrels(processed, split)
            qrels = {q: qrels_cache[processed, split].get(q, {}) for q in texts}
            stale = [q for q in texts if set(texts[q]) != set(qrels[q])]
            assert not stale, f"{where}: candidates of {stale[:3]} differ from {processed} (stale run or data)"
            run = {q: {a: float(s) for a, s in d.items()} for q, d in texts.items()}
            per_q = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES.values())).evaluate(run)
            with_pos = [q for q, rel in qrels.items() if any(rel.values())]
            got = means(per_q, with_pos if cfg["eval"].get("no_positive", "drop") == "drop" else list(qrels))
            want = metrics[split]
            if (want["n_questions"], want["n_no_positive"]) != (len(qrels), len(qrels) - len(with_pos)):
                failures.append(
                    f"{where}: n_questions/n_no_positive {want['n_questions']}/{want['n_no_positive']}"
                    f" in metrics.json, {len(qrels)}/{len(qrels) - len(with_pos)} in run.trec"
                )
            failures += [
                f"{where} {m}: metrics.json {want[m]!r}, trec_eval {got[m]!r}"
                for m in MEASURES
                if m in want and abs(got[m] - want[m]) > 1e-6
            ]
            checked += 1
    if not checked:
        pytest.skip(
            f"no checkable ranking split among {len(runs)} runs ({legacy_tied} written to 8 decimals "
            "with ties; re-run `evaluate`)"
        )
    assert not failures, f"{len(failures)} mismatches over {checked} run splits:\n" + "\n".join(failures[:20])
