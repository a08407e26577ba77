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

