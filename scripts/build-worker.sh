#!/usr/bin/env bash
# Builds the Worker bundle into build/ with worker-build, pointing it at the
# pinned local tools so that nothing is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export WASM_BINDGEN_BIN="$(command -v wasm-bindgen)"
export WASM_OPT_BIN="$PWD/node_modules/.bin/wasm-opt"
export ESBUILD_BIN="$PWD/node_modules/.bin/esbuild"
worker-build --release --no-default-features --features worker
echo "built build/ ($(wc -c < build/index_bg.wasm) bytes wasm, $(gzip -9c build/index_bg.wasm | wc -c) gzip)"
