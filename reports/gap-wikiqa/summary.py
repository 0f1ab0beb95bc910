"""The tables of reports/gap-wikiqa/README.md from the committed runs: E6 (each model untrained, beside
its trained runs of the same seeds in the records it came from) and E5 (the planted signal).

    python reports/gap-wikiqa/summary.py"""
import json
from pathlib import Path

import pandas as pd

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
            same = all(json.loads((r / "config.json").read_text())["hparams"]
                       == json.loads((model_dir / s / "config.json").read_text())["hparams"] for r, s in zip(runs, seeds))
            for split in ("dev", "test"):
                row[f"{record} {split} MAP (same seeds)"] = (cell([metrics(r)[split]["MAP"] for r in runs]) if same
                                                             else "other hparams")
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
        recipe = "none (BM25 over the tokens)" if cfg["arch"] == "bm25" else (
            f"{t['optimizer']} lr {t['lr']} {t.get('lr_schedule', 'constant')}, batch {t['batch_size']}"
            + (f" x {t['max_batches']}" if t.get("max_batches") else "") + f", margin {t.get('margin')}"
            + (", a random negative of the question's own candidates" if neg.get("strategy", "pool") == "pool"
               else f", the best of {neg.get('n', 1)} {neg['strategy']} negatives from the {neg.get('source', 'answers')}")
            + "".join(f", {k} {h[k]}" for k in ("dropout", "lstm_dropout", "freeze_embeddings") if k in h))
        rows.append({
            "run": run.parent.name, "epochs": "—" if cfg["arch"] == "bm25" else t["epochs"], "recipe": recipe,
            "dev MAP by epoch": curve(log, "dev_MAP"), "loss by epoch": curve(log, "loss"),
            "last epoch's s+ / s-": (f"{log.pos_score.iloc[-1]:.3f} / {log.neg_score.iloc[-1]:.3f}"
                                     if "pos_score" in log else "—"),
            "dev MAP (selected)": f"{m['dev']['MAP']:.4f}", "test MAP (selected)": f"{m['test']['MAP']:.4f}",
        })
    return pd.DataFrame(rows).to_markdown(index=False)


if __name__ == "__main__":
    print("## E6: untrained\n\n" + untrained_table() + "\n\n## E5: planted signal\n\n" + planted_table())
