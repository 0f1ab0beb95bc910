"""Paper figures by kind: each kind is a ``FigureKind`` registered with ``@figure_kind("name")``; a
figure spec's ``kind`` picks one (``kind_of``).

A kind knows what its figure needs while the DAG is built: its models and runs, the files its job
reads (the rule's inputs) and the job's config; the function that draws it is registered under the
same name in ``ansel.report.figures`` (matplotlib: imported by a figure job, not while the DAG is
built). Nothing else compares a figure kind's name. A figure spec is ``ansel.specs.figure_spec``'s: ``paper`` set, ``run_dataset`` resolved.
"""

from __future__ import annotations

from ansel import targets as T
from ansel.config import papers_dir
from ansel.kinds import Kinds
from ansel.settings import ConfigError
from ansel.specs import TableSpec, table_spec
from ansel.table_kinds import kind_of as table_kind_of

_KINDS: Kinds[FigureKind] = Kinds("figure kind")
figure_kind = _KINDS.register  # class decorator: @figure_kind("sweep")
known = _KINDS.known


def kind_of(figure: dict) -> FigureKind:
    """The kind of a figure spec."""
    return _KINDS.of(figure["kind"], f"figure {figure['id']}")


def where(figure: dict) -> str:
    """A figure spec's place, for a message: its paper's spec file and its id."""
    return f"{papers_dir() / (figure['paper'] + '.yaml')}: figure {figure['id']}"


class FigureKind:
    """One kind of paper figure: its runs are every seed of its models on its dataset, of which it
    reads ``run_files`` (and the processed dataset where ``reads_data``)."""

    name: str  # the spec's ``kind``, set by ``@figure_kind``
    run_files: tuple[str, ...] = ()
    reads_data = False

    def check(self, figure: dict) -> None:
        """The figure's ``metric`` is one the runs report, refused before any run trains for a figure
        that could not draw (as a table column's: ``ansel.table_kinds.metrics``)."""
        if "metric" in figure and figure["metric"] not in T.REPORTED_METRICS:
            raise ConfigError(
                f"{where(figure)}: metric: {figure['metric']!r} is not a metric the runs report "
                f"(known: {', '.join(T.REPORTED_METRICS)})"
            )

    def models(self, config: dict, figure: dict) -> list[str]:
        """The params.yaml models the figure reads, in spec order (its ``models``, then its reference)."""
        return list(dict.fromkeys([*figure["models"], *filter(None, [figure.get("reference_model")])]))

    def variants(self, config: dict, figure: dict) -> list[T.Variant]:
        """The model variants whose runs the figure reads: its models as params.yaml gives them."""
        return [T.Variant(m) for m in self.models(config, figure)]

    def runs(self, config: dict, figure: dict) -> list[T.Run]:
        """Every run the figure reads: each seed of each variant."""
        variants = self.variants(config, figure)
        return sorted({r for v in variants for r in T.runs(config, figure["run_dataset"], v)})

    def value_splits(self, figure: dict) -> list[str]:
        """The splits whose ``metric`` the figure reads from each run's value file (``targets.value_file``)."""
        return []

    def files(self, config: dict, figure: dict) -> list[str]:
        """The files the figure reads, less the run files and labels that check its metrics (``inputs``)."""
        found = self.runs(config, figure)
        files = [f"{r.dir}/{name}" for r in found for name in self.run_files]
        files += dict.fromkeys(
            T.value_file(r, split, figure["metric"], figure.get("protocol", "dev"))
            for r in found
            for split in self.value_splits(figure)
        )
        if self.reads_data:
            files.append(T.processed_dir(figure["run_dataset"]))
        if self.published_keys(config, figure):
            files.append(T.PUBLISHED_RESULTS)
        return files

    def published_keys(self, config: dict, figure: dict) -> set[tuple]:
        """The keys (``ansel.published.PUBLISHED_KEY``) of published_results.csv the figure looks up: a
        row no table or figure looks up is refused (``ansel.paper_targets.check_published``)."""
        return set()

    def metrics_runs(self, config: dict, figure: dict) -> list[T.Run]:
        """The runs whose metrics.json the figure reads (checked against their run files before it draws)."""
        return T.reading_metrics(self.files(config, figure), self.runs(config, figure))

    def inputs(self, config: dict, figure: dict) -> list[str]:
        """The figure job's inputs: ``files``, with the run file and labels of every metrics.json read."""
        return T.with_run_files(self.files(config, figure), self.metrics_runs(config, figure))

    def job_config(self, config: dict, figure: dict) -> dict:
        """The slice of the config the figure job reads: the report's and its models' configs (their seeds)."""
        return {**T.report_config(config), **T.models_config(config, self.models(config, figure))}


@figure_kind("learning_curves")
class LearningCurves(FigureKind):
    run_files = ("log.csv",)


