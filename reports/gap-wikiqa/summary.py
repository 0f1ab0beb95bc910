"""The tables of reports/gap-wikiqa/README.md from the committed runs: E6 (each model untrained, beside
its trained runs of the same seeds in the records it came from), E5 (the planted signal), E2 (AP-CNN's
first batches on GloVe 6B 50-d and on word2vec-50), E2b (the same two vector sets for AP's other three
WikiQA rows), E2c (GloVe 6B 50-d at the paper's 25 epochs) and E3 (AP-CNN's recipe, one change at a time).

    python reports/gap-wikiqa/summary.py"""

import json
from pathlib import Path

import pandas as pd

from ansel.report.tables import published_lookup

HERE = Path(__file__).parent
REPORTS = HERE.parent
# dataset -> the records whose trained runs the untrained ones are set beside
TRAINED = {"wikiqa": ["device/apnet-wikiqa", "cpu-apnet"], "wikiqa_mz": ["paper-amvlstm"]}


def metrics(run: Path) -> dict:
    return json.loads((run / "metrics.json").read_text())


def cell(values: list[float]) -> str:
    s = pd.Series(values)
    return f"{s.mean():.4f}" + (f" ± {s.std():.4f}" if len(s) > 1 else "") + f" (n={len(s)})"


def untrained_table() -> str:
    rows = []
    for model_dir in sorted((HERE / "runs" / "untrained").glob("*/*")):
        dataset, model = model_dir.parent.name, model_dir.name
        seeds = sorted(p.name for p in model_dir.iterdir() if (p / "metrics.json").exists())  # finished runs
        row = {"dataset": dataset, "model": model, "seeds": ", ".join(s.removeprefix("seed") for s in seeds)}
        for split in ("dev", "test"):
            row[f"untrained {split} MAP"] = cell([metrics(model_dir / s)[split]["MAP"] for s in seeds])
        for record in TRAINED[dataset]:
            runs = [REPORTS / record / "runs" / dataset / model / s for s in seeds]
            if not all((r / "metrics.json").exists() for r in runs):
                continue
            # the untrained model is this record's epoch 0 only where the record's model is the same one
            same = all(
                json.loads((r / "config.json").read_text())["hparams"]
                == json.loads((model_dir / s / "config.json").read_text())["hparams"]
                for r, s in zip(runs, seeds)
            )
            for split in ("dev", "test"):
                row[f"{record} {split} MAP (same seeds)"] = (
                    cell([metrics(r)[split]["MAP"] for r in runs]) if same else "other hparams"
                )
        rows.append(row)
    return pd.DataFrame(rows).fillna("—").to_markdown(index=False)


def curve(log: pd.DataFrame, column: str) -> str:
    """The column's values by epoch: every epoch of a short run, every 10th or 50th (and the last) of a long one."""
    if column not in log:
        return "—"
    every = 1 if len(log) <= 12 else 10 if len(log) <= 100 else 50
    rows = log[(log.epoch % every == 0) | (log.epoch == log.epoch.iloc[-1])]
    return " ".join(f"{v:.3f}" if every == 1 else f"{e}: {v:.3f}" for e, v in zip(rows.epoch, rows[column]))


def planted_table() -> str:
    rows = []
    for run in sorted(r.parent for r in (HERE / "runs" / "planted").glob("*/seed*/metrics.json")):
        log = pd.read_csv(run / "log.csv")
        cfg, m = json.loads((run / "config.json").read_text()), metrics(run)
        t, h = cfg["train"], cfg["hparams"]
        neg = t.get("negatives", {})
        recipe = (
            "none (BM25 over the tokens)"
            if cfg["arch"] == "bm25"
            else (
                f"{t['optimizer']} lr {t['lr']} {t.get('lr_schedule', 'constant')}, batch {t['batch_size']}"
                + (f" x {t['max_batches']}" if t.get("max_batches") else "")
                + f", margin {t.get('margin')}"
                + (
                    ", a random negative of the question's own candidates"
                    if neg.get("strategy", "pool") == "pool"
                    else f", the best of {neg.get('n', 1)} {neg['strategy']} negatives from the {neg.get('source', 'answers')}"
                )
                + "".join(f", {k} {h[k]}" for k in ("dropout", "lstm_dropout", "freeze_embeddings") if k in h)
            )
        )
        rows.append(
            {
                "run": run.parent.name,
                "epochs": "—" if cfg["arch"] == "bm25" else t["epochs"],
                "recipe": recipe,
                "dev MAP by epoch": curve(log, "dev_MAP"),
                "loss by epoch": curve(log, "loss"),
                "last epoch's s+ / s-": (
                    f"{log.pos_score.iloc[-1]:.3f} / {log.neg_score.iloc[-1]:.3f}" if "pos_score" in log else "—"
                ),
                "dev MAP (selected)": f"{m['dev']['MAP']:.4f}",
                "test MAP (selected)": f"{m['test']['MAP']:.4f}",
            }
        )
    return pd.DataFrame(rows).to_markdown(index=False)


