# Two entry points (see README): `make book` and `make test`. Everything else is a helper.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
STAMP := $(VENV)/.lvmrepro-installed

# The data search path: the shared data folder beside the project, when it exists.
SHARED_DATA := $(abspath ../shared/data)
ifeq ($(origin LVMREPRO_DATA), undefined)
  ifneq ($(wildcard $(SHARED_DATA)),)
    export LVMREPRO_DATA := $(SHARED_DATA)
  endif
endif
export LVMREPRO_RESULTS ?= $(abspath results)
export LVMREPRO_CACHE ?= $(abspath build/cache)
# The benchmark result file that `make benchmark` writes and the performance page renders.
export LVMREPRO_BENCHMARKS ?= $(abspath build/benchmarks.json)
# The cluster measurement (one target on a Dask LocalCluster of 1 and 2 workers) that the performance page renders.
export LVMREPRO_CLUSTER_SCALING ?= $(abspath build/cluster_scaling.json)
# Matplotlib's font cache lives in the project: a cache shared with other checkouts can list fonts of a
# deleted virtual environment, and every notebook then writes 'findfont' warnings (errors in the book build).
export MPLCONFIGDIR ?= $(abspath build/matplotlib)
# No MPLBACKEND here: Agg would stop notebooks from showing figures inline; headless matplotlib
# falls back to Agg by itself outside Jupyter.
export PYDEVD_DISABLE_FILE_VALIDATION := 1
JOBS ?= 2
# The book's scale: the papers' protocol (`paper`) unless LVMREPRO_SCALE says otherwise
# (LVMREPRO_SCALE=default make book is the quick preview).
SCALE := $(or $(LVMREPRO_SCALE),paper)

KERNELS := $(wildcard lvmrepro/engine/_kernels/*.pyx lvmrepro/engine/_kernels/*.pxd)
NOTEBOOKS := $(wildcard notebooks/*/*.md)

.PHONY: book test setup results nbval-notebooks clean benchmark

## make book: set up, run every target at $(SCALE) (paper unless LVMREPRO_SCALE is set), run the benchmarks,
## execute every notebook, build the HTML.
book: setup
	$(BIN)/lvmrepro run all --scale $(SCALE) --book --jobs $(JOBS)
	$(PY) benchmarks/run.py --keep-going --json $(LVMREPRO_BENCHMARKS)
	-$(PY) benchmarks/cluster_scaling.py --scale $(SCALE) --json $(LVMREPRO_CLUSTER_SCALING)
	LVMREPRO_SCALE=$(SCALE) $(BIN)/jupyter-book build . --keep-going -W
	@echo
	@echo "Book built: $(abspath _build/html/index.html)"

## make test: set up, then the whole test suite: unit and property tests, the book built at smoke scale
## with every notebook executed (warnings are errors) into build/smoke-book, every notebook under nbval
## (tests/test_nbval.py, run beside the book build on the same results), and the browser suite over
## every page of it (system Chromium; screenshots in build/screenshots).
test: setup
	LVMREPRO_SCALE=smoke LVMREPRO_RESULTS=$(abspath build/test-results) \
	  $(PY) -m pytest tests -p no:cacheprovider -q

setup: $(STAMP)

$(STAMP): requirements.lock pyproject.toml setup.py $(KERNELS)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(PY) -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps -e .
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

# nbval over every notebook on its own (make test runs it inside the smoke book build: tests/smoke_book.py,
# tests/test_nbval.py). nbval reads .ipynb: the MyST sources (the only committed form) are converted into build/nbval;
# the notebooks read the results of `lvmrepro run all` at $(or $(LVMREPRO_SCALE),smoke) scale (computed when missing).
nbval-notebooks: setup
	rm -rf build/nbval && mkdir -p build/nbval
	for nb in $(NOTEBOOKS); do \
	  out=build/nbval/$$(dirname $${nb#notebooks/}); mkdir -p $$out; \
	  $(BIN)/jupytext --quiet --to ipynb -o $$out/$$(basename $${nb%.md}).ipynb $$nb || exit 1; \
	done
	cd build/nbval && LVMREPRO_SCALE=$(or $(LVMREPRO_SCALE),smoke) $(abspath $(PY)) -m pytest -p no:cacheprovider \
	  --nbval-lax --nbval-current-env -q -o addopts= --rootdir . .

## make benchmark: time the kernels, scikit-learn's Lloyd iteration, the growth curves and the digit learners
## (a few minutes on 2 cores) and write build/benchmarks.json, which the book's performance page renders.
benchmark: setup
	$(PY) benchmarks/run.py --json $(LVMREPRO_BENCHMARKS)

clean:
	rm -rf _build build results .jupyter_cache
