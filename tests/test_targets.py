import pytest

from ansel import figure_kinds as FK
from ansel import paper_targets as P
from ansel import targets as T
from ansel.config import ConfigError, load, load_paper, model_config
from ansel.specs import TableSpec, figure_spec, parse_table
from ansel.table_kinds import kind_of, spec_table

TRAIN = {
    "epochs": 1,
    "batch_size": 4,
    "optimizer": "adam",
    "lr": 1e-3,
    "loss": "hinge",
    "margin": 0.1,
    "select_metric": "MAP",
}
GGSA = {"arch": "ggsa", "hparams": {"embedding_dim": 60, "heads": 6, "group_size": 10}}


def sweep_spec(**over):
    return {
        "id": "fig",
        "kind": "sweep",
        "dataset": "ds",
        "splits": ["test"],
        "metric": "P@1",
        "x": "group_size",
        "values": [4, 10, 20],
        "base_model": "g",
        "reference_model": "ref",
        **over,
    }


def config(**over):
    return {
        "seeds": 2,
        "datasets": {"ds": {}, "syn": {}},
        "dataset_alias": {},
        "scale": {},
        "train": TRAIN,
        "models": {"g": GGSA, "ref": {"arch": "global_sa", "hparams": {"embedding_dim": 60}}},
        **over,
    }


def named(points):
    return [(value, variant.name) for value, variant in points]


def dirs(runs):
    return [r.dir for r in runs]


def test_sweep_derives_one_model_per_value_and_reuses_the_base_at_its_own_value():
    assert named(T.sweep_models(config(), sweep_spec())) == [(4, "g@group_size=4"), (10, "g"), (20, "g@group_size=20")]
    assert T.sweep_models(config(), sweep_spec())[0][1] == T.Variant("g", ("group_size", 4))
    # heads is not in the base's hparams: its dataclass default (6) is the base value
    assert named(T.sweep_models(config(), sweep_spec(x="heads", values=[1, 6]))) == [(1, "g@heads=1"), (6, "g")]


def test_sweep_runs_include_the_reference_model_for_every_seed():
    cfg = config(dataset_alias={"ds": "syn"})
    runs = FK.kind_of(sweep := figure_spec(cfg, "p", sweep_spec())).runs(cfg, sweep)
    assert dirs(runs) == sorted(
        f"results/runs/syn/{m}/seed{s}" for m in ["g@group_size=4", "g", "g@group_size=20", "ref"] for s in (1, 2)
    )
    assert T.Run("syn", T.Variant("g", ("group_size", 20)), 1) in runs


def test_sweep_rejects_non_numeric_values():
    with pytest.raises(ConfigError, match="'big' of group_size"):
        T.sweep_models(config(), sweep_spec(values=["big"]))


def test_derived_model_config_overrides_the_hparam_after_scale():
    m = model_config(config(scale={"hparams": {"group_size": 7, "embedding_dim": 30}}), "g", ("group_size", 20))
    assert m["hparams"] == {"embedding_dim": 30, "heads": 6, "group_size": 20}
    assert model_config(config(), "g")["hparams"]["group_size"] == 10


@pytest.mark.parametrize(
    "model,point,message",
    [
        ("g", ("window", 3), r"models\.g@window=3: window is neither a hyperparameter"),
        ("g", ("group_size", "ten"), r"models\.g@group_size=\"ten\"\.hparams\.group_size: 'ten' is not of type"),
        ("g", ("group_size", 1.5), r"models\.g@group_size=1\.5\.hparams\.group_size"),  # typed hparams reject a float
        ("nope", ("group_size", 4), "models.nope"),
    ],
)
def test_bad_points_are_named_errors(model, point, message):
    with pytest.raises(ConfigError, match=message):
        model_config(config(), model, point)


GRID = {"lr": 1e-4, "lr_grid": [1e-4, 5e-5], "select_metric": "P@1"}


def test_lr_grid_points_are_runs_and_the_models_own_lr_is_the_model_itself():
    cfg = config(models={"g": {**GGSA, "train": GRID}, "plain": {**GGSA, "train": {"lr": 0.1}}})
    assert named(T.grid_points(cfg, "g")) == [(1e-4, "g"), (5e-5, "g@lr=5e-05")]
    assert named(T.grid_points(cfg, "plain")) == [(0.1, "plain")]
    table = parse_table(
        cfg,
        "p",
        {
            "id": "t",
            "rows": [{"label": "G", "model": "g"}, {"label": "Prior", "model": None}],
            "columns": [{"dataset": "ds", "split": "test", "metric": "P@1"}],
        },
    )
    assert dirs(kind_of(table).runs(cfg, table)) == [
        f"results/runs/ds/{m}/seed{s}" for m in ("g", "g@lr=5e-05") for s in (1, 2)
    ]


