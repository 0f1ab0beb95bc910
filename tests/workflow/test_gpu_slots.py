"""Several training jobs share one device: each reserves its run's device memory (Snakemake
resource ``gpu_mem_mb``), and ``--resources gpu_mem_mb=<device MB>`` caps what runs at once. On
CPU the same accounting holds, so the mechanism is tested here: a budget of two jobs' memory runs
two jobs at once and never three, though four cores would allow four."""

import itertools
import json

from tests.small_dag import run_env, sh


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    events = sorted(
        itertools.chain(((s, 1) for s, _ in spans), ((f, -1) for _, f in spans)), key=lambda e: (e[0], e[1])
    )  # an end before a start at the same instant
    return max(itertools.accumulate(n for _, n in events))


def test_jobs_share_the_device_up_to_its_memory(built_repo, tmp_path):
    repo = built_repo  # the small DAG built: its data is ready, and the 4 trainings below are all that runs
    env = run_env(repo, tmp_path / "site")
    seeds = 4
    targets = [f"results/runs/synthetic_en/qa_cnn/seed{s}/model.pt" for s in range(1, seeds + 1)]
    plan = sh(["snakemake", "-n", *targets, "--cores", "4", "--config", f"seeds={seeds}"], repo, env)
    assert "gpu_mem_mb=8000" in plan  # unmeasured runs reserve the preset's value (params.yaml)
    sh(
        [
            "snakemake",
            *targets,
            "--cores",
            "4",
            "--resources",
            "gpu_mem_mb=2000",
            "--set-resources",
            "train:gpu_mem_mb=1000",
            "--config",
            f"seeds={seeds}",
            "scale={train: {epochs: 6}}",
        ],
        repo,
        env,
    )
    spans = []
    for s in range(1, seeds + 1):
        train = json.loads((repo / f"results/timings/synthetic_en/qa_cnn/seed{s}.json").read_text())["train"]
        spans.append((train["started"], train["finished"]))
    assert _most_at_once(spans) == 2
