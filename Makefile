# Two commands on a fresh machine: `make demo` and `make test`. Each builds .venv by itself.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint fuzz notebooks bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[all,dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m memvelope_tools.demo out

lint: $(STAMP)
	$(PY) -m ruff check .

test: $(STAMP) lint
	MPLBACKEND=Agg $(PY) -m pytest -q

fuzz: $(STAMP)
	MEMVELOPE_FUZZ_EXAMPLES=20000 MPLBACKEND=Agg $(PY) -m pytest -q tests/test_properties.py

notebooks: $(STAMP)
	$(PY) -m pip install --quiet jupyterlab
	$(VENV)/bin/jupyter lab notebooks/

bench: $(STAMP)
	$(PY) benchmarks/convert.py

clean:
	rm -rf $(VENV) out build *.egg-info
