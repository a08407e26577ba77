#!/usr/bin/env python3
"""Check reference.py against model2vec: token ids vs the HF tokenizer, vectors vs StaticModel.encode.

Usage: verify.py ASSET   (the un-quantised model2vec model of the same dims is read from target/embedder/m2v-<dim>/)
"""
import json, pathlib, sys
import numpy as np
sys.path.insert(0, str(pathlib.Path(__file__).parent))
import reference as R
from model2vec import StaticModel

ROOT = pathlib.Path(__file__).resolve().parents[2]
a = R.load(sys.argv[1])
m = StaticModel.from_pretrained(str(ROOT / f"target/embedder/m2v-{a['dim']}"))
texts = [l.rstrip("\n") for l in open(pathlib.Path(__file__).parent / "verify_sentences.txt", encoding="utf-8")]
# Cases a text file can't hold well: control / format / private-use / replacement chars, literal special tokens.
texts += ["nul\x00byte", "bell\x07esc\x1b[0m", "zero\u200bwidth", "repl\ufffdchar", "private\ue000use",
          "vt\x0bff\x0cform", "nel\x85next", "the [UNK] token", "the [PAD] token", "", "   ", "\u200b"]
texts += [json.loads(l)["text"] for l in list(open("/work/shared/data/rustdocs/queries.jsonl"))[:3000:150]]

hf = [e.ids for e in m.tokenizer.encode_batch_fast(texts, add_special_tokens=False)]
ours = [R.tokenize(t, a) for t in texts]
bad = [(t, [a["vocab"][i] for i in o], [a["vocab"][i] for i in h]) for t, o, h in zip(texts, ours, hf) if o != h]
print(f"{len(texts)} texts, token-id mismatches vs HF tokenizer: {len(bad)}")
for b in bad: print("  ", b)

ref = m.encode(texts)  # model2vec on the un-quantised float32 model (drops [UNK] ids, mean, normalise)
E = np.asarray(m.embedding, dtype=np.float64)
def exact(ids):  # the reference algorithm over the float rows, special rows zeroed like the asset
    ids = [i for i in ids[: a["tokens_max"]] if a["vocab"][i] not in ("[PAD]", "[UNK]")]
    v = E[ids].sum(0) if ids else np.zeros(E.shape[1]); n = np.linalg.norm(v)
    return v / n if n else None
def report(label, vecs):
    cos = [float(np.dot(v, r)) for v, r in zip(vecs, ref) if v is not None and np.linalg.norm(r) > 0]
    print(f"{label}: min cos {min(cos):.6f}  mean {np.mean(cos):.6f}  over {len(cos)} texts")
report("algorithm over float rows vs StaticModel.encode", [exact(i) for i in ours])
qv = [R.embed(t, a) for t in texts]
report(f"reference.py over {sys.argv[1]} vs StaticModel.encode", qv)
print("zero-sum (fallback) texts:", [t for t, v in zip(texts, qv) if v is None])
low = sorted((float(np.dot(v, r)), t) for v, r, t in zip([exact(i) for i in ours], ref, texts) if v is not None)[:4]
print("lowest (float rows):", low)
