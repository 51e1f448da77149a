# Two set-up commands for a new user: `make demo` and `make test`.
# Both create .venv when it is missing and install once (a stamp file records the install).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
CLI := $(VENV)/bin/memory-lake

export PREFECT_SERVER_ANALYTICS_ENABLED := false
export GX_ANALYTICS_ENABLED := false
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export PREFECT_HOME ?= $(CURDIR)/.prefect

.PHONY: install browser demo test test-fast notebook notebooks-run bench mutate mutate-named clean

$(PY):
	$(PYTHON) -m venv $(VENV)

# torch first, with pip, so that the CPU build on this machine is taken (an unpinned torch pulls CUDA).
# PYTHONWARNINGS=ignore: the build backend's notes on editable installs are not for the person running make.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	PYTHONWARNINGS=ignore $(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(CLI) --lake lake demo

# Headless Chromium and a CJK font for the browser tests (tests/browser.py, tests/observe/test_report_browser.py):
# Debian's chromium and fonts-noto-cjk, installed with apt-get when one is missing and we may (root, or
# passwordless sudo); `apt-get update` only when the install fails for want of package lists. Never fails
# the make: when they cannot be installed, one line says why, and the browser tests skip. Not for `make demo`.
BROWSER_PACKAGES := chromium fonts-noto-cjk
browser:
	@skip() { echo "make browser: the browser tests will be skipped: $$1"; }; \
	missing=$$(for p in $(BROWSER_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || printf '%s ' $$p; done); \
	missing=$${missing% }; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
		skip "$$missing not installed, and no apt-get here to install it (install Chromium at /usr/bin/chromium and a CJK font by hand)"; exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then sudo=""; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	else skip "$$missing not installed, and installing it needs root (run make as root, or sudo apt-get install $$missing)"; exit 0; fi; \
	log=$$(mktemp); \
	install() { set -o pipefail; $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing 2>&1 | tee "$$log"; }; \
	echo "make browser: installing $$missing with apt-get (for the browser tests)"; \
	install; status=$$?; \
	if [ $$status -ne 0 ] && grep -qE 'Unable to locate package|has no installation candidate|404 +Not Found|Failed to fetch' "$$log"; then \
		echo "make browser: package lists missing or out of date: apt-get update, then install again"; \
		$$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q; install; status=$$?; fi; \
	rm -f "$$log"; \
	if [ $$status -ne 0 ]; then skip "apt-get install $$missing failed (exit $$status; its output is above)"; \
	elif ! dpkg -s $(BROWSER_PACKAGES) >/dev/null 2>&1; then skip "apt-get ran, yet dpkg -s $(BROWSER_PACKAGES) still finds one missing"; fi; \
	true

# PYTEST_ARGS: more pytest options (.ci/run adds --durations=10, the ten slowest tests of the run).
PYTEST_ARGS ?=
# --dist loadgroup: an xdist_group shares a worker where pytest-xdist honours it (not with pytest 9); the
# three-night demo lake of tests/demo and tests/notebooks is built once per run across workers regardless
test: install browser
	$(PY) -m pytest -q -n 2 --dist loadgroup $(PYTEST_ARGS)

test-fast: install browser
	$(PY) -m pytest -q -n 2 --dist loadgroup -m "not slow and not process and not models" $(PYTEST_ARGS)

# The analyst's notebooks in JupyterLab (installed on first use; not part of demo or test), on the
# lake `make demo` built (MEMORY_LAKE_DIR=/path/to/lake make notebook for another).
notebook: install
	$(PY) -m pip install --quiet 'jupyterlab==4.6.6'
	MEMORY_LAKE_DIR=$${MEMORY_LAKE_DIR:-$(CURDIR)/lake} $(VENV)/bin/jupyter lab --notebook-dir=notebooks

# Every notebook headless against the lake (MEMORY_LAKE_DIR, default ./lake), as HTML in reports/notebooks/.
notebooks-run: install
	MEMORY_LAKE_DIR=$${MEMORY_LAKE_DIR:-$(CURDIR)/lake} $(PY) notebooks/run.py --out reports/notebooks

bench: install
	$(PY) benchmarks/ingest.py
	$(PY) benchmarks/import_formats.py
	$(PY) benchmarks/nightly.py
	$(PY) benchmarks/lifecycle.py
	$(PY) benchmarks/search.py
	$(PY) benchmarks/serve.py
	$(PY) benchmarks/search_overhead.py
	$(PY) benchmarks/dedup.py
	$(PY) benchmarks/dedup_blind.py
	$(PY) benchmarks/entities.py
	$(PY) benchmarks/dedup_paraphrase.py
	$(PY) benchmarks/dedup_words.py
	$(PY) benchmarks/zh_recall.py
	$(PY) benchmarks/embedding_candidates.py
	$(PY) benchmarks/locomo.py
	$(PY) benchmarks/real_chat.py
	$(PY) benchmarks/summaries.py
	$(PY) benchmarks/summary_eval.py

# Mutation testing of the rule modules (docs/TESTING.md): not part of `make test` or CI (hours for
# all rules). mutmut 3, chosen by a measured trial on these 2 cores: its fork server imports
# polars/DuckDB/GX/torch once per rule, so a mutant costs ~6 s here against ~14-16 s for cosmic-ray
# and pytest-gremlins, which start a fresh interpreter per mutant. One worker, lowest priority (the
# machine is shared). `make mutate RULES="checks inbox"` runs some rules; report: mutation-report/.
# `make mutate SAMPLE=50 SEED=2` tests 50 random mutants per rule (an estimate with its interval).
RULES ?=
SAMPLE ?=
SEED ?= 1
mutate: install
	nice -n 19 $(PY) mutation/mutate.py $(if $(SAMPLE),--sample $(SAMPLE) --seed $(SEED)) $(RULES)

# Issue 19's eight named mutations, each applied to this checkout by hand, its test run, the file
# restored (a few minutes): every one must be CAUGHT.
mutate-named: install
	$(PY) mutation/named.py

clean:
	rm -rf lake reports/*.html .prefect .pytest_cache .mutmut
