"""Issue 33 item 3: a typo in a real paper spec's metric or split (`metric: MAPP`, `split: tset` in
apnet.yaml) is refused when the spec loads, as the DAG is built, naming the spec file, table and key:
never after the table's runs have trained."""

import shutil

import pytest

from ansel.config import ConfigError, load
from ansel.table_kinds import spec_table


@pytest.mark.parametrize(
    "typo, says",
    [
        ({"metric": "MAPP"}, "columns[0].metric: 'MAPP' is not a metric the runs report"),
        ({"split": "tset"}, "columns[0].split: 'tset' is not evaluated on dataset 'trecqa'"),
    ],
)
def test_a_typo_in_the_apnet_spec_is_refused_naming_file_table_and_key(repo_root, tmp_path, monkeypatch, typo, says):
    config = load(preset="cpu")
    for d in ("workflow/papers", "workflow/schemas"):
        shutil.copytree(repo_root / d, tmp_path / d)
    spec = tmp_path / "workflow/papers/apnet.yaml"
    text = spec.read_text()
    column = "{dataset: trecqa, split: test, metric: MAP}"
    assert column in text
    spec.write_text(
        text.replace(
            column,
            "{dataset: trecqa, split: %s, metric: %s}" % (typo.get("split", "test"), typo.get("metric", "MAP")),
            1,
        )
    )
    monkeypatch.setenv("ANSEL_ROOT", str(tmp_path))
    with pytest.raises(ConfigError) as e:
        spec_table(config, "apnet", "trecqa")
    assert f"{spec}: table trecqa: {says}" in str(e.value), str(e.value)
