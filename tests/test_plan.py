"""`ansel plan`: device-minutes from per-batch costs measured per run shape."""

import json

import pytest
import torch

from ansel import plan as P
from ansel.config import load
from ansel.targets import Run, Variant


def smoke_synthetic_table_only() -> dict:
    """The smoke config building only the smoke paper's synthetic table (every other paper: nothing)."""
    papers = {paper: {"tables": [], "figures": []} for paper in load()["papers"]}
    return load(preset="smoke", papers={**papers, "smoke": {"tables": ["synthetic"], "figures": []}})


def one_device(sources) -> dict:
    """The costs ``sources`` measured on their one device."""
    (costs,) = P.costs_by_device(sources).values()
    return costs


def _measured(root, cfg, epochs):
    run = root / f"results/runs/{cfg['dataset']}/{cfg['model']}/seed{cfg['seed']}"
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps(cfg))
    timings = root / f"results/timings/{cfg['dataset']}/{cfg['model']}/seed{cfg['seed']}.json"
    timings.parent.mkdir(parents=True)
    timings.write_text(json.dumps({"train": {"device": "cuda:0", "epochs": epochs}}))


def test_a_cost_is_shared_by_runs_of_one_shape_and_not_by_others():
    config = load(preset="smoke")
    base = Run("synthetic_en", Variant("qa_cnn"), 1).config(config)
    other_seed = Run("synthetic_en", Variant("qa_cnn"), 2).config(config)
    assert (
        P.shape(base) == P.shape(other_seed) == P.shape({**base, "train": {**base["train"], "lr": 9.0, "epochs": 99}})
    )
    assert P.shape(base) != P.shape({**base, "hparams": {**base["hparams"], "filters": 4000}})


def test_the_estimate_multiplies_measured_costs_by_epochs_and_batches(tmp_path, monkeypatch):
    config = smoke_synthetic_table_only()
    cfg = Run("synthetic_en", Variant("qa_cnn"), 1).config(config)
    # 2 epochs measured: 0.5 s per batch, 3 s of dev scoring per epoch
    _measured(tmp_path, cfg, [{"epoch": e, "seconds": 4.0, "batches": 8, "dev_seconds": 3.0} for e in (1, 2)])
    monkeypatch.setattr(P, "train_examples", lambda processed: (1000, 2000))  # ceil(1000/32) = 32 > max_batches 8
    table = P.plan(config, one_device([tmp_path])).set_index("item")
    row = table.loc["synthetic"]
    # qa_cnn measured on synthetic_en (2 seeds), random costs nothing (2 datasets x 2 seeds); qa_lstm and
    # synthetic_zh's qa_cnn are other shapes
    assert (row["runs"], row["measured runs"], row["batches/epoch"], row["measured on"]) == (12, 6, "8", "cuda:0")
    epochs = cfg["train"]["epochs"]
    assert row["device-minutes (measured runs)"] == pytest.approx(round(2 * epochs * (8 * 0.5 + 3.0) / 60, 1))
    assert table.loc["(each run once)", "runs"] == 12


def test_runs_of_unprocessed_data_have_unknown_batches(tmp_path, monkeypatch):
    monkeypatch.setattr(P, "train_examples", lambda processed: None)
    cfg = Run("synthetic_en", Variant("qa_cnn"), 1).config(load(preset="smoke"))
    assert P.batches_per_epoch(cfg, {"synthetic_en": None}) is None
    assert P.batches_per_epoch(cfg, {"synthetic_en": (100, 1000)}) == 4  # ceil(100 / 32): a positive a triple
    classify = {**cfg, "train": {**cfg["train"], "loss": "classification", "max_batches": None}}
    assert P.batches_per_epoch(classify, {"synthetic_en": (100, 1000)}) == 32  # every labelled pair: ceil(1000 / 32)


def test_a_missing_costs_directory_is_refused_naming_it(tmp_path, capsys):
    from ansel import cli

    with pytest.raises(SystemExit, match="--costs: no such directory: .*nowhere"):
        cli.main(["plan", "--costs", str(tmp_path / "nowhere")])


