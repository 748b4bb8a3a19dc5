# Two commands on a fresh machine: `make demo` and `make test`. Each builds .venv by itself.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint fuzz notebooks bench clean chromium

$(STAMP): pyproject.toml setup.py memvelope_tools/_textscan.c memvelope_tools/convert/_scan.c
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[all,dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m memvelope_tools.demo out

lint: $(STAMP)
	$(PY) -m ruff check .

# The report's browser test needs Debian's chromium: install it when missing and apt-get is usable as
# root; otherwise say so and carry on (only that test is then skipped, with its reason).
chromium:
	@if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "make: installing chromium for the report's browser test"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 \
			|| echo "make: could not install chromium; the browser test will be skipped"; \
	fi

# MEMVELOPE_REQUIRE_NATIVE: a C helper that failed to build (see setup.py) fails the tests instead of skipping.
test: $(STAMP) lint chromium
	MEMVELOPE_REQUIRE_NATIVE=1 MPLBACKEND=Agg $(PY) -m pytest -q

fuzz: $(STAMP)
	MEMVELOPE_FUZZ_EXAMPLES=20000 MPLBACKEND=Agg $(PY) -m pytest -q tests/test_properties.py tests/test_text.py

notebooks: $(STAMP)
	$(PY) -m pip install --quiet jupyterlab
	$(VENV)/bin/jupyter lab notebooks/

bench: $(STAMP)
	$(PY) benchmarks/convert.py

clean:
	rm -rf $(VENV) out build *.egg-info