def test_grid_point_config_sets_lr_after_scale_and_leaves_the_grid_out_of_the_run():
    from ansel.config import run_config

    cfg = config(
        models={"g": {**GGSA, "train": GRID}, "plain": {**GGSA, "train": {"lr": 0.1}}},
        train={**TRAIN, "epochs": 9},
        scale={"train": {"lr": 0.5, "lr_grid": [1e-4], "epochs": 1}},
        datasets={"ds": {"max_len_q": 5, "max_len_a": 9, "splits": ["train", "dev"]}},
    )
    assert model_config(cfg, "g", ("lr", 5e-5))["train"] == {
        **TRAIN,
        **GRID,
        "lr": 5e-5,
        "lr_grid": [1e-4],
        "epochs": 1,
    }
    run = run_config(cfg, "ds", "g", 1, ("lr", 5e-5))
    assert run["train"] == {**TRAIN, "lr": 5e-5, "select_metric": "P@1", "epochs": 1}
    assert run["model"] == "g@lr=5e-05"
    # the preset's grid only where the model has one
    assert "lr_grid" not in model_config(cfg, "plain")["train"]
    assert named(T.grid_points(cfg, "g")) == [(1e-4, "g@lr=0.0001")]  # the preset's lr 0.5 is the model's own
    # a preset's grid with none of the model's points leaves the model's own lr (MTAS's 0.3 under smoke's 1e-4)
    other = config(
        models={"m": {**GGSA, "train": {"lr": 0.3, "lr_grid": [0.3, 3.0]}}},
        train=TRAIN,
        scale={"train": {"lr_grid": [1e-4]}},
    )
    assert named(T.grid_points(other, "m")) == [(0.3, "m")]


def test_a_preset_can_sweep_fewer_points():
    spec = {**sweep_spec(), "paper": "p"}
    cfg = config(papers={"p": {"sweeps": {"fig": [10, 20]}}})
    assert named(T.sweep_models(cfg, spec)) == [(10, "g"), (20, "g@group_size=20")]
    assert named(T.sweep_models(cfg, {**spec, "id": "other"})) == [
        (4, "g@group_size=4"),
        (10, "g"),
        (20, "g@group_size=20"),
    ]


def test_figure_runs_per_kind():
    cfg = config(seeds=3)
    curves = figure_spec(
        cfg, "p", {"id": "c", "kind": "accuracy_by_length", "dataset": "ds", "split": "test", "models": ["a", "b"]}
    )
    assert dirs(FK.kind_of(curves).runs(cfg, curves)) == [
        f"results/runs/ds/{m}/seed{s}" for m in "ab" for s in (1, 2, 3)
    ]
    assert "data/processed/ds" in FK.kind_of(curves).inputs(cfg, curves)
    maps = figure_spec(cfg, "p", {"id": "m", "kind": "attention_maps", "dataset": "ds", "split": "test", "model": "a"})
    assert dirs(FK.kind_of(maps).runs(cfg, maps)) == ["results/runs/ds/a/seed1"]  # no seed: the first
    assert dirs(FK.kind_of(maps).runs(cfg, {**maps, "seed": 3})) == ["results/runs/ds/a/seed3"]
    assert "results/runs/ds/a/seed3/model.pt" in FK.kind_of(maps).inputs(cfg, {**maps, "seed": 3})
    with pytest.raises(ConfigError, match="seed 0 is not one of"):
        FK.kind_of(maps).runs(cfg, {**maps, "seed": 0})
    with pytest.raises(ConfigError, match="unknown kind 'pie'"):
        FK.kind_of({**maps, "kind": "pie"})


def test_a_model_may_have_its_own_number_of_seeds():
    cfg = config(models={"g": {**GGSA, "seeds": 5}, "ref": GGSA})
    assert T.seeds(cfg) == T.seeds(cfg, T.Variant("ref")) == [1, 2]
    assert (
        T.seeds(cfg, T.Variant("g")) == T.seeds(cfg, T.Variant("g", ("lr", 5e-5))) == [1, 2, 3, 4, 5]
    )  # derived: the base's
    table = parse_table(
        cfg,
        "p",
        {
            "id": "t",
            "rows": [{"label": "G", "model": "g"}, {"label": "R", "model": "ref"}],
            "columns": [{"dataset": "ds", "split": "test", "metric": "P@1"}],
        },
    )
    assert dirs(kind_of(table).runs(cfg, table)) == (
        [f"results/runs/ds/g/seed{s}" for s in range(1, 6)] + ["results/runs/ds/ref/seed1", "results/runs/ds/ref/seed2"]
    )
    assert T.seed_count(cfg, ["g", "ref", "g"]) == "2-5" and T.seed_count(cfg, ["g"]) == "5"
    assert T.seed_count(cfg, []) == "2"  # no model rows: the config's count