@figure_kind("accuracy_by_length")
class AccuracyByLength(FigureKind):
    run_files = ("run.trec",)
    reads_data = True


@figure_kind("accuracy_bars")
class AccuracyBars(FigureKind):
    def value_splits(self, figure: dict) -> list[str]:
        return [figure["split"]]

    def published_key(self, figure: dict, model: str) -> tuple:
        """The key of a bar's published value: its label's row of ``published_table``."""
        dataset = figure.get("published_dataset", figure["dataset"])
        label = figure.get("labels", {}).get(model, model)
        return (figure["paper"], figure["published_table"], dataset, figure["split"], label, figure["metric"])

    def published_keys(self, config: dict, figure: dict) -> set[tuple]:
        if "published_table" not in figure:
            return set()
        return {self.published_key(figure, m) for m in self.models(config, figure)}


@figure_kind("attention_maps")
class AttentionMaps(FigureKind):
    """One run's attention weights (its spec's ``seed``, default the first)."""

    run_files = ("config.json", "model.pt", "run.trec")
    reads_data = True

    def models(self, config: dict, figure: dict) -> list[str]:
        return [figure["model"]]

    def runs(self, config: dict, figure: dict) -> list[T.Run]:
        seed = T.spec_seed(config, figure.get("seed", 1), figure["id"], [figure["model"]])
        return [T.Run(figure["run_dataset"], T.Variant(figure["model"]), seed)]


@figure_kind("sweep")
class Sweep(FigureKind):
    """A metric against a hyperparameter: a model per value (``points``), or a base model's runs
    derived at each of the preset's values, beside a reference model."""

    def models(self, config: dict, figure: dict) -> list[str]:
        """The swept models (a derived sweep: its base) and the reference."""
        swept = [p["model"] for p in figure["points"]] if "points" in figure else [figure["base_model"]]
        return list(dict.fromkeys([*swept, figure["reference_model"]]))

    def variants(self, config: dict, figure: dict) -> list[T.Variant]:
        """Each swept point's variant (a derived sweep: its base model at each value), then the reference."""
        return [v for _, v in T.sweep_models(config, figure)] + [T.Variant(figure["reference_model"])]

    def value_splits(self, figure: dict) -> list[str]:
        return figure["splits"]

    def reference_key(self, figure: dict, split: str) -> tuple:
        """The key of the reference's published value on a split (``reference_published``: table, row label)."""
        ref = figure["reference_published"]
        return (figure["paper"], ref["table"], figure["dataset"], split, ref["label"], figure["metric"])

    def curve_key(self, figure: dict, split: str, value: object) -> tuple:
        """The key of the published curve's point at a swept value (``published_curve``: table, row label
        with ``{value}``, dataset)."""
        pc = figure["published_curve"]
        dataset = pc.get("dataset", figure["dataset"])
        return (figure["paper"], pc["table"], dataset, split, pc["label"].format(value=value), figure["metric"])

    def published_keys(self, config: dict, figure: dict) -> set[tuple]:
        """The reference's and the curve's at the spec's values and the preset's (a preset may run fewer)."""
        values = dict.fromkeys([*figure.get("values", []), *T.sweep_values(config, figure)])
        splits = figure["splits"]
        return {self.reference_key(figure, s) for s in splits if "reference_published" in figure} | {
            self.curve_key(figure, s, v) for s in splits if "published_curve" in figure for v in values
        }

    def job_config(self, config: dict, figure: dict) -> dict:
        """Its models' configs and the preset's sweep values, from which the runs are derived."""
        paper = figure["paper"]
        return {
            **super().job_config(config, figure),
            "papers": {paper: {"sweeps": config["papers"][paper].get("sweeps", {})}},
        }


@figure_kind("heatmap")
class Heatmap(FigureKind):
    """A metrics table of its paper (spec key ``table``) drawn as a grid: it reads the table's runs and files."""

    def models(self, config: dict, figure: dict) -> list[str]:
        return table_kind_of(table := heatmap_table(config, figure)).models(table)

    def runs(self, config: dict, figure: dict) -> list[T.Run]:
        return table_kind_of(table := heatmap_table(config, figure)).runs(config, table)

    def metrics_runs(self, config: dict, figure: dict) -> list[T.Run]:
        return table_kind_of(table := heatmap_table(config, figure)).metrics_runs(config, table)

    def inputs(self, config: dict, figure: dict) -> list[str]:
        return table_kind_of(table := heatmap_table(config, figure)).inputs(config, table)


def heatmap_table(config: dict, figure: dict) -> TableSpec:
    """The metrics table of its paper whose cells a heatmap figure draws (spec key ``table``)."""
    table = table_spec(config, figure["paper"], figure["table"])
    if not table_kind_of(table).metric_grid:
        raise ConfigError(
            f"figure {figure['id']}: table {figure['table']!r} is of kind {table_kind_of(table).name!r}; "
            "a heatmap draws a metrics table"
        )
    return table
