# Two commands open the README: `make demo` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test install build clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/hindsight demo

# pytest runs the Python suite and every `dbt build` (data, unit and singular
# tests) on an empty, the demo and the real-data warehouses.
test: $(STAMP)
	$(BIN)/python -m pytest

build: $(STAMP)
	$(BIN)/hindsight build

clean:
	rm -rf target logs warehouse.duckdb reports
