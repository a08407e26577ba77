#!/usr/bin/env bash
# Prints the gzip size of the npm wasm and of the Worker bundle, and fails past
# the budgets. They sit about 3 % above the sizes measured, so any growth is a
# decision; issue 16's goals (600 KB and 800 KB) are not reached, and each cut
# toward them lowers these.
#
# History: 763 KB / 923 KB after issue 16's msgpack reader. Issue 11 (the
# live feed over WebSocket and event streams, the service-state cache,
# profiles and user schemas, numbers kept as their text) took them to 878 KB /
# 1,061 KB: a decision, recorded here and in the issue's closing note. Most of
# the growth is serde's derived code for the new ops and bodies (twiggy: the
# op enums' visitors are among the largest functions). Issue 12 (tenancy)
# took the Worker to 1,121 KB. Issue 13 (the decision log, privacy policy and
# consent, the secret and personal-data scanners with the scrub of every op,
# guardrails, `scrubText`) took them to 969 KB / 1,213 KB: a decision,
# recorded here and in the issue's closing note. The scanners themselves are
# small (find_pii is 14 KB raw); most of the growth is again the routes'
# async state machine (`api::route` is 139 KB raw) and the ops' serde code.
# Issue 14's first part (background extraction: the offline rules with
# their word tables and date reader, the extraction op and watermark, the
# passes on the host's wake-up, the extractor hook, filter-only search)
# took them to 1,047 KB / 1,289 KB: a decision, recorded here; not yet
# broken down by function (twiggy was not installed for this measurement).
# Issue 14's second part (the static embedder's tokenizer with its generated
# Unicode tables, about 10 KB of data; embedder identity and re-embedding;
# AMS's summary views and tasks with their ops, routes and continuous
# refresh) took them to 1,164 KB / 1,418 KB: a decision, recorded here and in
# the issue's note. The model itself is an asset, not in the wasm.
# Issue 15 (the full tool set on one schema table with its argument checks
# and token ceiling, the MCP dispatcher with resources, the Worker's /mcp
# with sessions and the tool pipeline through the front, field-naming
# parse errors) took them to 1,201 KB / 1,466 KB: a decision, recorded here
# and in the issue's note. The OpenAPI generator and the full table of 97
# operations are native only and add nothing.
# Issue 19 (Snowball's English stemmer, about 10 KB gzip measured alone in a
# wasm32 LTO build; time expressions; coverage-weighted fusion; neighbouring
# turns) took them to 1,235 KB / 1,509 KB: a decision, recorded here and in
# the issue's note.
# Issue 20's first parts (fact chains with as-of search, versions with
# restore and redaction, explanations, NDJSON export and import) took them
# to 1,324 KB / 1,606 KB: a decision, recorded here and in the issue's
# note. An import reads the state types through their snapshot reader (JSON
# written as MessagePack), which kept about 65 KB of per-type JSON decoding
# out of the Worker; the export's JSON writers and the new ops and routes
# are the rest.
# Issue 20's encryption at rest (the Sealed adapter with its header, the
# rotation on the snapshot protocol, the WebCrypto extern block, and in the
# Worker the per-request key, the API-key binding and the rotate route)
# took them to 1,361 KB / 1,649 KB: the npm budget holds, the Worker's is
# raised to 1,655,000, a decision recorded here and in the issue's note.
# One publish path (plaintext through the adapter's pass-through) kept a
# second instantiation of the publish and sweep code out of both.
# Issue 21's SQL storage (the SQL backend with its upgrade from the
# key-value API, the erasure stash, the row meters) and the long-term search
# split into candidates and one rank step, with the external-index seam in
# the search route, took them to 1,366 KB / 1,675 KB (npm / Worker): raised
# to 1,370,000 / 1,685,000, a decision recorded here and in the issue's note.
# In npm the split search and the external index's path in it are the
# growth; the SQL backend is Worker-only.
# Issue 21's sharding in the Worker (the directory object and the map
# cache, routing by the route table's placements with a create split by
# bucket, the epoch check and retries, the fan-out executor with its two
# rounds, deadlines and coverage, the search's wire parts with their serde
# code, memory prompts, session lists and consent across shards, the
# hand-over of extracted records) took the Worker to 1,820,790 (npm
# 1,366,699, within its budget): the Worker's budget is raised to
# 1,875,000, a decision recorded here and in the issue's note. twiggy,
# before against after at the cargo output: the largest new functions are
# the object's request future (+25 KB raw), the candidates part (17 KB),
# the create split (16 KB), the fan-out walk (15 KB), the placement match
# (14 KB), the rank over wire parts (14 KB), and serde and sort
# instantiations for the wire types (about 75 KB together). Boxing the
# shard-call futures changed the size by 1 KB. The Worker's name section
# (about 300 KB raw) is kept for readable stack traces in Workers' logs.
# Issue 21's resharding (the state moves in the core: two ops, the move
# item with its JSON and MessagePack readers, digests; in the Worker the
# directory's split driver with its alarm, the shards' move steps and
# fence, the shard admin routes) took them to 1,388,541 / 1,939,412: raised
# to 1,400,000 / 1,960,000, a decision recorded here and in the issue's
# note. In npm the growth is the ops' decoding and the move code the core
# carries (npm never runs a split, but a store must read every op). Not
# broken down by function this time (twiggy was not on the machine).
# Issue 21's cross-shard summary views (gather and merge at home, the
# shards telling home of changes), stats and re-embedding over every shard,
# the `exact` search option, the vector quantization setting, by-id routes
# through the id directory's buckets and the key directory over 16 objects
# took the Worker to 1,991,416 (npm 1,395,464, within its budget): the
# Worker's budget is raised to 2,000,000, a decision recorded here and in
# the issue's note (Cloudflare's limit for a Worker is 3 MB gzip on the
# free plan, 10 MB paid). Not broken down by function (no twiggy here).
# Issue 21's forget without a user, `/v1/prompt` and encryption across
# shards took the Worker to 2,012,395: over. Instead of raising the budget
# again, the Worker now ships without its name section (362 KB raw, 88 KB
# gzip; scripts/strip-names.mjs, the named copy kept in target/worker for
# reading stack traces): 1,919,300, and the budget is lowered to 1,960,000.
# Export and import across shards and the abort of a split then took it
# to 1,944,205.
# Issue 21's change feed across shards (the relay op, which every store
# must be able to read, with home's marks in its snapshot; in the Worker
# the pull before a page or subscriber, the shards' push after writes, the
# front passing home's WebSocket on) and publishing across shards (every
# shard's export merged and published by home; the snapshot publish split
# out of the store so a merged state publishes through the same code) took
# them to 1,400,263 / 1,974,184: raised to 1,410,000 / 1,990,000, a
# decision recorded here and in the issue's note. The op's log form is a
# tuple (one sequence visitor) and home's marks reuse the map type the
# engine already had, which kept about 2 KB out of npm; two builds of the
# same sources differed by 195 bytes gzip (same raw size).
# Stop 39: an edit that moves a record to another user's shard (the front's
# hand-over, the shards' adopt and drop steps) and the split's digest of
# what each import stored took the Worker from 1,977,330 to 1,995,730
# gzip: raised to 2,000,000. A first build measured 2,028,236: the front
# decoded the moving record (serde_json::Value into the record's whole
# state type) to read its version; it now passes the item through as the
# old shard wrote it and that shard answers the version, and the split's
# kept digest is a sorted Vec rather than a new BTreeMap type (33 KB gzip
# out together).
# Stop 41: a sharded tenant's export and import past 32 MiB (the front's
# exporter, page after page from each shard, with the shards' head, page
# and holds steps; the import split line by line as the body streams in,
# staged in each shard's database, the ids entered in the id directory)
# took the Worker bundle from 1,999,475 to 2,034,170 gzip: raised to
# 2,040,000, a decision recorded here and in the issue's note. Compared
# function by function with the build before (the cargo output, names
# kept): 87 KB raw more, the largest the sharded request future with the
# import's streaming loop (+19 KB), the exporter's next chunk (13 KB), a
# shard's export step (+10 KB in its step dispatch), the line splitter (9
# KB, replacing the whole-file split's 10 KB) and the exporter's start (6
# KB). The shards' answers are NDJSON read with serde_json::Value rather
# than derived types (1.1 KB gzip out, and no line escaped into a JSON
# string and read back). npm grew to 1,409,098 (from 1,407,545, within its
# budget): the export's state lines, cut by session, are one function with
# the unsharded export's.
# Stop 42: a sharded tenant's replica is its export, which the npm package's
# `Memory.openPublished` now reads a chunk at a time (the export head, the
# import parser a line at a time, the chunk loop): npm 1,409,098 to
# 1,412,703 gzip, over its 1,410,000. The reader is what makes a sharded
# tenant's replica readable past one object's memory; its budget is raised
# to 1,415,000, a decision recorded here and in the issue's note. The
# Worker grew from 2,034,170 to 2,036,427, within its budget (the publish
# stream in, home's merged publish and its engine build out), then to
# 2,039,454 with the split of an encrypted tenant (the key held in memory
# by the directory, carried by every split call), 2,039,202 once a shard's
# split steps moved to their own file and the key lookup became one helper:
# 798 bytes under its budget, so the
# next change that adds Worker code must find room first.
set -euo pipefail
cd "$(dirname "$0")/.."
NPM_WASM_GZIP_BYTES_MAX=1415000
WORKER_GZIP_BYTES_MAX=2040000

gz() { gzip -9c "$@" | wc -c; }
npm_raw=$(wc -c < pkg/edgemem_bg.wasm)
npm_gz=$(gz pkg/edgemem_bg.wasm)
worker_raw=$(cat build/index.js build/index_bg.wasm | wc -c)
worker_gz=$(( $(gz build/index.js) + $(gz build/index_bg.wasm) ))
printf 'size: npm wasm     %9d bytes raw, %8d gzip (budget %d)\n' "$npm_raw" "$npm_gz" "$NPM_WASM_GZIP_BYTES_MAX"
printf 'size: worker bundle %8d bytes raw, %8d gzip (budget %d)\n' "$worker_raw" "$worker_gz" "$WORKER_GZIP_BYTES_MAX"
status=0
if [ "$npm_gz" -gt "$NPM_WASM_GZIP_BYTES_MAX" ]; then echo "size: npm wasm is over budget"; status=1; fi
if [ "$worker_gz" -gt "$WORKER_GZIP_BYTES_MAX" ]; then echo "size: worker bundle is over budget"; status=1; fi
exit $status
