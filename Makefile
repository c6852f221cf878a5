# make repro — set up, then run the whole pipeline (dvc repro)
# make test  — set up, then run the test suite
# make docs  — build the documentation site into site/
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
FMNIST := /usr/share/datasets/fashion-mnist
VEGA   := build/vega/plots.html

.PHONY: setup repro test bench lint docs

setup: $(STAMP) data-source browser $(VEGA)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# Fashion-MNIST comes from Debian's package when apt is usable as root; otherwise say where it will come from.
.PHONY: data-source
data-source:
	@if [ -f $(FMNIST)/train-images-idx3-ubyte.gz ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "setup: installing Debian's dataset-fashion-mnist"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dataset-fashion-mnist >/dev/null; \
	else \
	  echo "setup: $(FMNIST) is missing and apt is not usable as root; prepare will use params data.root,"; \
	  echo "       else download Fashion-MNIST from its official location (needs network)."; \
	fi

# `dvc plots show` offline: Vega inline in the page template .dvc/config names (from the npm registry, pinned)
$(VEGA): laya/vega_offline.py | $(STAMP)
	$(BIN)/python -m laya.vega_offline --out $@

# Headless Chromium renders the plots page and reports/index.html in the tests (Debian's package)
.PHONY: browser
browser:
	@if command -v chromium >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "setup: installing Debian's chromium (headless page checks in the tests)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
	  echo "setup: chromium is missing and apt is not usable as root; the page-rendering tests are skipped"; \
	  echo "       (and fail under CI=true, where a skipped test would hide a missing install step)."; \
	fi

repro: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/dvc repro

# one pytest worker per core (pytest-xdist): the whole-pipeline runs each open a worker's share (tests/conftest.py)
test: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest -n auto --dist worksteal

# the documentation site: docs/ (guide, reference generated from the code, results written by `report`) → site/
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --site-dir site

bench: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python benchmarks/extract.py

lint: setup
	$(BIN)/ruff check laya pipeline tests benchmarks
