# The commands people type. `make demo` and `make test` work on a fresh machine: they build
# the virtualenv themselves.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# WordNet 3.0 for the edits library (suggestions, the baseline breaker), from Debian's wordnet-base
# (edits/wordnet.py reads the same variable from the environment).
BIBI_WORDNET_DIR ?= /usr/share/wordnet
DEMO_ADDR ?= 127.0.0.1:8000
# The demo's data: this project's small set, or e.g. DATA=../shared/data/sst2.
DATA ?= fixtures/demo
# The demo's QA-SRL span task reads slices of the shared wiki1 files here (absent: no span task).
SPAN_DATA ?= ../shared/data/qasrl
# The demo's sentence-pair (NLI) task reads slices of the shared nli-cad files here (absent: no NLI task).
PAIR_DATA ?= ../shared/data/nli-cad

.PHONY: install demo test test-services test-embedded lint lint-layout format services browser vendor worker bench bench-labels bench-gpu check-transformers clean

$(STAMP): pyproject.toml
	test -f $(BIBI_WORDNET_DIR)/data.noun || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes apt-get install -y -qq --no-install-recommends wordnet-base >/dev/null; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The main job on the embedded default: SQLite under var/, Celery tasks in-process. Builds the
# demo task (three trained systems, two breaker teams, published results), then serves it.
demo: install
	DEBUG=1 $(BIN)/python manage.py migrate --noinput
	DEBUG=1 BIBI_WORDNET_DIR=$(BIBI_WORDNET_DIR) $(BIN)/python manage.py demo --data $(DATA) --span-data $(SPAN_DATA) --pair-data $(PAIR_DATA)
	DEBUG=1 $(BIN)/python manage.py runserver --noreload $(DEMO_ADDR)

lint: install lint-layout
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The layout rules (part of lint): the import contracts in .importlinter (libraries never import
# the platform; the app floors; no cycle between apps; APIs -> services -> selectors -> models),
# the size limits of scripts/check_sizes.py, and no branch on a task's type outside
# platform/bibi/tasktypes/ (scripts/check_task_types.py).
lint-layout: install
	$(BIN)/lint-imports
	$(BIN)/python scripts/check_sizes.py
	$(BIN)/python scripts/check_task_types.py
	$(BIN)/python scripts/check_private_imports.py

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

services:
	bash deploy/ensure-services.sh

# The browser tests drive Debian's chromium package (Playwright's own browser downloads are
# never used): install it when it is missing. Needs root, as CI has.
browser:
	@test -x /usr/bin/chromium || { \
	  [ "$$(id -u)" = 0 ] || { echo "Install Debian's chromium package (as root: apt-get install chromium)"; exit 1; }; \
	  echo "Installing chromium for the browser tests"; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# Third-party browser files come from npm (package.json, package-lock.json) into
# platform/bibi/web/static/vendor/, where they are committed; its README gives versions and licences.
vendor:
	npm ci --no-audit --no-fund --ignore-scripts
	mkdir -p platform/bibi/web/static/vendor/axe-core
	cp node_modules/axe-core/axe.min.js node_modules/axe-core/LICENSE \
	  node_modules/axe-core/LICENSE-3RD-PARTY.txt platform/bibi/web/static/vendor/axe-core/

# pytest exits 5 when a selection holds no test: that is not a failure of the suite.
test-services: install services browser
	BIBI_TEST_BACKEND=services $(BIN)/pytest $(PYTEST_ARGS) || [ $$? -eq 5 ]

test-embedded: install browser
	BIBI_TEST_BACKEND=embedded $(BIN)/pytest -m embedded $(PYTEST_ARGS) || [ $$? -eq 5 ]

test: lint
	DJANGO_SETTINGS_MODULE=bibi.settings_test $(BIN)/python manage.py makemigrations --check --dry-run
	$(MAKE) test-services
	$(MAKE) test-embedded

# One worker on the three queues (interactive, default, gpu) with beat inside it (-B), which sends the periodic housekeeping tasks:
# right for one machine. A deployment runs exactly one beat of its own (deploy/compose.yaml).
worker: install services
	mkdir -p var
	$(BIN)/celery -A bibi worker -B --schedule-filename var/celerybeat-schedule -Q interactive,default,gpu --concurrency 1 -l info

# Speed figures: the engine (λmax vs forward vs Algorithm 1), suggestions (latency on MiniLM,
# flip rates on SST-2; trains its systems once into var/bench-suggest), scoring at scale, a
# 50k-row import and a 10k-pair set; the peak memory of a gunicorn worker refusing 200 MB uploads;
# evaluation (MiniLM through a real worker, a 20 x 10k re-score).
bench: install services
	$(BIN)/python -m fim_engine bench
	$(MAKE) bench-labels
	$(BIN)/python -m fim_engine bench-suggest
	$(BIN)/python -m scoring bench
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test} SECRET_KEY=bench $(BIN)/python manage.py migrate --noinput -v0
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test} SECRET_KEY=bench $(BIN)/python manage.py benchmark_import
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test} SECRET_KEY=bench $(BIN)/python manage.py bench_pair_sets
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test} SECRET_KEY=bench $(BIN)/python manage.py bench_uploads
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test} REDIS_URL=$${REDIS_URL:-redis://127.0.0.1:6379/14} SECRET_KEY=bench $(BIN)/python manage.py bench_evaluation
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test} REDIS_URL=$${REDIS_URL:-redis://127.0.0.1:6379/14} GUIDANCE_SUGGEST_THROTTLE=1000/minute SECRET_KEY=bench $(BIN)/python manage.py bench_guidance
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test} REDIS_URL=$${REDIS_URL:-redis://127.0.0.1:6379/14} SECRET_KEY=bench $(BIN)/python manage.py bench_interactive

# fim_engine's tests under the lowest and the highest transformers the pin admits (installs
# each into var/transformers/ once, from the package registry): run it before moving the pin.
check-transformers: install
	$(BIN)/python scripts/check_transformers_versions.py

# λmax+hints / forward of MiniLM-L6 with fresh 2-, 3- and 5-label heads in one run (interleaved
# repeats, medians, the load average printed): the multi-class cost on this machine's CPU.
bench-labels:
	$(BIN)/python -m fim_engine bench --arch minilm --labels 2,3,5 --alg1-sentences 0 --repeats 5 \
		$(if $(wildcard ../shared/data/sst2/stsa.binary.dev),--data ../shared/data/sst2/stsa.binary.dev --sentences 128)

# fim_engine on one GPU within a short lease (under 5 minutes; --budget-s skips what does not
# fit): forward and λmax throughput per model size, labels, batch and precision. Needs only the
# checkout, torch and transformers (random-initialised models, nothing downloaded), so it runs
# without the virtualenv: the venv's python when there is one, else $(PYTHON).
bench-gpu:
	mkdir -p var
	PYTHONPATH=. $(if $(wildcard $(BIN)/python),$(BIN)/python,$(PYTHON)) -m fim_engine bench-gpu --budget-s 240 --json var/bench-gpu.json

clean:
	rm -rf var/test .pytest_cache .mypy_cache .ruff_cache
