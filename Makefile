# Two commands on a fresh machine with Python 3.11+ and make: `make run`, `make test`.
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1 && echo $$p && break; done)
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
# pytest-xdist workers for `make test`: one more than the cores (tests wait on servers,
# browsers and locks, and a third worker fills those waits); TEST_WORKERS=0 runs in one
# process. Each worker takes tests from the others' queues when its own runs out.
TEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print(len(os.sched_getaffinity(0)) + 1)' 2>/dev/null || echo 2)

.PHONY: run test lint fmt migrate seed clean bench messages fuzz lock topology screenshots

# The venv's own pip installs uv alone, from its pinned and hashed line (requirements/uv.txt);
# uv installs the sets below: the same locked files, in seconds where pip took most of a
# minute, compiled as pip compiles them (a library's warnings at compile time stay out of
# the tests, which fail on any warning). pip speaks only of errors (-qq).
$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "Python 3.11 or newer is required"; exit 1; }
	@echo "Making .venv with $(PYTHON) (once)"
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --quiet --require-hashes -r requirements/uv.txt

# Two install sets from the lock files in requirements/ (pinned, hashed; `make lock`):
# `make run` installs the runtime set only, plus the optional extras named in EXTRAS
# (`make run EXTRAS=s3,redis,sentry,otel`); `make test` and `make lint` the development set.
EXTRAS ?=
comma := ,
EXTRA_LOCKS := $(foreach extra,$(subst $(comma), ,$(EXTRAS)),requirements/$(extra).txt)
RUNTIME := $(VENV)/.runtime$(subst $(comma),-,$(if $(EXTRAS),-$(EXTRAS)))
UV_PIP := $(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python
INSTALL := $(UV_PIP) --require-hashes

$(RUNTIME): requirements/runtime.txt $(EXTRA_LOCKS) | $(BIN)/python
	@echo "Installing the runtime set into .venv (requirements/runtime.txt)"
	@$(INSTALL) -r requirements/runtime.txt $(addprefix -r ,$(EXTRA_LOCKS))
	@$(UV_PIP) --no-deps -e .
	@touch $@

$(VENV)/.installed: requirements/dev.txt | $(BIN)/python
	@echo "Installing the development set into .venv (requirements/dev.txt)"
	@$(INSTALL) -r requirements/dev.txt
	@$(UV_PIP) --no-deps -e .
	@touch $@

# The worker (`flask worker`: account mail and other background jobs) runs beside the web
# server and is stopped (SIGTERM: it finishes its current job) when the server stops.
run: $(RUNTIME)  ## serve on http://127.0.0.1:$(PORT) with a worker (SQLite in instance/ unless DATABASE_URL)
	$(BIN)/flask --app wsgi db upgrade
	PORT=$(PORT) $(BIN)/flask --app wsgi worker & worker=$$!; \
	trap 'kill $$worker 2>/dev/null; wait $$worker' EXIT; trap 'exit 130' INT TERM; \
	PORT=$(PORT) $(BIN)/gunicorn -c gunicorn.conf.py wsgi:app

# Compiled modules (and pytest's rewritten test modules) are kept in __pycache__ (ignored
# by git), so a second run starts at once, even where PYTHONDONTWRITEBYTECODE is set.
# COVERAGE=1: line and branch coverage of app/ in every process the tests start
# ([tool.coverage] in pyproject.toml), reported under its floor (build/coverage/).
COVERAGE_DATA := $(CURDIR)/build/coverage/.coverage
ifeq ($(COVERAGE),1)
PYTEST := PYTHONDONTWRITEBYTECODE= COVERAGE_FILE=$(COVERAGE_DATA) $(BIN)/coverage run -m pytest
else
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest
endif

test: $(VENV)/.installed  ## the test suite (TEST_DATABASE_URL=postgresql://... for PostgreSQL)
ifeq ($(COVERAGE),1)
	@rm -rf build/coverage && mkdir -p build/coverage
endif
	$(PYTEST) -n $(TEST_WORKERS) --dist worksteal $(PYTEST_ARGS)
ifeq ($(COVERAGE),1)
	@$(BIN)/coverage combine --quiet --data-file=$(COVERAGE_DATA) build/coverage
	@$(BIN)/coverage report --data-file=$(COVERAGE_DATA) --sort=cover > build/coverage/report.txt; \
	status=$$?; head -n 2 build/coverage/report.txt; tail -n 12 build/coverage/report.txt; exit $$status
endif

# The documentation's screenshots (docs/screenshots/), taken by the browser tests that
# take them; other runs of those tests write theirs under build/ (needs Debian's Chromium).
screenshots: $(VENV)/.installed
	UPDATE_SCREENSHOTS=1 $(BIN)/python -m pytest -n 0 -q tests/web/test_browser.py tests/web/test_browser_map.py

# Schemathesis over the running app (gunicorn) on DATABASE_URL, anonymous and signed in,
# every check, exploring from a random seed (printed; FUZZ_SEED=... repeats a run) for
# FUZZ_SECONDS per run. CI runs a fixed seed instead (.ci/run). DATABASE_URL is written to.
FUZZ_SECONDS ?= 600
fuzz: $(VENV)/.installed  ## long schemathesis run: DATABASE_URL=postgresql://... make fuzz
	FUZZ_MODE=explore FUZZ_SECONDS=$(FUZZ_SECONDS) $(BIN)/python -m tests.fuzz.schemathesis_run

# The production topology on this machine (nginx, two instances and the uploads' one, a
# worker, PgBouncer, Redis, moto's S3, an SMTP sink) and the checks that need several
# instances; needs Debian's nginx and pgbouncer and the local PostgreSQL and Redis. Not
# part of CI (bench/topology.py).
topology: $(VENV)/.installed
	$(BIN)/python bench/topology.py $(TOPOLOGY_ARGS)

lint: $(VENV)/.installed
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy app
	$(BIN)/lint-imports
	$(BIN)/hadolint deploy/Dockerfile

fmt: $(VENV)/.installed
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

migrate: $(RUNTIME)  ## apply migrations to DATABASE_URL (default instance/app.db)
	$(BIN)/flask --app wsgi db upgrade

seed: migrate  ## a small demo data set (idempotent)
	$(BIN)/flask --app wsgi seed demo

messages: $(VENV)/.installed  ## extract the website pages' strings and merge them into each catalogue
	$(BIN)/pybabel extract -F babel.cfg -k _l --no-location --sort-output --project "Location Notes Service" -o app/web/translations/messages.pot .
	$(BIN)/pybabel update -i app/web/translations/messages.pot -d app/web/translations --ignore-obsolete --width 100

lock: $(VENV)/.installed  ## rewrite requirements/*.txt from pyproject.toml (UPGRADE=1: newest allowed)
	$(BIN)/python requirements/lock.py $(if $(UPGRADE),--upgrade)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
