# Two entry points: `make run` (the main job) and `make test`. Each creates the
# virtualenv it needs on first use, so a fresh machine needs only Python 3.11.
VENV ?= .venv
PYTHON ?= python3
BIN = $(VENV)/bin

.PHONY: run test docs lint bench clean

# the package alone for the main job; with the test, docs and Dask tools for the rest
$(BIN)/.installed-run: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

$(BIN)/.installed: $(BIN)/.installed-run
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

run: $(BIN)/.installed-run
	$(BIN)/mrfq run

test: $(BIN)/.installed
	$(BIN)/ruff check mrfq tests benchmarks cli.py
	# compile the Numba kernels first, one process per kernel on every core, then the
	# tests on every core (pytest-xdist): a fresh clone spends half its time compiling
	$(BIN)/python -m pytest -q -n auto --warm-numba-cache

# the documentation site (Sphinx + MyST), warnings as errors as in CI
docs: $(BIN)/.installed
	$(BIN)/python -m sphinx -W --keep-going -q -b html docs docs/_build/html

bench: $(BIN)/.installed
	$(BIN)/python benchmarks/bench_fluid.py
	$(BIN)/python benchmarks/bench_packet.py

clean:
	rm -rf $(VENV) results docs/_build docs/_generated
