# edgemem: `make demo` builds everything and serves the Worker API and the demo
# page on http://127.0.0.1:8787 with local persistence; `make test` runs every
# test. Both install what a fresh machine lacks (scripts/setup.sh).

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
export PATH := $(HOME)/.cargo/bin:$(PATH)
export WRANGLER_SEND_METRICS := false
export CLOUDFLARE_CF_FETCH_ENABLED := false
export XDG_CONFIG_HOME := $(CURDIR)/.edgemem-dev/xdg
NODE_TEST := node --test --test-concurrency=1
WASM_TEST_ENV := CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
DEMO_PORT ?= 8787

.PHONY: setup pkg site worker build demo test soak test-native test-wasm test-js test-worker test-cli test-browser test-ams size clean

setup:
	bash scripts/setup.sh

pkg: setup
	bash scripts/build-pkg.sh
	ln -sfn ../pkg node_modules/edgemem

site: pkg
	rm -rf target/site && mkdir -p target && cp -r www target/site && cp -r pkg target/site/pkg

worker: setup
	bash scripts/build-worker.sh

build: site worker

# Without EDGEMEM_ADMIN_TOKEN: local dev mode, auth off (honoured on loopback
# only). With it: auth enforced exactly as deployed. The privacy key (keyed
# pseudonyms, sealed user ids) is EDGEMEM_PRIVACY_KEY, else one made once
# for this checkout in .edgemem-dev/privacy-key (the state needs the same key).
demo: build
	mkdir -p .edgemem-dev/state
	@if [ -n "$${EDGEMEM_ADMIN_TOKEN:-}" ]; then \
	  echo "edgemem demo: auth ENFORCED as deployed (admin token from EDGEMEM_ADMIN_TOKEN)"; \
	  auth=(--var "EDGEMEM_ADMIN_TOKEN:$$EDGEMEM_ADMIN_TOKEN"); \
	else \
	  printf '\n%s\n%s\n\n' "!!! edgemem DEV MODE: auth is OFF (honoured on 127.0.0.1 only; never deploy this way)" \
	    "!!! EDGEMEM_ADMIN_TOKEN=... make demo enforces auth exactly as deployed"; \
	  auth=(--var EDGEMEM_DEV_MODE:1); \
	fi; \
	key=.edgemem-dev/privacy-key; \
	if [ -n "$${EDGEMEM_PRIVACY_KEY:-}" ]; then printf %s "$$EDGEMEM_PRIVACY_KEY" > $$key; \
	elif [ ! -s $$key ]; then (umask 077; od -An -tx1 -N32 /dev/urandom | tr -d ' \n' > $$key); fi; \
	node_modules/.bin/wrangler dev --local --ip 127.0.0.1 --port $(DEMO_PORT) \
	  --persist-to .edgemem-dev/state --show-interactive-dev-session=false "$${auth[@]}" \
	  --var "EDGEMEM_PRIVACY_KEY:$$(cat $$key)"

test: build test-native test-wasm test-js test-worker test-cli test-browser test-ams size

# The pure core with default (no) features: proves it needs no wasm or JS.
test-native:
	cargo clippy --quiet --all-targets -- -D warnings
	cargo test --quiet
	@! cargo tree --edges normal --prefix none | grep -E '^(wasm-bindgen|js-sys|worker|web-sys) ' \
	  || (echo "the default build must not depend on wasm crates" && false)

test-wasm:
	$(WASM_TEST_ENV) cargo test --release --target wasm32-unknown-unknown --features wasm --test wasm_node
	$(WASM_TEST_ENV) CHROMEDRIVER=/usr/bin/chromedriver WASM_BINDGEN_USE_BROWSER=1 \
	  cargo test --release --target wasm32-unknown-unknown --features wasm --test wasm_browser

# The consumer type-checks strictly without the DOM lib, under both module
# resolutions; tests/packaging/ installs the packed tarball (a Vite app in
# Chromium, dev server and production build; the manifest and licenses).
test-js:
	node_modules/.bin/tsc -p tests/consumer/tsconfig.bundler.json
	node_modules/.bin/tsc -p tests/consumer/tsconfig.nodenext.json
	$(NODE_TEST) tests/js/ tests/packaging/

test-worker:
	$(NODE_TEST) tests/worker/ tests/workerd/

# The `edgemem` CLI as a subprocess, against `wrangler dev` and a local store.
test-cli:
	$(NODE_TEST) tests/cli/

# The page in Chromium: first served statically (IndexedDB mode), then by
# `wrangler dev` exactly as `make demo` serves it (Worker mode too).
test-browser:
	$(NODE_TEST) tests/e2e/

# Redis Agent Memory Server's own Python client (agent-memory-client 0.14.0, in
# a virtualenv under target/) against the Worker served by `wrangler dev`.
# AMS_PART=working|long-term|summary-views|all (default all); then again with
# each tenant over four shards (AMS_MODES=unsharded|sharded to run one).
test-ams:
	AMS_PART=$${AMS_PART:-all} $(NODE_TEST) tests/ams/

size:
	bash scripts/size-report.sh

# Reliability soak (not part of `make test`): 1,000,000 simulated seeds of
# the store under injected faults and 10^7 executions per fuzz target,
# release profile; 100,000 seeds of a split's catch-up under writes and lost
# batches; then the chaos battery against wrangler dev with 200 kills, and
# 40 kills during splits.
soak: build
	EDGEMEM_SIM_SEEDS=1000000 EDGEMEM_FUZZ_EXECS=10000000 cargo test --release --lib -- --nocapture store::tests::sim:: store::tests::fuzz::
	EDGEMEM_MOVE_SEEDS=100000 cargo test --release --lib -- core::engine::moves_tests::
	EDGEMEM_CHAOS_KILLS=200 $(NODE_TEST) tests/worker/chaos.test.mjs
	EDGEMEM_SPLIT_KILLS=40 $(NODE_TEST) tests/worker/chaos-split.test.mjs

clean:
	rm -rf target/site target/e2e pkg build .edgemem-dev node_modules/edgemem