def test_dataset_stats_tables_read_statistics_not_runs():
    cfg = config(dataset_alias={"ds": "syn"})
    table = parse_table(
        cfg,
        "p",
        {
            "id": "t",
            "kind": "dataset_stats",
            "columns": ["questions"],
            "rows": [{"label": "A", "dataset": "ds"}, {"label": "B", "dataset": "syn"}],
        },
    )
    assert kind_of(table).inputs(cfg, table) == ["results/stats/syn.csv"]
    assert kind_of(table).published == "workflow/papers/dataset_stats_published.csv"
    assert kind_of(TableSpec("p", "m")).published == "workflow/papers/published_results.csv"


def _declared(paper):
    spec = load_paper(paper)
    return {f"results/tables/{paper}/{t['id']}.{e}" for t in spec.get("tables", []) for e in P.TABLE_EXTENSIONS} | {
        f"figures/{paper}/{f['id']}.{e}" for f in spec.get("figures", []) for e in P.FIGURE_EXTENSIONS
    }


def _synthetic(path: str) -> bool:
    """A synthetic dataset's file (data/raw/synthetic/: their download manifest), or the checkout's."""
    return "/synthetic_" in path or path.startswith(("data/raw/synthetic/", "workflow/"))


def test_smoke_targets_cover_every_declared_output_on_synthetic_data():
    cfg = load()  # params.yaml with its default preset: smoke
    assert cfg["preset"] == "smoke"
    outputs = set(P.paper_outputs(cfg))
    assert set(cfg["papers"]) >= {"smoke", "apnet", "ggsa", "datasets"}
    for paper in cfg["papers"]:
        assert _declared(paper) <= outputs, paper
        spec = load_paper(paper)
        for table in (parse_table(cfg, paper, t) for t in spec.get("tables", [])):
            for path in kind_of(table).inputs(cfg, table):  # workflow/: the context rows' published values
                assert _synthetic(path), (paper, table.id, path)
        for fig in spec.get("figures", []):
            figure = P.spec_figure(cfg, paper, fig["id"])  # with its paper (a heatmap's table)
            for path in FK.kind_of(figure).inputs(cfg, figure):
                assert _synthetic(path), (paper, fig["id"], path)
    # GGSA's grid and Figure 8 sweeps shrink to what fits the preset's budget
    variants = {r.variant for r in P.paper_runs(cfg) if r.variant.model.startswith("ggsa_")}
    assert {v.point for v in variants if v.point} == {("group_size", 4), ("heads", 3)}
    assert {v.model for v in variants if v.point} == {"ggsa_ggsa_max_insuranceqa"}


def test_cpu_preset_builds_real_data_and_names_its_two_stand_ins():
    cfg = load(preset="cpu")  # the raw QuoraQP release and lawQA.zip are not offline
    assert cfg["dataset_alias"] == {"quoraqp_raw": "quoraqp_standin", "lawqa": "cmeddialog"}
    outputs = P.paper_outputs(cfg)
    assert "results/tables/datasets/wikiqa.json" in outputs and "results/tables/ggsa/extension.md" in outputs
    assert not any("insuranceqa_v1" in o or "/smoke/" in o for o in outputs)  # v1's test pools are not offline
    assert "results/tables/datasets/insuranceqa_v2.md" in outputs
    stats_table = spec_table(cfg, "datasets", "wikiqa")
    stats = kind_of(stats_table).inputs(cfg, stats_table)
    assert stats == ["results/stats/wikiqa.csv", "results/stats/wikiqa_all.csv"]


def test_unknown_table_id_in_papers_is_named():
    with pytest.raises(KeyError, match="papers.apnet: spec has no table 'nope'"):
        P.paper_outputs({"papers": {"apnet": {"tables": ["nope"]}}})


def test_a_table_or_figure_the_preset_does_not_build_is_refused_naming_what_it_builds_and_who_does():
    cpu = load(preset="cpu")
    P.check_built(cpu, "table", "apnet", "wikiqa")  # built: nothing said
    with pytest.raises(
        ConfigError,
        match=r"^table apnet/datasets: not a table the preset 'cpu' builds \(its tables of apnet: wikiqa, .*\); "
        r"--config preset=full or preset=smoke builds it$",
    ):
        P.check_built(cpu, "table", "apnet", "datasets")
    with pytest.raises(ConfigError, match=r"figure smoke/learning_curves: .*\(its figures of smoke: none\)"):
        P.check_built(cpu, "figure", "smoke", "learning_curves")


