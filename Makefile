# Two commands on a fresh machine: `make run` and `make test`. Each builds .venv first:
# `make run` with the runtime and analysis dependencies only, `make test` (and `make check`,
# `make lint`, `make format`, `make bench`) adds the development tools on top. `make check` is
# the quick tier for the edit-test loop: the linters, then the tests not marked slow or browser.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
NOTEBOOK_STAMP := $(VENV)/.installed-notebook
RAW ?= raw
OUT ?= normalized

.PHONY: run test check lint format bench lexicon notebook clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) -e '.[analysis]'
	touch $(STAMP)

# Rebuilt whenever the runtime stamp is, so a changed pyproject.toml reaches both.
$(DEV_STAMP): $(STAMP)
	$(PIP) -e '.[analysis,dev]'
	touch $(DEV_STAMP)

# The changelog follows the summary whenever the run stored something (exit 0 or 3).
run: $(STAMP)
	@$(PY) -m pipeline ingest $(RAW) --out $(OUT); rc=$$?; \
	if [ $$rc -eq 0 ] || [ $$rc -eq 3 ]; then echo; $(PY) -m pipeline changelog --out $(OUT); fi; \
	exit $$rc

lint: $(DEV_STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

# The tests run on every core (at most 4), each worker taking the next test as it is free
# (pytest-xdist's worksteal: the long crash tests do not leave one core waiting at the end).
# A bare `pytest` runs them one at a time, in order.
PARALLEL := -n auto --maxprocesses 4 --dist worksteal

test: lint
	$(PY) -m pytest $(PARALLEL) --cov --cov-report=term

# The markers are registered in pyproject.toml; make test and CI run every test.
check: lint
	$(PY) -m pytest $(PARALLEL) -m "not slow and not browser" -q

format: $(DEV_STAMP)
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

# make bench BENCH=--quick: every size a tenth, one run per figure, five days (about a minute);
# BENCH="--days 30" runs the daily-job scenario for a month.
BENCH ?=
bench: $(DEV_STAMP)
	$(PY) benchmarks/bench.py $(BENCH)

# JupyterLab on top of make run's .venv (the notebook extra; make test never installs it),
# then examples/analysis.ipynb opened in it. Run make run first for a dataset to read.
$(NOTEBOOK_STAMP): $(STAMP)
	$(PIP) -e '.[analysis,notebook]'
	touch $(NOTEBOOK_STAMP)

notebook: $(NOTEBOOK_STAMP)
	$(VENV)/bin/jupyter lab examples/analysis.ipynb

# Rebuilds pipeline/folding/translate/lexicon.json.gz from ../shared/realdata's MTGJSON set files.
lexicon: $(STAMP)
	$(PY) -m pipeline.folding.translate.build

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .coverage .hypothesis