RECIPE = HERE / "runs" / "recipe"
E2_RUNS = {"glove6b_50": "GloVe 6B 50-d", "word2vec_50": "word2vec-50 (WikiQA train)"}
E2_STEPS = (10, 50, 200)
WINDOW = 10  # a step's loss / s+ / s-: the mean over the WINDOW batches that end at it (a batch holds 20)


def seeds_of(name: str) -> list[Path]:
    return sorted(r.parent for r in (RECIPE / name).glob("seed*/metrics.json"))


def at_epoch(runs: list[Path], column: str, epoch: int) -> str:
    """mean ± std over the runs of log.csv's column at the epoch (after it: the weights it ended with)."""
    logs = [pd.read_csv(r / "log.csv").set_index("epoch") for r in runs]
    return cell([log.loc[epoch, column] for log in logs if epoch in log.index])


def at_step(runs: list[Path], column: str, step: int) -> str:
    values = []
    for r in runs:
        log = pd.read_csv(r / "batches.csv")
        if step <= log.step.max():
            values.append(log[(log.step > step - WINDOW) & (log.step <= step)][column].mean())
    return cell(values) if values else "—"


def vectors_table() -> str:
    rows = []
    for name, label in E2_RUNS.items():
        runs = seeds_of(name)
        if not runs:
            continue
        row = {"vectors": label, "seeds": ", ".join(r.name.removeprefix("seed") for r in runs)}
        for step in E2_STEPS:
            row[f"loss / s+ / s- at batch {step}"] = " / ".join(
                at_step(runs, c, step).removesuffix(f" (n={len(runs)})") for c in ("loss", "pos_score", "neg_score")
            )
        row["dev MAP after 2 epochs"] = at_epoch(runs, "dev_MAP", 2)
        row["test MAP after 2 epochs"] = at_epoch(runs, "test_MAP", 2)
        row["dev / test MAP, dev-selected of 4 epochs"] = (
            cell([metrics(r)["dev"]["MAP"] for r in runs]) + " / " + cell([metrics(r)["test"]["MAP"] for r in runs])
        )
        rows.append(row)
    return pd.DataFrame(rows).to_markdown(index=False)


# E2b: each row's runs (AP-CNN's are E2's) by vectors
ROWS = {"ap_cnn": "AP-CNN", "qa_cnn": "QA-CNN", "qa_bilstm": "QA-biLSTM", "ap_bilstm": "AP-biLSTM"}
E2B_RUNS = {f"{row}_{name}" for row in ROWS if row != "ap_cnn" for name in E2_RUNS}
E2C_RUNS = {f"e25_{row}_glove6b_50" for row in ROWS}
PUBLISHED = REPORTS.parent / "workflow/papers/published_results.csv"
RECORD = REPORTS / "device/apnet-wikiqa/runs/wikiqa"  # the paper recipe on word2vec-300, 25 epochs (GPU)


def other_rows_table() -> str:
    """E2b: every row of AP's WikiQA table at its paper recipe from the two 50-d vector sets, after 2 epochs."""
    rows = []
    for row, label in ROWS.items():
        test = {}
        for name, vectors in E2_RUNS.items():
            runs = seeds_of(name if row == "ap_cnn" else f"{row}_{name}")
            if not runs:
                continue
            test[name] = pd.Series([pd.read_csv(r / "log.csv").set_index("epoch").loc[2, "test_MAP"] for r in runs])
            t = json.loads((runs[0] / "config.json").read_text())["train"]
            last = pd.read_csv(runs[0] / "batches.csv").query("epoch == 2").step.max()  # epoch 2's last batch
            rows.append(
                {
                    "row": label,
                    "vectors": vectors,
                    "recipe": f"lr {t['lr']} {t['lr_schedule']}, margin {t['margin']}",
                    "seeds": ", ".join(r.name.removeprefix("seed") for r in runs),
                    **{
                        f"loss / s+ / s- at batch {step}": " / ".join(
                            at_step(runs, c, step).split(" ")[0] for c in ("loss", "pos_score", "neg_score")
                        )
                        for step in (10, last)
                    },
                    "dev MAP after 2 epochs": at_epoch(runs, "dev_MAP", 2),
                    "test MAP after 2 epochs": at_epoch(runs, "test_MAP", 2),
                }
            )
        if len(test) == 2:  # on the GloVe row
            rows[-2]["test MAP, GloVe − word2vec-50"] = f"{test['glove6b_50'].mean() - test['word2vec_50'].mean():+.4f}"
    return pd.DataFrame(rows).fillna("").to_markdown(index=False)


