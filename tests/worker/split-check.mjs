// Where a sharded tenant's records live, and what a split must leave
// behind (issue 21), shared by the sharding tests: buckets and owners as
// the core computes them; every acknowledged record in exactly one shard,
// the one that owns its bucket under the tenant's map.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";

const BUCKETS = 4096;

/** The bucket of a routing key, as `core::shard::bucket_of` computes it. */
export function bucketOf(key) {
  const d = createHash("sha256").update("edgemem bucket v1\0").update(key).digest();
  return ((d[0] << 8) | d[1]) % BUCKETS;
}

/** The owner of `bucket` under `ShardMap::even(n)` (a new tenant's map). */
export function evenOwner(bucket, n) {
  let o = 0;
  for (let i = 0; i < n; i++) if (Math.floor((i * BUCKETS) / n) <= bucket) o = i;
  return o;
}

/** The owner of `bucket` under a map's runs `[first, shard, since]`. */
export function ownerIn(map, bucket) {
  let o = map.runs[0][1];
  for (const [first, shard] of map.runs) if (first <= bucket) o = shard;
  return o;
}

/** Checks every acknowledged record is held exactly once, by its owner. */
export function checkPlacement(status, live, deleted, users) {
  const where = new Map();
  for (const s of status.shards) {
    for (const id of s.ids) {
      assert.ok(!where.has(id), `${id} is in shards ${where.get(id)} and ${s.shard}`);
      where.set(id, s.shard);
    }
  }
  for (const id of live) {
    assert.ok(where.has(id), `acknowledged ${id} is lost`);
    const bucket = bucketOf(users.get(id) ?? id);
    assert.equal(where.get(id), ownerIn(status.map, bucket), `${id} is not in its bucket's owner`);
  }
  for (const id of deleted) assert.ok(!where.has(id), `deleted ${id} came back`);
  return where;
}


/**
 * A POST straight to shard `shard` of `tenant` (home-routed, dev mode), as
 * the Worker's own calls to its objects are: for reading what one object
 * holds, whether or not a map names it.
 */
export async function shardPost(mf, tenant, shard, path, body) {
  const ns = await mf.getDurableObjectNamespace("MEMORY");
  const stub = ns.get(ns.idFromName(shard === 0 ? tenant : `__s/${tenant}/${shard}`));
  const r = await stub.fetch(`http://127.0.0.1${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-edgemem-shard": JSON.stringify({ tenant, shard, epoch: 1, home: true, write: false }), "x-edgemem-namespace": tenant, "x-edgemem-dev": "1" },
    body: JSON.stringify(body),
  });
  assert.equal(r.status, 200, await r.clone().text());
  return r.json();
}

/** The ids (at most 100) of the records one shard object holds. */
export async function held(w, tenant, shard) {
  return (await shardPost(w.mf, tenant, shard, "/v1/long-term-memory/search", { text: "", limit: 100, recency_boost: false })).memories.map((m) => m.id);
}
