// Retrieval benchmark entry point: picks the data set and runs its runner.
//
//   (cd benches/ltm && npm ci) && make pkg && node benches/ltm/retrieval.mjs
//   node benches/ltm/retrieval.mjs --set convbench   # EDGEMEM_PKG=…/pkg/node.js for another build
//
// rustdocs (the default): retrieval-rustdocs.mjs, results in target/bench/retrieval.json.
// convbench: retrieval-convbench.mjs, results in target/bench/retrieval-convbench.json.
// The sets and their loaders are in sets.mjs.
import { setFromArgv } from "./sets.mjs";

const set = setFromArgv();
await import(set.runner);
