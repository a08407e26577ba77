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

test("the package has no dependencies: installing the tarball fetches nothing (the adapters' libraries are optional peers)", () => {
  assert.equal(manifest.dependencies, undefined, `dependencies: ${JSON.stringify(manifest.dependencies)}`);
  for (const [name, meta] of Object.entries(manifest.peerDependenciesMeta ?? {})) assert.equal(meta.optional, true, `peer ${name} is not optional`);
  assert.deepEqual(Object.keys(manifest.peerDependencies ?? {}).sort(), Object.keys(manifest.peerDependenciesMeta ?? {}).sort(), "every peer is marked optional");
});

/** Every target string under an `exports` value (conditions nest). */
function targets(value) {
  if (typeof value === "string") return [value];
  if (value === null || typeof value !== "object") return [];
  return Object.values(value).flatMap(targets);
}

test("every file `exports`, `types` and `bin` point at is listed in `files` and is in the tarball", () => {
  const pointed = new Set([...targets(manifest.exports), manifest.types, ...Object.values(manifest.bin ?? {})].filter(Boolean));
  for (const sub of ["./ai", "./langchain", "./mcp"]) assert.ok(sub in manifest.exports, `no ${sub} export`);
  const listed = (path) => path === "package.json" || manifest.files.some((f) => f === path || (f.endsWith("/") && path.startsWith(f)));
  for (const target of pointed) {
    assert.ok(target.startsWith("./"), `${target} is not a ./ path`);
    const path = target.slice(2);
    if (path.includes("*")) {
      const [prefix, suffix] = path.split("*");
      assert.ok(listed(prefix), `${target}: ${prefix} is not in files`);
      assert.ok(packed.files.some((f) => f.startsWith(prefix) && f.endsWith(suffix) && f.length > prefix.length + suffix.length), `${target} matches no file in the tarball`);
    } else {
      assert.ok(listed(path), `${target} is not in files`);
      assert.ok(packed.files.includes(path), `${target} is not in the tarball`);
    }
  }
});
