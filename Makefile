# The two commands of the README:
#   make tour    installs ctx (without the dev tools) and runs a short tour on
#                the default store
#   make check   installs ctx with its dev tools and runs every check and test
#                (as root, it installs OpenSSH and lighttpd for the server tests)
# and:
#   make install-runtime  ctx and what it needs to run, into .venv, no dev tools
VENV := .venv
BIN := $(VENV)/bin
SOURCES := $(shell find engine hub porcelain lens -name '*.py' -o -name '*.pyi') pyproject.toml

.PHONY: install install-runtime tour check test lint fix servers

# --no-compile: the dev tools' and dependencies' bytecode is written as the
# checks import them, not all of it up front (a third of the install's CPU).
$(BIN)/.installed: $(SOURCES)
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-compile \
		-e '.[dev]' --config-settings editable_mode=strict
	touch $@

install: $(BIN)/.installed

$(BIN)/.runtime: $(SOURCES)
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
		-e . --config-settings editable_mode=strict
	touch $@

install-runtime: $(BIN)/.runtime

tour: install-runtime
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/tour.sh

lint: install
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy -p ctx.engine -p ctx.hub -p ctx.porcelain -p ctx.lens
	$(BIN)/lint-imports

# The servers tests/integration/test_real_servers.py starts: OpenSSH and
# lighttpd (git's http-backend comes with git), from the distribution's
# packages, installed as root where apt-get can; without them those tests
# skip and say why. Never fails.
SERVER_PACKAGES := openssh-server lighttpd
APT := DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends

servers:
	@test -x /usr/sbin/sshd -a -x /usr/sbin/lighttpd || \
	{ test "$$(id -u)" = 0 && command -v apt-get >/dev/null && \
	  { $(APT) $(SERVER_PACKAGES) >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null 2>&1 && $(APT) $(SERVER_PACKAGES) >/dev/null 2>&1; }; }; } || \
	echo "make: $(SERVER_PACKAGES) not installed: the tests of real ssh and web servers skip"

# Three workers on two cores: much of a test's time is spent waiting for the
# processes and servers it started, so two workers left the cores partly
# idle (the whole suite here: 536-599 s at two workers; 443 s at three, with
# 1.87 cores busy).
test: install servers
	$(BIN)/pytest -q -p no:cacheprovider -n 3 --dist worksteal

check: lint test

fix: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .
