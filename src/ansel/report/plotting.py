"""Writing a matplotlib figure as png + pdf (headless; reproducible pdf bytes)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # cluster nodes and CI have no display
import matplotlib.pyplot as plt


def save(fig, prefix: str | Path) -> None:
    """``prefix``.png and ``prefix``.pdf; the pdf carries no creation date, so reruns give equal bytes."""
    prefix = Path(prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    for ext in ("png", "pdf"):
        fig.savefig(prefix.with_suffix(f".{ext}"), dpi=150, metadata={"CreationDate": None} if ext == "pdf" else None)
    plt.close(fig)
