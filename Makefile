# Set-up and the two everyday commands. `make demo` and `make test` install what they need.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: demo test lint bench install

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	# The CPU build of torch first: otherwise sentence-transformers pulls a 3 GB CUDA build.
	$(PY) -m pip install --quiet --disable-pip-version-check "torch==2.13.0"
	$(PY) -m pip install --quiet --disable-pip-version-check -e ".[dev]" --config-settings editable_mode=compat
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/memtui demo

test: $(STAMP)
	$(VENV)/bin/ruff check memtui tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	# one worker per core: the suite is mostly real processes, models and terminals
	$(PY) -m pytest -n auto

bench: $(STAMP)
	for b in bench/bench_*.py; do $(PY) $$b || exit 1; done