def epochs_table() -> str:
    """E2c: GloVe 6B 50-d at the paper's recipe and 25 epochs, dev-selected, beside the record's
    word2vec-300 runs of the same recipe (the same seeds, then all five) and the published value."""
    published = published_lookup(PUBLISHED, "apnet", "wikiqa")  # {(dataset, split, row, metric): value}
    rows = []
    for row, label in ROWS.items():
        runs = seeds_of(f"e25_{row}_glove6b_50")
        if not runs:
            continue
        logs = [pd.read_csv(r / "log.csv") for r in runs]
        glove = [metrics(r)["test"]["MAP"] for r in runs]
        recorded = {r.name: metrics(r)["test"]["MAP"] for r in sorted((RECORD / f"apnet_{row}_wikiqa").glob("seed*"))}
        value = published["wikiqa", "test", label, "MAP"]
        rows.append(
            {
                "row": label,
                "seeds": ", ".join(r.name.removeprefix("seed") for r in runs),
                "epochs": ", ".join(str(len(log)) for log in logs),
                "selected epoch (dev MAP)": ", ".join(str(log.epoch[log.dev_MAP.idxmax()]) for log in logs),
                "dev MAP": cell([metrics(r)["dev"]["MAP"] for r in runs]),
                "test MAP": cell(glove),
                "word2vec-300 record, same seeds": cell([recorded[r.name] for r in runs if r.name in recorded]),
                "word2vec-300 record, all seeds": cell(list(recorded.values())),
                "published": f"{value:.4f}",
                "gap (GloVe)": f"{pd.Series(glove).mean() - value:+.4f}",
            }
        )
    return pd.DataFrame(rows).to_markdown(index=False)


def recipe_table() -> str:
    """Each E3 run against the paper recipe's at the run's last epoch (log.csv's row: dev, and test scored
    beside it, never selecting): 2 epochs, or 1 for a partial (set beside the paper recipe's epoch 1)."""
    rows, paper = [], [pd.read_csv(r / "log.csv").set_index("epoch") for r in seeds_of("paper")]
    names = sorted(
        p.name
        for p in RECIPE.iterdir()
        if p.is_dir() and p.name not in {*E2_RUNS, *E2B_RUNS, *E2C_RUNS} and seeds_of(p.name)
    )
    partial = {n: min(pd.read_csv(r / "log.csv").epoch.max() for r in seeds_of(n)) for n in names}
    paper_epochs = [("paper", e) for e in sorted({2, *partial.values()}, reverse=True)]  # every epoch compared at
    for name, epoch in paper_epochs + sorted((n, e) for n, e in partial.items() if n != "paper"):
        runs = seeds_of(name)
        cfg = json.loads((runs[0] / "config.json").read_text())
        logs = [pd.read_csv(r / "log.csv").set_index("epoch") for r in runs]
        test = pd.Series([log.loc[epoch, "test_MAP"] for log in logs])
        rows.append(
            {
                "run": name,
                "change": {"paper": "none"}.get(name, _change(cfg)),
                "seeds": ", ".join(r.name.removeprefix("seed") for r in runs),
                "epoch": epoch,
                "batches / epoch": pd.read_csv(runs[0] / "batches.csv").groupby("epoch").size().iloc[0],
                "loss by epoch": " ".join(
                    f"{v:.3f}" for v in pd.concat([log.loss for log in logs], axis=1).mean(axis=1)[:epoch]
                ),
                "s+ / s- (that epoch's last tenth)": f"{at_epoch(runs, 'pos_score', epoch).split(' ')[0]} / "
                f"{at_epoch(runs, 'neg_score', epoch).split(' ')[0]}",
                "dev MAP": at_epoch(runs, "dev_MAP", epoch),
                "test MAP": at_epoch(runs, "test_MAP", epoch),
                "test MAP vs the paper recipe's at that epoch": "—"
                if name == "paper"
                else f"{test.mean() - pd.Series([p.loc[epoch, 'test_MAP'] for p in paper]).mean():+.4f}",
            }
        )
    return pd.DataFrame(rows).to_markdown(index=False)


def _change(cfg: dict) -> str:
    t, h, neg = cfg["train"], cfg["hparams"], cfg["train"]["negatives"]
    said = [
        f"train.rank_reduction {t['rank_reduction']}" if "rank_reduction" in t else "",
        f"train.batch_size {t['batch_size']}" if t["batch_size"] != 20 else "",
        f"train.lr {t['lr']}" if t["lr"] != 1.1 else "",
        f"conv_bias {h['conv_bias']}" if "conv_bias" in h else "",
        f"conv_padding {h['conv_padding']}" if "conv_padding" in h else "",
        f"negatives.source {neg['source']}" if "source" in neg else "",
    ]
    return ", ".join(s for s in said if s)


if __name__ == "__main__":
    print(
        "## E6: untrained\n\n"
        + untrained_table()
        + "\n\n## E5: planted signal\n\n"
        + planted_table()
        + "\n\n## E2: the vectors\n\n"
        + vectors_table()
        + "\n\n## E2b: the other rows\n\n"
        + other_rows_table()
        + "\n\n## E2c: 25 epochs\n\n"
        + epochs_table()
        + "\n\n## E3: the recipe\n\n"
        + recipe_table()
    )
