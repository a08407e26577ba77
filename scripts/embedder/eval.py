#!/usr/bin/env python3
"""nDCG@10 of static-embedding assets vs exact MiniLM on rustdocs (and convmem when present).

Usage: eval.py ASSET.bin ... [--float DIMS ...]
  ASSET.bin   EMB1 files (all must share one vocab: the tokenisation is computed once)
  --float D   also score the un-quantised, untrimmed model2vec model target/embedder/m2v-D/
Embeddings follow reference.py exactly (same tokens, sum of rows, L2 norm); brute-force cosine.
"""
import json, pathlib, pickle, sys
import numpy as np
sys.path.insert(0, str(pathlib.Path(__file__).parent))
import reference as R

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUSTDOCS = pathlib.Path("/work/shared/data/rustdocs")
CONVMEM = ROOT / "tests/data/convmem"


def jl(p): return [json.loads(l) for l in open(p, encoding="utf-8")]


def datasets():
    P, Q = jl(RUSTDOCS / "passages.jsonl"), jl(RUSTDOCS / "queries.jsonl")
    ds = {"rustdocs": ([p["text"] for p in P], [q["text"] for q in Q], [set(q["relevant_rows"]) for q in Q],
                       RUSTDOCS / "passages.f32", RUSTDOCS / "queries.f32")}
    if (CONVMEM / "queries.jsonl").exists():
        M, Q = jl(CONVMEM / "memories.jsonl"), jl(CONVMEM / "queries.jsonl")
        row = {m["id"]: i for i, m in enumerate(M)}
        ds["convmem"] = ([m["text"] for m in M], [q["text"] for q in Q], [{row[r] for r in q["relevant"]} for q in Q],
                         CONVMEM / "memories.minilm.f32", CONVMEM / "queries.minilm.f32")
    return ds


def ndcg10(QX, X, rel):
    top = np.argsort(-(QX @ X.T), axis=1, kind="stable")[:, :10]
    disc = 1 / np.log2(np.arange(2, 12))
    s = [sum(disc[k] for k, r in enumerate(t) if r in g) / disc[: min(len(g), 10)].sum() for t, g in zip(top, rel)]
    return float(np.mean(s))


def embed_all(ids, M, tokens_max):
    """Sum rows of the first tokens_max ids per text, L2-normalise; zero sums stay zero (the Rust fallback)."""
    cut = [x[:tokens_max] for x in ids]
    flat = np.fromiter((i for x in cut for i in x), dtype=np.int64)
    owner = np.repeat(np.arange(len(cut)), [len(x) for x in cut])
    out = np.zeros((len(cut), M.shape[1]), np.float64)
    np.add.at(out, owner, M[flat].astype(np.float64))
    n = np.linalg.norm(out, axis=1, keepdims=True)
    return (out / np.where(n > 0, n, 1)).astype(np.float32), int((n[:, 0] == 0).sum())


def matrix(a):
    q = np.frombuffer(a["rows"], dtype=np.int8).reshape(-1, a["dim"]).astype(np.float32)
    return q * np.asarray(a["scales"], np.float32)[:, None]


if __name__ == "__main__":
    args = sys.argv[1:]
    floats = [int(x) for x in args[args.index("--float") + 1:]] if "--float" in args else []
    assets = args[: args.index("--float")] if "--float" in args else args
    first = R.load(assets[0])
    variants = [(pathlib.Path(p).name, matrix(R.load(p))) for p in assets]
    for d in floats:
        from model2vec import StaticModel
        m = StaticModel.from_pretrained(str(ROOT / f"target/embedder/m2v-{d}"))
        E = np.asarray(m.embedding, np.float32).copy(); E[[0, first["unk_id"]]] = 0  # [PAD], [UNK]
        variants.append((f"model2vec float32 {d}d (unquantised)", E))
    for name, (docs, qs, rel, dx, qx) in datasets().items():
        cache = ROOT / f"target/embedder/tok-{name}.pkl"  # tokenising 12k passages in pure Python takes a while
        if cache.exists() and pickle.load(open(cache, "rb"))[0] == (docs, qs):
            di, qi = pickle.load(open(cache, "rb"))[1]
        else:
            di, qi = [R.tokenize(t, first) for t in docs], [R.tokenize(t, first) for t in qs]
            pickle.dump(((docs, qs), (di, qi)), open(cache, "wb"))
        print(f"\n{name}: {len(docs)} docs, {len(qs)} queries")
        print("| variant | nDCG@10 | zero-vector docs/queries |\n|---|---|---|")
        if dx.exists():
            X = np.fromfile(dx, "<f4").reshape(len(docs), -1); QX = np.fromfile(qx, "<f4").reshape(len(qs), -1)
            print(f"| all-MiniLM-L6-v2 (exact) | {ndcg10(QX, X, rel):.4f} | |")
        for vname, M in variants:
            X, zd = embed_all(di, M, first["tokens_max"]); QX, zq = embed_all(qi, M, first["tokens_max"])
            print(f"| {vname} | {ndcg10(QX, X, rel):.4f} | {zd}/{zq} |", flush=True)
