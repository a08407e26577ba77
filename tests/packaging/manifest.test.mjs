// What the packed npm tarball says about itself: its licenses ship with it,
// it names its repository, and its Node range starts where require() of this
// ESM package works (Node 20.19: require(esm) without a flag).
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { packPkg, pkgDir } from "./pack.mjs";

const packed = packPkg("edgemem-manifest-");
after(() => rmSync(packed.dir, { recursive: true, force: true }));
const manifest = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));

test("the tarball carries both license texts of `MIT OR Apache-2.0`", () => {
  assert.equal(manifest.license, "MIT OR Apache-2.0");
  for (const file of ["LICENSE-MIT", "LICENSE-APACHE"]) assert.ok(packed.files.includes(file), `${file} is not in the tarball: ${packed.files.join(", ")}`);
  assert.match(readFileSync(join(pkgDir, "LICENSE-MIT"), "utf8"), /^MIT License\b[\s\S]*Permission is hereby granted, free of charge/);
  assert.match(readFileSync(join(pkgDir, "LICENSE-APACHE"), "utf8"), /Apache License\s+Version 2\.0, January 2004/);
});

test("the manifest names its git repository", () => {
  assert.deepEqual(manifest.repository, { type: "git", url: "git+https://github.com/edgemem/edgemem.git" });
});

test("engines.node starts at 20.19, the first Node 20 that can require() this ESM package", () => {
  assert.equal(manifest.engines?.node, ">=20.19");
});
