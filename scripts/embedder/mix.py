#!/usr/bin/env python3
"""mix.py A B alpha OUT [--keep K] [--name N]: table = (1-alpha)*A + alpha*B (A,B: EMB1 files or .float.npy in A's basis), re-export like train.py."""
import sys, pathlib, argparse, numpy as np
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import reference as R, train as T
ap = argparse.ArgumentParser(); ap.add_argument("a"); ap.add_argument("b"); ap.add_argument("alpha", type=float); ap.add_argument("out")
ap.add_argument("--keep", type=int, default=28633); ap.add_argument("--qmax", type=int, default=31); ap.add_argument("--name", default="edgemem-minilm-static-v3-192d")
a = ap.parse_args()
asset = R.load(str(pathlib.Path(__file__).resolve().parents[2] / "assets/embedder/minilm-static.bin"))
def tab(p):
    if p.endswith(".npy"): return np.load(p).astype(np.float64)
    x = R.load(p); V = len(x["vocab"]); return np.frombuffer(x["rows"], np.int8).reshape(V, -1).astype(np.float64) * np.asarray(x["scales"], np.float64)[:, None]
A, B = tab(a.a), tab(a.b)
# rows are per-token; normalise scale so neither table dominates (sentence vectors are L2-normalised anyway)
B = B * (np.linalg.norm(A) / np.linalg.norm(B))
print(T.export((1 - a.alpha) * A + a.alpha * B, asset, a.out, a.qmax, a.keep, a.name))
