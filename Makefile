# `make smoke` and `make test` are the README's two commands; both set up .venv first.
VENV ?= .venv
PYTHON ?= python3
BIN := $(abspath $(VENV))/bin
# Rules call the `ansel` command: put the venv first on PATH for every recipe.
export PATH := $(BIN):$(PATH)

.PHONY: setup smoke report cpu test bench pull clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@

smoke: setup                ## the whole DAG on the embedded default (synthetic data, minutes on 2 CPUs)
	snakemake --profile workflow/profiles/local all

# The preset whose outputs `make report` shows: PRESET=cpu for those of `make cpu`.
PRESET ?= smoke
report: setup               ## results/report.html: every table and figure of `make smoke` (or PRESET=cpu), grouped by paper; runs no job
	snakemake --profile workflow/profiles/local all --config preset=$(PRESET) \
		--report results/report.html --report-stylesheet workflow/report/style.css

cpu: setup                  ## the real datasets that fit a CPU (WikiQA, TREC-QA): hours
	snakemake --profile workflow/profiles/local all --config preset=cpu

test: setup                 ## the test suite (real-data tests read $$ANSEL_DATA_MIRROR, default ../shared/datasets)
	python -m pytest -q

bench: setup                ## speed figures (printed; ratios against a baseline measured in the same run)
	python benchmarks/bench_eval_cache.py --quick 2000
	python benchmarks/bench_ggsa_cost.py
	python benchmarks/bench_bm25.py
	python benchmarks/bench_scale.py
	python benchmarks/bench_matchzoo.py

pull: setup                 ## outputs from the DVC remote, checked against dvc.lock, then up to date for Snakemake
	python -m ansel.dvc_pull

clean:                      ## outputs only (data/, results/, figures/, logs/); never the venv
	rm -rf data results figures logs .snakemake
