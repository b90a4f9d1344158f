PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
DB ?= $(or $(OPX_DB),data/opx.duckdb)
PORT ?= 8501

.PHONY: run test test-unit test-e2e db bench clean

$(VENV)/.app-installed: requirements.txt
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found; set PYTHON=/path/to/python3.11"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev-installed: $(VENV)/.app-installed requirements-dev.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

# What `make run` does to the database before serving depends on its kind (as opx tells them:
# opx.store.pgstore.is_postgres, opx.store.dataset.is_dataset).
ifneq (,$(filter postgresql:% postgres:%,$(DB)))
# A PostgreSQL URL is no file make can date: `db init` runs at each start (it migrates once and
# adds only what is missing, so a built database stays as it is).
DB_READY := db
else ifneq (,$(or $(findstring ://,$(DB)),$(findstring *,$(DB)),$(findstring ?,$(DB)),$(findstring [,$(DB)),$(wildcard $(DB)/.)))
# A Parquet dataset (a folder, a glob or a URL) is read-only: served as it was published.
DB_READY :=
else
DB_READY := $(DB)
# `db init` again when what builds the database is newer than it: a migration (it upgrades the
# file in place), the built-in data, or the code that derives envelopes and anchored fits (a
# changed simulator misses every stored fit, which the first view would otherwise make). It adds
# only what is missing; the touch marks the file current when nothing was.
DB_INPUTS := $(wildcard opx/store/migrations/*.sql opx/*.py opx/*/*.py data/catalog/* data/published/* \
                        data/measured/* data/simulator/*)
$(DB): $(DB_INPUTS) | $(VENV)/.app-installed
	$(PY) -m opx db init --db '$(DB)'
	@touch '$(DB)'
endif

db: $(VENV)/.app-installed
	$(PY) -m opx db init --db '$(DB)'

run: $(VENV)/.app-installed $(DB_READY)
	@$(PY) -m opx.settings          # a setting opx cannot read stops here, before serving
	OPX_DB='$(DB)' $(PY) -m opx serve --port $(PORT)    # the pages, /api/v1 and /mcp on one port

# two workers (pytest-xdist): the suite is mostly single-threaded Python, and CI and this
# machine have two cores; worksteal hands a long test's neighbours to the idle worker
TEST_WORKERS ?= 2
PYTEST := $(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal

test: $(VENV)/.dev-installed
	$(PYTEST)

test-unit: $(VENV)/.dev-installed
	$(PYTEST) tests/unit tests/app

bench: $(VENV)/.dev-installed $(DB_READY)
	$(PY) bench/run_all.py

# the database only when it is a DuckDB file this Makefile builds: never a Postgres store or a
# published Parquet dataset
clean:
	rm -rf $(VENV) .pytest_cache
	$(if $(filter $(DB),$(DB_READY)),rm -f '$(DB)' '$(DB).wal')
