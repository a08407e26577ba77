#!/usr/bin/env bash
# Installs everything edgemem needs on a fresh machine of the `rust` kind.
# Idempotent: each step checks before it installs, so `make` can call it every time.
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_BINDGEN_VERSION=0.2.130
WORKER_BUILD_VERSION=0.8.7
export PATH="$HOME/.cargo/bin:$PATH"

log() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

# Debian Chromium + ChromeDriver for the browser tests (wasm-bindgen-test and Playwright).
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  log "installing chromium and chromium-driver (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# Python virtualenvs for the agent-memory-client test (tests/ams): Debian's
# python3 has venv and ensurepip only with python3-venv.
if ! python3 -c 'import ensurepip, venv' 2>/dev/null && ! /usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null; then
  log "installing python3-venv (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq python3-venv >/dev/null
fi

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "adding rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# The CLI must match the wasm-bindgen crate exactly. No --locked: one locked crate is
# missing from the registry mirror here.
# `wasm-bindgen --version` prints "wasm-bindgen X"; `worker-build --version` prints "X".
if ! wasm-bindgen --version 2>/dev/null | grep -qwF -- "$WASM_BINDGEN_VERSION"; then
  log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 3 min)"
  cargo install -q wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

if ! worker-build --version 2>/dev/null | grep -qwF -- "$WORKER_BUILD_VERSION"; then
  log "installing worker-build $WORKER_BUILD_VERSION (about 3.5 min)"
  cargo install -q worker-build --version "$WORKER_BUILD_VERSION" --force
fi

# npm tooling pinned by package-lock.json; reinstall only when the lock file changed.
if [ ! -f node_modules/.edgemem-lock ] || ! cmp -s package-lock.json node_modules/.edgemem-lock; then
  log "installing npm dev tools (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json node_modules/.edgemem-lock
fi
log "ok"
