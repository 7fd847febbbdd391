# Two commands open the README: `make demo` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test check lint install build clean docs

$(BIN)/python:
	$(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# the optional extras the tests exercise: Spark (pyspark, dbt-spark) for the cross-engine tests,
# Inspect AI for the round trip through its mock model, a real llama.cpp server (local) for the
# local-model tests, MetricFlow (semantic) for the semantic layer's tests; `make demo` needs none of them
SPARK_STAMP := $(VENV)/.installed-extras
$(SPARK_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,spark,inspect,local,semantic]'
	touch $(SPARK_STAMP)

demo: $(STAMP)
	$(BIN)/hindsight demo

# pytest runs the Python suite and every `dbt build` (data, unit and singular
# tests) on an empty, the demo and the real-data warehouses. Tests that need
# ../shared/data skip when it is absent (HINDSIGHT_REQUIRE_DATA=1 fails them).
# Two workers, a test file each at a time (pytest-xdist): most of a build's time
# is dbt's single-threaded Python, so two files build side by side.
test: $(SPARK_STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile

# The fast lane: linters for Python (ruff), the declared dependencies (deptry), and the dbt SQL (sqlfluff, dbt
# templater; dbt writes to its own target path), then the tests that build no
# warehouse with dbt and read no real data.
LINT_DIR := $(shell mktemp -u -d /tmp/hindsight-lint.XXXXXX)
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/deptry .
	mkdir -p $(LINT_DIR)
	HINDSIGHT_DB=$(LINT_DIR)/lint.duckdb DBT_TARGET_PATH=$(LINT_DIR)/target DBT_LOG_PATH=$(LINT_DIR)/logs \
		$(BIN)/sqlfluff lint models tests/dbt analyses --processes 2 --disable-progress-bar
	rm -rf $(LINT_DIR)

check: lint
	$(BIN)/python -m pytest -m "not slow and not real_data and not browser"

build: $(STAMP)
	$(BIN)/hindsight build

clean:
	rm -rf target logs warehouse.duckdb reports site

# The docs site (MkDocs Material) into site/; --strict turns a broken link or a missing page into a
# failure. The CLI and marts references are generated from the code at every build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true $(BIN)/mkdocs build --strict --site-dir site