def test_a_model_a_spec_names_but_the_config_lacks_is_refused_naming_the_file_item_and_row():
    cfg = load()
    cfg["models"]["qa_lstmm"] = cfg["models"].pop("qa_lstm")
    with pytest.raises(
        ConfigError,
        match=r"^\S+/smoke.yaml: table synthetic: row 'QA-LSTM': model 'qa_lstm' is not configured "
        r"\(typo of 'qa_lstmm'\?\); the models are the keys of params.yaml's models$",
    ):
        P.paper_items(cfg, "smoke")
    cfg["papers"]["smoke"] = {"tables": [], "figures": ["learning_curves"]}
    with pytest.raises(
        ConfigError, match=r"^\S+/smoke.yaml: figure learning_curves: model 'qa_lstm' is not configured"
    ):
        P.paper_items(cfg, "smoke")


def test_a_row_may_run_another_model_on_one_dataset_and_none_there():
    cfg = config(
        dataset_alias={"pairs": "syn"},
        models={"g": GGSA, "g2": GGSA, "ref": {"arch": "global_sa", "hparams": {"embedding_dim": 60}}},
    )
    spec = {
        "id": "t",
        "rows": [
            {"label": "G", "model": "g", "models": {"pairs": "g2"}},
            {"label": "R", "model": "ref", "models": {"pairs": None}},
            {"label": "Prior"},
        ],
        "columns": [
            {"dataset": "ds", "split": "test", "metric": "MAP"},
            {"dataset": "pairs", "split": "test", "metric": "accuracy"},
        ],
    }
    table = parse_table(cfg, "p", spec)
    cells = [(c.row.label, c.model, c.column.dataset, c.dataset) for c in table.cells]
    assert cells == [("G", "g", "ds", "ds"), ("G", "g2", "pairs", "syn"), ("R", "ref", "ds", "ds")]
    assert kind_of(table).models(table) == ["g", "g2", "ref"]
    assert dirs(kind_of(table).runs(cfg, table)) == [
        f"results/runs/{ds}/{m}/seed{s}" for ds, m in [("ds", "g"), ("ds", "ref"), ("syn", "g2")] for s in (1, 2)
    ]
    rows, (ranking, pairs) = table.rows, table.columns
    assert rows[1].not_applicable(pairs)  # a row with runs, none here: n/a
    assert not rows[1].not_applicable(ranking) and not rows[0].not_applicable(pairs)
    assert not rows[2].not_applicable(pairs)  # no model at all: a row kept as published
    typo = {**spec, "rows": [{"label": "G", "model": "g", "models": {"pair": "g2"}}]}
    with pytest.raises(ConfigError, match="table t: row 'G': models names pair, not a dataset of the table's columns"):
        parse_table(cfg, "p", typo)


def test_the_matrix_has_a_row_per_architecture_and_every_cell_fits_its_dataset():
    from ansel.models.registry import registered

    cfg = load(preset="full")
    table = spec_table(cfg, "matrix", "models_by_dataset")
    archs = {model_config(cfg, m)["arch"] for m in kind_of(table).models(table)}
    assert archs == set(registered())
    for cell in table.cells:
        for run in T.runs(cfg, cell.dataset, T.Variant(cell.model)):
            run.config(cfg)  # refuses a loss that does not fit the dataset's task (ranking / classification)
    assert {
        row.model_on(col)
        for row in table.rows
        for col in table.columns
        if col.dataset == "quoraqp_standin" and row.not_applicable(col)
    } == {None}
    heatmap = P.spec_figure(cfg, "matrix", "heatmap")  # reads the table's runs and files
    assert FK.kind_of(heatmap).runs(cfg, heatmap) == kind_of(table).runs(cfg, table)
    assert FK.kind_of(heatmap).inputs(cfg, heatmap) == kind_of(table).inputs(cfg, table)
    assert FK.kind_of(heatmap).models(cfg, heatmap) == kind_of(table).models(table)


def test_a_presets_evaluation_cadence_applies_only_where_a_model_has_one():
    """scale.train.monitor_every shrinks the MTAS rows' cadence (smoke's short runs); a model that
    scores no split on a cadence gets none (it would have no monitor split to score)."""
    cfg = config(
        models={"cadenced": {**GGSA, "train": {"monitor_splits": ["test"], "monitor_every": 1000}}, "plain": GGSA},
        scale={"train": {"monitor_every": 4}},
    )
    assert model_config(cfg, "cadenced")["train"]["monitor_every"] == 4
    assert "monitor_every" not in model_config(cfg, "plain")["train"]
