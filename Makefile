# The two commands of the README:
#   make tour    installs ctx and runs a short tour on the default store
#   make check   installs ctx with its dev tools and runs every check and test
VENV := .venv
BIN := $(VENV)/bin
SOURCES := $(shell find engine hub porcelain lens -name '*.py' -o -name '*.pyi') pyproject.toml

.PHONY: install tour check test lint fix

$(BIN)/.installed: $(SOURCES)
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
		-e '.[dev]' --config-settings editable_mode=strict
	touch $@

install: $(BIN)/.installed

tour: install
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/tour.sh

lint: install
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy -p ctx.engine -p ctx.hub -p ctx.porcelain -p ctx.lens
	$(BIN)/lint-imports

test: install
	$(BIN)/pytest -q -p no:cacheprovider -n 2

check: lint test

fix: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .
