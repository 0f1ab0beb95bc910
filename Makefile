# `make smoke` and `make test` are the README's two commands; both set up .venv first.
VENV ?= .venv
PYTHON ?= python3
BIN := $(abspath $(VENV))/bin
# Rules call the `ansel` command: put the venv first on PATH for every recipe.
export PATH := $(BIN):$(PATH)

.PHONY: setup smoke report cpu test lint format bench bench-peer pull clean gpu-kit gpu-travel gpu-home gpu-unpack

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -e '.[test,dev]'
	touch $@

smoke: setup                ## the whole DAG on the embedded default (synthetic data, minutes on 2 CPUs)
	snakemake --profile workflow/profiles/local all

# The preset whose outputs `make report` shows: PRESET=cpu for those of `make cpu`. Its outputs share
# their paths with every other preset's, so a report of a preset whose DAG still plans jobs would show
# another preset's files (or none): refused, naming what builds it.
PRESET ?= smoke
BUILDS = $(if $(filter smoke cpu,$(PRESET)),make $(PRESET),snakemake --profile workflow/profiles/local all --config preset=$(PRESET))
report: setup               ## results/report.html: every table and figure of `make smoke` (or PRESET=cpu), grouped by paper; runs no job
	@planned=$$(snakemake --profile workflow/profiles/local all --config preset=$(PRESET) -n --quiet rules) \
		|| { echo "$$planned"; exit 1; }; \
	case "$$planned" in *"Nothing to be done"*) ;; *) \
		echo "make report: the $(PRESET) preset's DAG is not built and up to date (snakemake -n plans" \
			"$$(echo "$$planned" | awk '$$1 == "total" {print $$2; exit}') jobs): build it first: $(BUILDS)" >&2; exit 1;; esac
	snakemake --profile workflow/profiles/local all --config preset=$(PRESET) \
		--report results/report.html --report-stylesheet workflow/report/style.css

cpu: setup                  ## the real datasets that fit a CPU (WikiQA, TREC-QA): hours
	snakemake --profile workflow/profiles/local all --config preset=cpu

test: setup                 ## the test suite (real-data tests read $$ANSEL_DATA_MIRROR, default ../shared/datasets)
	python -m pytest -q -n auto --dist loadfile --no-loadscope-reorder

# Configured in pyproject.toml ([tool.ruff], [tool.mypy]); .ci/run runs `make lint` after the tests.
lint: setup                 ## ruff's lint and format check, mypy over src/; changes nothing
	ruff check .
	ruff format --check .
	mypy

format: setup               ## imports sorted and the code formatted in place (what `make lint` checks)
	ruff check --select I --fix .
	ruff format .

bench: setup                ## speed figures (printed; ratios against a baseline measured in the same run)
	python benchmarks/bench_eval_cache.py --quick 2000
	python benchmarks/bench_ggsa_cost.py
	python benchmarks/bench_bm25.py
	python benchmarks/bench_scale.py
	python benchmarks/bench_matchzoo.py
	python benchmarks/bench_plan.py
	python benchmarks/bench_stack_seeds.py
	python benchmarks/bench_dispatch.py

bench-peer: setup           ## ansel vs MatchZoo-py 1.1.1, like for like, both measured now (its own venv; a quiet machine)
	bash benchmarks/peer/setup.sh
	python benchmarks/peer/run.py

pull: setup                 ## outputs from the DVC remote, checked against dvc.lock, then up to date for Snakemake
	python -m ansel.dvc_pull

# A lent GPU (reports/device/QUEUE.md): pack on the CPU, run `bash gpu-kit/run.sh` there, unpack here.
gpu-kit: setup              ## RECORD=<name ...> of reports/device/records.yaml into gpu-kit/ (its size and device-minutes printed)
	ansel gpu-kit --record $(RECORD)

# The device tool carries at most 64 MiB of working tree, and reports/ alone is more: for the one
# call, gpu-travel takes reports/ out of git's index (saved first) and gpu-home puts it back as it was.
# Git's own paths, so that a worktree (whose .git is a file) travels too; read only by these two targets.
SAVED_INDEX = $(shell git rev-parse --git-path ansel-index-before-gpu)
EXCLUDE = $(shell git rev-parse --git-path info/exclude)

gpu-travel:                 ## before the device call: reports/ out of the tree that travels
	@if [ -e $(SAVED_INDEX) ]; then echo "make gpu-travel: already travelled" \
		"($(SAVED_INDEX) holds the index saved then): run make gpu-home first" >&2; exit 1; fi
	cp $$(git rev-parse --git-path index) $(SAVED_INDEX)
	git rm -r -q --cached reports
	mkdir -p $(dir $(EXCLUDE)) && printf '# ansel gpu-travel\n/reports/\n' >> $(EXCLUDE)

gpu-home:                   ## after it: git's index and excludes as before gpu-travel
	@if [ ! -e $(SAVED_INDEX) ]; then echo "make gpu-home: nothing to put back" \
		"(no $(SAVED_INDEX): make gpu-travel saves it)" >&2; exit 1; fi
	mv $(SAVED_INDEX) $$(git rev-parse --git-path index)
	sed -i '/^# ansel gpu-travel$$/,+1d' $(EXCLUDE)

gpu-unpack: setup           ## FILE=<archive (or its parts)> into reports/device/<record>/ (MINUTES=<device-minutes>)
	ansel gpu-unpack $(FILE) $(if $(MINUTES),--device-minutes $(MINUTES))

clean:                      ## outputs only (data/, results/, figures/, logs/); never the venv
	rm -rf data results figures logs .snakemake
