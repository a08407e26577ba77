#!/usr/bin/env bash
# Builds the Worker bundle into build/ with worker-build, pointing it at the
# pinned local tools so that nothing is downloaded.
#
# Incremental: the Worker has its own target directory (target/worker),
# because worker-build compiles with WASM_BINDGEN_USE_JS_SYS=1, which changes
# wasm-bindgen's macro output and so every crate above it: in one shared
# directory the npm and Worker builds would each rebuild what the other just
# built. cargo runs first, exactly as worker-build will; when the wasm it
# wrote is the one build/ was made from (a SHA-256 stamp), worker-build
# (wasm-bindgen, wasm-opt, esbuild) is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export WASM_BINDGEN_BIN="$(command -v wasm-bindgen)"
export WASM_OPT_BIN="$PWD/node_modules/.bin/wasm-opt"
export ESBUILD_BIN="$PWD/node_modules/.bin/esbuild"
export CARGO_TARGET_DIR="$PWD/target/worker"
export WASM_BINDGEN_USE_JS_SYS=1

wasm="$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/edgemem.wasm"
stamp=build/.wasm-input.sha256

cargo build --lib --quiet --release --target wasm32-unknown-unknown --no-default-features --features worker
sum=$(sha256sum "$wasm" | cut -d' ' -f1)
if [ -f build/index.js ] && [ -f build/index_bg.wasm ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ]; then
  echo "build/: wasm unchanged, worker-build skipped"
else
  worker-build --release --no-default-features --features worker
  # Shipped without the name section (scripts/strip-names.mjs says why);
  # the named copy stays here for reading stack traces.
  node scripts/strip-names.mjs build/index_bg.wasm "$CARGO_TARGET_DIR/index_bg.named.wasm"
  echo "$sum" > "$stamp"
fi
echo "built build/ ($(wc -c < build/index_bg.wasm) bytes wasm, $(gzip -9c build/index_bg.wasm | wc -c) gzip)"
