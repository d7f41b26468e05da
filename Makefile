# The project's interface: `make run` serves the API, `make test` proves it works. `make help` lists the rest.
# Recipes run in bash with this clone's settings (.local/env: the ports and servers its services were started with)
# for every variable the environment leaves unset, so `make status`, `make stop` and the rest talk to this clone.
SHELL := $(CURDIR)/scripts/local-env.sh
.DEFAULT_GOAL := help
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)
TSX := node --import tsx
TEST_DB ?= florida_test_template
PARCELS ?= 100000
SCALE ?= 1000000
SEED ?= 1
YEARS ?= 1
OUT ?= .local/state
JOBS ?= 2

.PHONY: help install services stop status clean replica db run test check typecheck lint format bench-overhead bench-api-cost fuzz bench data load-data basemap client

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-15s %s\n", $$1, $$2}'

install: ## Debian packages and npm dependencies, only what is missing
	@bash scripts/services.sh install
	@bash scripts/npm-ci.sh

services: install ## start this clone's PostGIS and Redis on loopback (PGPORT, REDIS_PORT) and record them in .local/env
	@bash scripts/services.sh start

stop: ## stop this clone's PostGIS and Redis (and its replicas); no other clone's
	@bash scripts/services.sh stop

status: ## whether this clone's PostGIS and Redis run, and on which ports
	@bash scripts/services.sh status

clean: ## stop this clone's services, delete their data (its cluster under PG_DIR, .local/redis) and .local/env
	@bash scripts/services.sh clean

replica: services ## start a streaming replica of the local PostgreSQL on REPLICA_PORT (55433); prints its URL
	@bash scripts/replica.sh start --port $${REPLICA_PORT:-55433}

db: services ## create and migrate the database, apply sql/, load fixtures when empty, ensure the demo key
	@$(TSX) scripts/db-setup.ts --fixtures

run: db ## serve the API, the site, the docs and the explorer on 127.0.0.1:PORT (3000), printing a working curl line
	@$(TSX) scripts/demo-key.ts
	@WEBHOOK_ALLOW_LOOPBACK=$${WEBHOOK_ALLOW_LOOPBACK:-true} exec $(TSX) src/main.ts

test: services ## build the test template database once and run the whole tap suite
	@bash scripts/services.sh install-test
	@$(TSX) scripts/db-setup.ts --database $(TEST_DB) --fixtures --template --quiet
	@TEST_TEMPLATE_DB=$(TEST_DB) bash scripts/test.sh

check: install typecheck lint format ## typecheck, lint and format check

client: ## regenerate the typed TypeScript client (clients/typescript/schema.d.ts) from the OpenAPI document
	@$(TSX) scripts/generate-client.ts

typecheck:
	@tsc --noEmit

lint:
	@eslint src test scripts bench

format:
	@prettier --check 'src/**/*.ts' 'test/**/*.ts' 'scripts/**/*.ts' 'bench/**/*.ts'

bench-overhead: db ## what auth and metering cost a request: one endpoint with each layer on and off, in one run
	@bash scripts/services.sh install-bench
	@$(TSX) bench/overhead.ts --seconds $${SECONDS_PER_RUN:-8} --connections 32 --rounds $${ROUNDS:-3} --endpoint $${ENDPOINT:-/parcels/1}

bench-api-cost: db ## the API process's CPU per by-id request against a bare node:http server at a paced 500/s, and its CPU profile
	@$(TSX) bench/api-cost.ts --rate $${RATE:-500} --seconds $${SECONDS_PER_RUN:-10} --rounds $${ROUNDS:-3}

fuzz: ## hostile fuzz for MINUTES (10) against a running `make run`; report in .local/fuzz-report.md
	@$(TSX) scripts/fuzz.ts --minutes $${MINUTES:-10}

.PHONY: stripe-check
stripe-check: ## billing against a real Stripe test account: STRIPE_SECRET_KEY=sk_test_… and `stripe listen` forwarding to `make run` (docs/billing.md; not in CI)
	@$(TSX) scripts/stripe-check.ts

bench: services ## every endpoint's throughput and latency, and search recall, on SCALE (1000000) synthetic parcels: bench/RESULTS.md
	@bash scripts/services.sh install-bench
	@url=$$($(TSX) bench/state.ts --parcels $(SCALE)) && unset API_DATABASE_URL && DATABASE_URL="$$url" \
	  $(TSX) bench/run.ts --seconds $${SECONDS_PER_RUN:-10} --recall-queries $${RECALL_QUERIES:-40}

data: ## synthetic statewide NAL, SDF, polygons and delinquencies for all 67 counties (PARCELS=, SEED=, OUT=, YEARS=)
	@$(TSX) scripts/generate-state.ts --parcels $(PARCELS) --seed $(SEED) --out $(OUT) --years $(YEARS)

load-data: db ## load the files `make data` wrote (OUT=) through the importers, JOBS counties at a time
	@$(TSX) scripts/load-state.ts --out $(OUT) --jobs $(JOBS)
	@$(TSX) scripts/basemap.ts

basemap: ## redraw the explorer's base map counties from the loaded parcels (load-data does it after a load)
	@$(TSX) scripts/basemap.ts