def synthetic_corpus(tmp_path, monkeypatch, train: int) -> None:
    """A small synthetic corpus, processed, that both synthetic datasets of the smoke preset read."""
    from ansel.data.readers.synthetic import Synthetic
    from ansel.data.vocab import Vocab, training_texts

    corpus = tmp_path / "processed"
    s = Synthetic()
    s.fetch(tmp_path / "raw", None, {"seed": 5, "questions": {"train": train, "dev": train // 3, "test": train // 3}})
    ds = s.read(tmp_path / "raw", {"language": "en", "tokenizer": "english", "name": "syn"})
    ds.save(corpus)
    Vocab.build(training_texts(ds)).save(corpus / "vocab.json")
    monkeypatch.setattr(P.T, "processed_dir", lambda dataset: str(corpus))


def test_measure_times_every_unmeasured_shape_once_and_the_plan_reads_it(tmp_path, monkeypatch):
    synthetic_corpus(tmp_path, monkeypatch, 60)
    config = smoke_synthetic_table_only()
    lines = []
    path = P.measure(P.unmeasured_shapes(config, {}), tmp_path / "results/costs", batches=1, report=lines.append)
    costs = json.loads(path.read_text())
    capability = torch.backends.cpu.get_cpu_capability()  # a CPU's cost names its instruction set
    # 2 trained models x 2 datasets (random has nothing to train: nothing to measure)
    assert path.name == f"cpu-{capability}.json" and len(costs) == len(lines) == 4
    assert all(c["dev_seconds"] > 0 and c["device"] == f"cpu/{capability}" for c in costs.values())
    row = P.plan(config, one_device([tmp_path])).set_index("item").loc["synthetic"]
    assert row["measured runs"] == row["runs"] == 12 and row["device-minutes (measured runs)"] >= 0
    cuda = P.plan_costs(config, [tmp_path], "cuda")[1]
    assert P.plan(config, cuda).set_index("item").loc["synthetic"]["measured runs"] == 4  # random
    assert P.unmeasured_shapes(config, one_device([tmp_path])) == []  # nothing left
    # an epoch's batches are kept beside each cost: a checkout without the processed data prices the runs too
    epoch = row["batches/epoch"]  # from the processed data's training pairs
    assert [str(c["batches"]) for c in costs.values()] == [epoch] * 4
    monkeypatch.setattr(P, "train_examples", lambda processed: None)
    row = P.plan(config, one_device([tmp_path])).set_index("item").loc["synthetic"]
    assert (row["measured runs"], row["batches/epoch"]) == (12, epoch)
    path.write_text(json.dumps({k: {**c, "batches": None} for k, c in costs.items()}))  # a cost kept without them
    assert P.plan(config, one_device([tmp_path])).set_index("item").loc["synthetic"]["measured runs"] == 4


def test_measure_times_what_this_machine_has_not_measured_and_prices_on_it(tmp_path, monkeypatch, capsys):
    """``--measure`` took the missing shapes of the device the plan priced on (another CPU's, a GPU's, whichever
    priced the most runs), timed them here under this machine's name, then priced on that other device again:
    what it measured was never read. It now measures what this machine's device lacks and prices on it."""
    from ansel import cli

    monkeypatch.setattr(P, "train_examples", lambda processed: None)
    config = load(preset="smoke")
    cnn = Run("synthetic_en", Variant("qa_cnn"), 1).config(config)
    other = _cost_folders(tmp_path / "other", ("cpu/ELSEWHERE", (cnn,)))
    asked = []
    monkeypatch.setattr(P, "unmeasured_shapes", lambda config, known: asked.append(known) or [])
    monkeypatch.setattr(P, "measure", lambda shapes, out, batches: None)
    cli.main(["plan", "--preset", "smoke", "--measure", "--costs", *map(str, other)])
    here = f"cpu/{torch.backends.cpu.get_cpu_capability()}"
    assert asked == [{}] and "no cost measured on " not in capsys.readouterr().err
    with pytest.raises(SystemExit, match=f"--device cuda with --measure: the shapes are timed here, on {here}"):
        cli.main(["plan", "--preset", "smoke", "--measure", "--device", "cuda", "--costs", *map(str, other)])


def test_measure_stops_at_its_deadline_and_goes_on_past_a_failing_shape(tmp_path, monkeypatch):
    from ansel.training import trainer

    synthetic_corpus(tmp_path, monkeypatch, 30)
    calls = []

    def fails_once(cfg, data, dev, batches):  # e.g. one shape out of the device's memory
        calls.append(cfg["model"])
        if len(calls) == 1:
            raise RuntimeError("CUDA out of memory")
        return {"device": "cpu/X", "seconds_per_batch": 0.1, "dev_seconds": 0.2}

    monkeypatch.setattr(trainer, "measure_costs", fails_once)
    shapes, lines = P.unmeasured_shapes(smoke_synthetic_table_only(), {}), []
    path = P.measure(shapes, tmp_path / "costs", report=lines.append)
    assert "failed: RuntimeError: CUDA out of memory" in lines[0]
    assert len(json.loads(path.read_text())) == len(shapes) - 1
    lines.clear()
    assert P.measure(shapes, tmp_path / "late", deadline=0, report=lines.append) is None
    assert lines == [f"deadline: {len(shapes)} of {len(shapes)} shapes left unmeasured"]


def test_a_record_layout_is_read_with_its_device_and_instruction_set(tmp_path):
    run = tmp_path / "runs/wikiqa/qa_cnn/seed1"
    run.mkdir(parents=True)
    cfg = {
        "dataset": "wikiqa",
        "model": "qa_cnn",
        "arch": "qa_cnn",
        "hparams": {"filters": 8},
        "max_len_q": 4,
        "max_len_a": 8,
        "train": {"batch_size": 2, "negatives": {"n": 1}, "max_batches": None},
    }
    (run / "config.json").write_text(json.dumps(cfg))
    epochs = [{"seconds": 2.0, "batches": 4, "dev_seconds": 1.0}, {"seconds": 4.0, "batches": 4, "dev_seconds": 3.0}]
    (run / "timings.json").write_text(
        json.dumps({"train": {"device": "cpu", "cpu_capability": "AVX2", "epochs": epochs}})
    )
    (gpu := tmp_path / "costs").mkdir()
    other = {**cfg, "dataset": "trecqa"}
    (gpu / "cuda-NVIDIA-H200.json").write_text(
        json.dumps(
            {
                P.shape(other): {
                    "device": "cuda/NVIDIA H200",
                    "seconds_per_batch": 0.01,
                    "dev_seconds": 0.5,
                    "peak_mb": 300,
                }
            }
        )
    )
    costs = P.costs_by_device([tmp_path])
    cpu = costs["cpu/AVX2"][P.shape(cfg)]
    assert (cpu.seconds_per_batch, cpu.dev_seconds, list(costs["cpu/AVX2"])) == (0.75, 2.0, [P.shape(cfg)])
    assert costs["cuda/NVIDIA H200"][P.shape(other)].peak_mb == 300
    assert list(P.device_costs([], [tmp_path], "cuda")[1]) == [P.shape(other)]
    assert P.device_costs([], [tmp_path], "cpu/AVX512")[:2] == (None, {})


def test_the_committed_records_count_as_measured_by_default():
    from ansel.config import load, root

    sources = P.default_sources()
    assert root() / "reports/cpu-amvlstm" in sources and root() / "reports/device/costs-full" in sources
    assert any(device.startswith("cuda/") for device in P.costs_by_device(sources))
    planned = P.plan(load(preset="cpu"), P.plan_costs(load(preset="cpu"), sources)[1]).set_index("item")
    assert planned.loc["(each run once)", "measured runs"] > 0


def test_another_devices_cost_of_a_shape_never_hides_this_devices(tmp_path):
    cfg = {
        "dataset": "wikiqa",
        "model": "qa_cnn",
        "arch": "qa_cnn",
        "hparams": {},
        "max_len_q": 4,
        "max_len_a": 8,
        "train": {"batch_size": 2, "negatives": {"n": 1}, "max_batches": None},
    }
    cpu, gpu = tmp_path / "cpu", tmp_path / "gpu"  # the GPU record is read after the CPU checkout
    for src, device in ((cpu, "cpu/AVX512"), (gpu, "cuda/NVIDIA H200")):
        (src / "costs").mkdir(parents=True)
        (src / "costs/c.json").write_text(
            json.dumps({P.shape(cfg): {"device": device, "seconds_per_batch": 0.5, "dev_seconds": 1.0}})
        )
    assert P.device_costs([cfg], [cpu, gpu], "cpu")[1][P.shape(cfg)].device == "cpu/AVX512"
    assert P.device_costs([cfg], [cpu, gpu], "cuda")[1][P.shape(cfg)].device == "cuda/NVIDIA H200"


def _cost_folders(root, *measured: tuple[str, tuple[dict, ...]]) -> list:
    """A folder of costs for each (device, the run configs whose shapes it measured), in that order."""
    sources = []
    for i, (device, cfgs) in enumerate(measured):
        (root / f"{i}/costs").mkdir(parents=True)
        cost = {"device": device, "seconds_per_batch": 0.5, "dev_seconds": 1.0, "batches": 4}
        (root / f"{i}/costs/c.json").write_text(json.dumps({P.shape(c): cost for c in cfgs}))
        sources.append(root / str(i))
    return sources


def test_a_plan_prices_on_one_device_never_adding_two_devices_minutes(tmp_path, monkeypatch, capsys):
    """A new user's audit: without --device, ``ansel plan --preset full`` added CPU-minutes and GPU-minutes into
    one total, each shape priced on the device of the cost folder read last. A plan now prices on one device:
    the one whose costs price the most of the preset's trained runs, of those --device starts when given."""
    from ansel import cli

    monkeypatch.setattr(P, "train_examples", lambda processed: None)  # the costs' own batches per epoch
    config = load(preset="smoke")
    cnn, lstm = (Run("synthetic_en", Variant(m), 1).config(config) for m in ("qa_cnn", "qa_lstm"))
    # the GPU's qa_cnn cost read after the CPU's
    sources = _cost_folders(tmp_path, ("cpu/AVX512", (cnn, lstm)), ("cuda/NVIDIA H200", (cnn,)))
    device, costs, priced = P.plan_costs(config, sources)
    assert device == "cpu/AVX512" and {c.device for c in costs.values()} == {"cpu/AVX512"} and len(costs) == 2
    assert priced["cpu/AVX512"] > priced["cuda/NVIDIA H200"] > 0
    assert P.plan_costs(config, sources, "cuda")[:2] == (
        "cuda/NVIDIA H200",
        P.costs_by_device(sources)["cuda/NVIDIA H200"],
    )
    cli.main(["plan", "--preset", "smoke", "--costs", *map(str, sources)])
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if "cpu/" in line and "cuda/" in line] == [
        f"priced on cpu/AVX512 alone (a total never adds two devices' minutes): of the devices measured, the one "
        f"whose costs price the most of the preset's trained runs ({priced['cpu/AVX512']}); the others measured "
        f"(--device picks one by its name or a prefix): cuda/NVIDIA H200 ({priced['cuda/NVIDIA H200']} runs)"
    ]
    assert "one at a time on cpu/AVX512: " in out


def test_device_names_a_device_exactly_before_it_is_read_as_a_prefix(tmp_path, monkeypatch, capsys):
    """A user's audit: ``--device cpu``, read as a prefix only, priced on ``cpu/AVX512`` wherever it priced more
    runs: the plain ``cpu`` (timings that name no instruction set) could never be chosen. A device's whole name
    now prices on that device; any other --device is a prefix, as before."""
    from ansel import cli

    monkeypatch.setattr(P, "train_examples", lambda processed: None)
    config = load(preset="smoke")
    cnn, lstm = (Run("synthetic_en", Variant(m), 1).config(config) for m in ("qa_cnn", "qa_lstm"))
    sources = _cost_folders(tmp_path, ("cpu", (cnn,)), ("cpu/AVX512", (cnn, lstm)))
    assert [P.plan_costs(config, sources, d)[0] for d in ("cpu", "cpu/", None)] == ["cpu", "cpu/AVX512", "cpu/AVX512"]
    priced = P.plan_costs(config, sources)[2]
    cli.main(["plan", "--preset", "smoke", "--device", "cpu", "--costs", *map(str, sources)])
    out = capsys.readouterr().out
    assert (
        "priced on cpu alone (a total never adds two devices' minutes): of the devices measured named cpu, the one "
        f"whose costs price the most of the preset's trained runs ({priced['cpu']}); the others measured (--device "
        f"picks one by its name or a prefix): cpu/AVX512 ({priced['cpu/AVX512']} runs)"
    ) in out


def test_a_device_named_exactly_that_prices_none_of_the_runs_gives_way_to_its_prefix(tmp_path, monkeypatch):
    """``--device cpu`` on the paper preset priced 0 runs on the plain ``cpu`` (timings that name no instruction
    set, of shapes the preset does not train) though cpu/AVX512 priced 235: its prefix's devices are chosen from."""
    monkeypatch.setattr(P, "train_examples", lambda processed: None)
    config = load(preset="smoke")
    cnn = Run("synthetic_en", Variant("qa_cnn"), 1).config(config)
    elsewhere = {**cnn, "dataset": "wikiqa"}  # a shape of no run of the preset
    sources = _cost_folders(tmp_path, ("cpu", (elsewhere,)), ("cpu/AVX512", (cnn,)))
    device, _, priced = P.plan_costs(config, sources, "cpu")
    assert priced["cpu"] == 0 and device == "cpu/AVX512" and priced[device] > 0


def test_a_record_of_log_csv_alone_is_priced_on_the_device_its_config_names(tmp_path):
    """A record made before timings files keeps seconds per batch in log.csv alone (reports/device/apnet-wikiqa-h100):
    its costs were a device named by its folder (``record /.../apnet-wikiqa-h100``). Its config names the device,
    not which GPU: ``cuda/?``, never the device an exact ``--device cuda`` names."""
    cfg = _timed_run(tmp_path, "wikiqa", 1, 2, 0.0)
    run = tmp_path / "runs/wikiqa/qa_cnn/seed1"
    (run / "timings.json").unlink()
    (run / "config.json").write_text(json.dumps({**cfg, "train": {**cfg["train"], "device": "cuda"}}))
    (run / "log.csv").write_text("epoch,seconds,seconds_per_batch\n1,5.0,0.5\n2,2.5,0.25\n")
    costs = P.costs_by_device([tmp_path])
    assert list(costs) == ["cuda/?"] and costs["cuda/?"][P.shape(cfg)].seconds_per_batch == 0.375
    assert P.device_costs([cfg], [tmp_path], "cuda")[0] == "cuda/?"  # a prefix of it


def test_a_ranker_with_nothing_to_train_costs_nothing_and_counts_as_measured():
    cfg = Run("synthetic_en", Variant("lexical_bm25"), 1).config(load(preset="smoke"))
    assert P.plan_minutes(cfg, {}, {}) == (0.0, None)


def test_the_budget_chooses_the_cheapest_items_counting_a_shared_run_once(monkeypatch):
    config = load(preset="smoke")
    runs = {m: [Run("synthetic_en", Variant(m), s) for s in (1, 2)] for m in ("qa_cnn", "qa_lstm", "random")}
    cost = {"qa_cnn": 10.0, "qa_lstm": 30.0, "random": None}  # random: its shape unmeasured here
    monkeypatch.setattr(P, "plan_minutes", lambda cfg, costs, positives: (cost[cfg["model"]], None))
    items = [
        ("a", "cnn", runs["qa_cnn"]),  # 20 min
        ("a", "both", runs["qa_cnn"] + runs["qa_lstm"]),  # 80, of which 60 new after "cnn"
        ("b", "lstm", runs["qa_lstm"]),  # 60
        ("b", "unmeasured", runs["random"]),
    ]
    assert P.choose(config, items, {}, {}, 80) == ["a/cnn", "b/lstm", "a/both"]  # 20 + 60 + 0 new
    assert P.choose(config, items, {}, {}, 79) == ["a/cnn"]  # neither 60-minute item fits after it


def test_plan_options_are_checked(capsys):
    from ansel import cli

    with pytest.raises(SystemExit, match="--budget-hours: give --cores too"):
        cli.main(["plan", "--preset", "smoke", "--budget-hours", "6"])
    with pytest.raises(SystemExit, match="--papers: nope: not a paper of the preset"):
        cli.main(["plan", "--preset", "smoke", "--papers", "nope"])
    with pytest.raises(SystemExit, match=r"--device cdua: no cost measured on it .*measured: .*cpu"):
        cli.main(["plan", "--preset", "smoke", "--device", "cdua"])
    for flag, value in (("--cores", "-2"), ("--cores", "0"), ("--budget-hours", "-1")):
        with pytest.raises(SystemExit):
            cli.main(["plan", "--preset", "smoke", "--cores", "2", flag, value])
        assert f"argument {flag}: must be above 0, not {value}" in capsys.readouterr().err


def test_the_paper_preset_plans_with_each_items_wall_hours_and_its_choice():
    config = load(preset="paper")
    costs = P.plan_costs(config, P.default_sources(), "cpu")[1]
    table = P.plan(config, costs, cores=2, budget_hours=6).set_index("item")
    assert {"wall hours on 2 cores", "chosen"} <= set(table.columns)
    assert "table2" not in table.index and "table2_v2" in table.index  # InsuranceQA V1: in no mirror
    assert table.loc["figure3", "epochs"] == "500" and table.loc["table3", "epochs"] == "400"  # the papers' own


def test_a_shape_is_keyed_by_what_changes_the_arithmetic_only():
    """Issue 53 item 6: a default given or left out, the value-only hyperparameters (unit-length initial
    vectors, the initial weights' distribution, one encoder or two of one size) and a dropout rate's
    value (not whether it is 0) never split a shape; a size, a frozen table, a sparse update and MTAS's
    classifier alone do."""
    config = load(preset="paper")
    ggsa = Run("insuranceqa_v2", Variant("ggsa_group_sa_insuranceqa"), 1).config(config)
    assert ggsa["hparams"]["shared_encoder"] is False  # the paper's two encoders, added after costs-full ran

    def with_(cfg, train=None, **hparams):
        return P.shape({**cfg, "hparams": {**cfg["hparams"], **hparams}, "train": {**cfg["train"], **(train or {})}})

    same = [
        with_(ggsa, shared_encoder=True),
        with_(ggsa, heads=6),
        with_(ggsa, dropout=0.5),
        with_(ggsa, train={"embedding_updates": "dense"}),
    ]
    assert set(same) == {P.shape(ggsa)}
    assert (
        len(
            {
                P.shape(ggsa),
                with_(ggsa, dropout=0.0),
                with_(ggsa, heads=4),
                with_(ggsa, freeze_embeddings=True),
                with_(ggsa, train={"embedding_updates": "sparse"}),
                with_(ggsa, train={"loss": "category"}),
            }
        )
        == 6
    )
    arc_i = Run("wikiqa_mz", Variant("amv_arc_i_wikiqa"), 1).config(config)
    assert arc_i["hparams"]["normalize_embeddings"] is True  # also added after costs-full ran
    assert with_(arc_i, normalize_embeddings=False) == P.shape(arc_i)
    lstm = Run("synthetic_en", Variant("qa_lstm"), 1).config(load(preset="smoke"))
    assert with_(lstm, init="tf") == with_(lstm, init="torch")


def test_a_cost_keyed_before_the_keys_it_lacks_prices_the_runs_of_its_shape(tmp_path):
    """A committed cost's key written with the hyperparameters as the config gave them then (no
    shared_encoder, no defaults, no train options added since) prices today's runs of that arithmetic."""
    cfg = Run("insuranceqa_v2", Variant("ggsa_group_sa_insuranceqa"), 1).config(load(preset="paper"))
    old = {
        "dataset": cfg["dataset"],
        "arch": cfg["arch"],
        "max_len_q": cfg["max_len_q"],
        "max_len_a": cfg["max_len_a"],
        "hparams": {k: v for k, v in cfg["hparams"].items() if k != "shared_encoder"},
        **{k: cfg["train"].get(k) for k in P.TRAIN_SHAPE_KEYS},
    }
    (tmp_path / "costs").mkdir()
    (tmp_path / "costs/cuda.json").write_text(
        json.dumps(
            {json.dumps(old): {"device": "cuda/X", "seconds_per_batch": 0.02, "dev_seconds": 1.0, "batches": 100}}
        )
    )
    costs = one_device([tmp_path])
    assert list(costs) == [P.shape(cfg)]
    minutes, _ = P.plan_minutes(cfg, costs, {cfg["dataset"]: None})
    assert minutes == pytest.approx(cfg["train"]["epochs"] * (100 * 0.02 + 1.0) / 60)


def _timed_run(root, dataset, seed, epochs, outside):
    """A record's run of ``epochs`` epochs (10 batches in 1 s, dev scoring 0.5 s) and ``outside`` seconds besides."""
    run = root / f"runs/{dataset}/qa_cnn/seed{seed}"
    run.mkdir(parents=True)
    cfg = {
        "dataset": dataset,
        "model": "qa_cnn",
        "arch": "qa_cnn",
        "hparams": {},
        "max_len_q": 4,
        "max_len_a": 8,
        "train": {"batch_size": 2, "negatives": {"n": 1}, "max_batches": None, "epochs": epochs},
    }
    (run / "config.json").write_text(json.dumps(cfg))
    (run / "timings.json").write_text(
        json.dumps(
            {
                "train": {
                    "device": "cuda:0",
                    "device_name": "H",
                    "started": 1000.0,
                    "finished": 1000.0 + epochs * 1.5 + outside,
                    "epochs": [{"seconds": 1.0, "batches": 10, "dev_seconds": 0.5}] * epochs,
                }
            }
        )
    )
    return cfg


def test_checkpoints_and_start_up_are_fitted_from_the_timed_runs_and_counted(tmp_path):
    """Issue 53 item 6: a run's time outside its epochs (state.pt after each, the start) is fitted over the
    timed runs of its device, start + epochs x per epoch, and added to every run that device prices."""
    short = _timed_run(tmp_path, "a", 1, 4, 5.0 + 4 * 0.25)
    _timed_run(tmp_path, "b", 1, 40, 5.0 + 40 * 0.25)
    costs = one_device([tmp_path])
    overhead = costs[P.shape(short)].overhead
    assert (overhead.start_seconds, overhead.epoch_seconds, overhead.runs) == (
        pytest.approx(5.0),
        pytest.approx(0.25),
        2,
    )
    parts, _ = P.run_parts({**short, "train": {**short["train"], "epochs": 100}}, costs, {"a": None})
    assert parts == pytest.approx(
        {
            "training": 100 * 1.0 / 60,
            "dev scoring": 100 * 0.5 / 60,
            "checkpoints": 100 * 0.25 / 60,
            "start-up": 5.0 / 60,
        }
    )
    # a run resumed in a later process (its epochs all, its start the last process's) moves no median
    _timed_run(tmp_path, "b", 2, 40, -50.0)
    _timed_run(tmp_path, "b", 3, 40, 5.0 + 40 * 0.25)
    assert one_device([tmp_path])[P.shape(short)].overhead.epoch_seconds == pytest.approx(0.25)
    assert P.Overhead.fit([(4, 9.0), (40, 1.0)]) == P.Overhead(5.0, 0.0, 2)  # no part below 0
    one = tmp_path / "one"  # one epoch count cannot tell the start from the epochs: nothing counted
    _timed_run(one, "a", 1, 4, 6.0)
    _timed_run(one, "a", 2, 4, 6.0)
    assert one_device([one])[P.shape(short)].overhead is None
    assert set(P.run_parts(short, one_device([one]), {"a": None})[0]) == {"training", "dev scoring"}


def test_monitored_splits_scored_every_n_steps_cost_a_scoring_each(tmp_path):
    cfg = _timed_run(tmp_path, "a", 1, 2, 0.0)
    costs = one_device([tmp_path])  # 10 batches an epoch, dev scoring 0.5 s
    every = {**cfg, "train": {**cfg["train"], "monitor_splits": ["test"], "monitor_every": 5}}
    parts, _ = P.run_parts(every, costs, {"a": None})
    assert parts["dev scoring"] == pytest.approx(2 * (1 + 10 / 5) * 0.5 / 60)  # dev, and test twice an epoch


def test_the_whole_preset_is_priced_in_minutes_and_leases_and_every_unpriced_shape_named(tmp_path, capsys):
    from ansel import commands

    config = smoke_synthetic_table_only()
    cfg = Run("synthetic_en", Variant("qa_cnn"), 1).config(config)
    (tmp_path / "costs").mkdir()
    (tmp_path / "costs/c.json").write_text(
        json.dumps(
            {
                P.shape(cfg): {
                    "device": "cuda/X",
                    "seconds_per_batch": 60.0 / cfg["train"]["epochs"],
                    "dev_seconds": 0.0,
                    "batches": 10,
                }
            }
        )
    )
    r = P.reproduction(config, one_device([tmp_path]), {"synthetic_en": None, "synthetic_zh": None})
    # qa_cnn on synthetic_en: 10 minutes a run (over one command's 9), 2 seeds; the 2 x 2 others unpriced
    assert (r["priced"], r["minutes"], len(r["long runs"])) == (2, pytest.approx(20.0), 2)
    assert (r["leases"], r["packed leases"]) == (2, 1)  # 20 / 13 one at a time; 20 / (13 x 2.4) packed
    assert sorted((c["dataset"], c["model"], n) for c, n, _ in r["unpriced"].values()) == [
        ("synthetic_en", "qa_lstm", 2),
        ("synthetic_zh", "qa_cnn", 2),
        ("synthetic_zh", "qa_lstm", 2),
    ]
    assert r["overheads"] == {"cuda/X": None}
    commands.print_reproduction(r, "cuda")
    out = capsys.readouterr().out
    assert (
        "20.0 device-minutes (training 20.0 + dev scoring 0.0 + checkpoints 0.0 + start-up 0.0) for 2 runs; 6 runs unpriced"
        in out
    )
    assert "checkpoints and start-up on cuda/X: not counted" in out
    assert "leases (13 device-minutes of each used): 2 one run at a time, 1 at the kit's packing" in out
    assert "runs over one command's 9 minutes alone: 2 (20.0 minutes)" in out
    commands.print_reproduction({**r, "overheads": {"cpu/AVX2": None}}, "cpu")
    assert "leases" not in capsys.readouterr().out  # a CPU's minutes take no GPU lease
    assert out.count("unmeasured: {") == 3 and '"dataset": "synthetic_zh"' in out


def _speed_record(root, cfg, device, alone, stacks, failed=None):
    """A speed entry's record: ``cfg``'s shape alone (seconds a step) in costs/, its ``stacks`` ({seeds:
    seconds a step of them all}) and ``failed`` stacks beside it in bench/speed.json."""
    (root / "costs").mkdir(parents=True, exist_ok=True)
    path = root / "costs" / f"{device.replace('/', '-')}.json"
    costs = json.loads(path.read_text()) if path.exists() else {}
    costs[P.shape(cfg)] = {"device": device, "seconds_per_batch": alone, "dev_seconds": 6.0, "batches": 10}
    path.write_text(json.dumps(costs))
    (root / "bench").mkdir(exist_ok=True)
    speed = root / "bench/speed.json"
    entries = json.loads(speed.read_text()) if speed.exists() else {}
    variants = {"torch": {"seeds": 1, "seconds_per_batch": alone}}
    variants |= {f"torch stacked x{n}": {"seeds": n, "seconds_per_batch": s} for n, s in stacks.items()}
    failed = {f"torch stacked x{n}": why for n, why in (failed or {}).items()}
    entries[P.shape({**cfg, "train": {**cfg["train"], "precision": None}})] = {"variants": variants, "failed": failed}
    speed.write_text(json.dumps(entries))


def test_a_rows_seeds_are_priced_as_one_stack_where_a_stack_of_them_was_measured_beside_its_cost(tmp_path, capsys):
    from ansel import commands

    config = smoke_synthetic_table_only()  # qa_cnn and qa_lstm, 2 seeds each, on synthetic_en and _zh
    cnn_en, cnn_zh, lstm_en = (
        Run(d, Variant(m), 1).config(config)
        for d, m in [("synthetic_en", "qa_cnn"), ("synthetic_zh", "qa_cnn"), ("synthetic_en", "qa_lstm")]
    )
    epochs = cnn_en["train"]["epochs"]
    _speed_record(tmp_path / "a", cnn_en, "cuda/X", 6.0 / epochs, {2: 9.0 / epochs})  # 1 min a step: 1.5 stacked
    _speed_record(tmp_path / "a", cnn_zh, "cuda/X", 6.0 / epochs, {5: 1.0 / epochs})  # not a stack of 2
    _speed_record(tmp_path / "a", lstm_en, "cuda/X", 6.0 / epochs, {})  # LSTMs do not stack: not named
    _speed_record(tmp_path / "b", cnn_zh, "cuda/Y", 6.0 / epochs, {})  # a later source's cost, no stack
    examples = {"synthetic_en": None, "synthetic_zh": None}
    costs = one_device([tmp_path / "a"])
    assert costs[P.shape(cnn_en)].stacks[2].seconds_per_batch == 9.0 / epochs
    r = P.reproduction(config, costs, examples)
    s = r["stacked"]
    # each run alone: 10 batches x 6 s x epochs / epochs = 1 min training + 6 s dev x epochs
    alone = 1.0 + epochs * 0.1
    assert r["minutes"] == pytest.approx(6 * alone)
    assert (s["stacks"], s["runs"]) == (1, 2)
    assert s["minutes"] == pytest.approx(1.5 + 2 * epochs * 0.1 + 4 * alone)  # its seeds' dev scored one by one
    ((cfg, n, why),) = s["lacking"].values()
    assert (cfg["dataset"], cfg["arch"], n) == ("synthetic_zh", "qa_cnn", 2)
    assert why == "no stack of 2 seeds measured on cuda/X (measured: stacks of 5)"
    commands.print_reproduction(r, "cuda")
    out = capsys.readouterr().out
    assert f"{6 * alone:.1f} device-minutes" in out and "1 stacks of 2 runs, 4 runs alone" in out
    assert "priced alone, their seeds stackable but no stack measured: 1 shapes, 2 runs" in out

    # a stack on another device than the cost is not read; nor one slower than its seeds alone
    assert not P.costs_by_device([tmp_path / "a", tmp_path / "b"])["cuda/Y"][P.shape(cnn_zh)].stacks
    _speed_record(tmp_path / "a", cnn_en, "cuda/X", 6.0 / epochs, {2: 13.0 / epochs})
    assert P.reproduction(config, one_device([tmp_path / "a"]), examples)["stacked"]["stacks"] == 0
    # a stack that failed on the device: the shape does not stack, nothing to measure
    _speed_record(tmp_path / "a", cnn_zh, "cuda/X", 6.0 / epochs, {}, {2: "StackError: vmap"})
    assert P.shape(cnn_zh) not in P.reproduction(config, one_device([tmp_path / "a"]), examples)["stacked"]["lacking"]


def test_a_later_leases_speed_file_beside_the_first_is_read(tmp_path):
    """An unpacked later lease's figures land beside the first's as bench/speed-<stamp>.json: its
    stacks price rows too, and a shape timed in both takes the later lease's figure."""
    cnn_en, cnn_zh = (
        Run(d, Variant("qa_cnn"), 1).config(load(preset="smoke")) for d in ("synthetic_en", "synthetic_zh")
    )
    _speed_record(tmp_path, cnn_en, "cuda/X", 1.0, {2: 1.5})
    first = (tmp_path / "bench/speed.json").read_text()
    _speed_record(tmp_path, cnn_en, "cuda/X", 1.0, {2: 1.2})
    _speed_record(tmp_path, cnn_zh, "cuda/X", 1.0, {2: 1.4})
    (tmp_path / "bench/speed.json").rename(tmp_path / "bench/speed-20261129T213125Z.json")
    (tmp_path / "bench/speed.json").write_text(first)
    costs = one_device([tmp_path])
    assert costs[P.shape(cnn_en)].stacks[2].seconds_per_batch == 1.2
    assert costs[P.shape(cnn_zh)].stacks[2].seconds_per_batch == 1.4


def test_a_costs_file_cannot_claim_a_stack(tmp_path):
    cfg = Run("synthetic_en", Variant("qa_cnn"), 1).config(load(preset="smoke"))
    (tmp_path / "costs").mkdir()
    (tmp_path / "costs/c.json").write_text(
        json.dumps({P.shape(cfg): {"device": "cuda/X", "seconds_per_batch": 1.0, "dev_seconds": 1.0, "stacks": {}}})
    )
    with pytest.raises(
        P.ConfigError, match=r"c.json: .*\.stacks: read from bench/speed.json, never read from a costs file"
    ):
        one_device([tmp_path])


def test_the_layers_say_whether_a_rows_seeds_stack():
    from ansel.plan_stacks import layers_stack

    config = load(preset="smoke")
    assert layers_stack(Run("synthetic_en", Variant("qa_cnn"), 1).config(config))
    assert not layers_stack(Run("synthetic_en", Variant("qa_lstm"), 1).config(config))


def test_a_run_trained_in_a_stack_measured_its_stack_not_one_seeds_step(tmp_path):
    cfg = Run("synthetic_en", Variant("qa_cnn"), 1).config(load(preset="smoke"))
    _speed_record(tmp_path, cfg, "cuda/X", 0.5, {})  # one seed alone, on the device the stack trained on
    _measured(tmp_path, cfg, [{"seconds": 30.0, "batches": 10, "dev_seconds": 2.0}])
    timings = tmp_path / f"results/timings/{cfg['dataset']}/{cfg['model']}/seed1.json"
    train = json.loads(timings.read_text())["train"]
    timings.write_text(json.dumps({"train": {**train, "device_name": "X", "stacked_seeds": 5}}))
    cost = one_device([tmp_path])[P.shape(cfg)]
    assert cost.seconds_per_batch == 0.5 and cost.stacks[5].seconds_per_batch == 3.0
