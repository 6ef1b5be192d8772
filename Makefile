# Two commands on a fresh machine with Python 3.11+ and make: `make run`, `make test`.
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' && echo $$p && break; done)
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
# pytest-xdist workers for `make test`; TEST_WORKERS=0 runs in one process
TEST_WORKERS ?= auto

.PHONY: run test lint fmt migrate seed clean bench messages fuzz

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "Python 3.11 or newer is required"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

run: $(VENV)/.installed  ## serve on http://127.0.0.1:$(PORT) (SQLite in instance/ unless DATABASE_URL)
	$(BIN)/flask --app wsgi db upgrade
	PORT=$(PORT) $(BIN)/gunicorn -c gunicorn.conf.py wsgi:app

test: $(VENV)/.installed  ## the test suite (TEST_DATABASE_URL=postgresql://... for PostgreSQL)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

# Schemathesis over the running app (gunicorn) on DATABASE_URL, anonymous and signed in,
# every check; FUZZ_SECONDS per run (CI runs 60 s each). DATABASE_URL is written to.
FUZZ_SECONDS ?= 600
fuzz: $(VENV)/.installed  ## long schemathesis run: DATABASE_URL=postgresql://... make fuzz
	FUZZ_SECONDS=$(FUZZ_SECONDS) $(BIN)/python -m tests.fuzz.schemathesis_run

lint: $(VENV)/.installed
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy app
	$(BIN)/lint-imports

fmt: $(VENV)/.installed
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

migrate: $(VENV)/.installed  ## apply migrations to DATABASE_URL (default instance/app.db)
	$(BIN)/flask --app wsgi db upgrade

seed: migrate  ## a small demo data set (idempotent)
	$(BIN)/flask --app wsgi seed demo

messages: $(VENV)/.installed  ## extract the website pages' strings and merge them into each catalogue
	$(BIN)/pybabel extract -F babel.cfg -k _l --no-location --sort-output --project "Location Notes Service" -o app/web/translations/messages.pot .
	$(BIN)/pybabel update -i app/web/translations/messages.pot -d app/web/translations --ignore-obsolete --width 100

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
