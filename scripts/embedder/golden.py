#!/usr/bin/env python3
"""Golden vectors for the Rust parity test: reference.py over the final asset.

Usage: golden.py [ASSET] [OUT]  (defaults: assets/embedder/minilm-static.bin, tests/data/embedder/golden.jsonl)
"""
import json, pathlib, sys
sys.path.insert(0, str(pathlib.Path(__file__).parent))
import reference as R

ROOT = pathlib.Path(__file__).resolve().parents[2]
asset = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "assets/embedder/minilm-static.bin")
out = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else ROOT / "tests/data/embedder/golden.jsonl")
TEXTS = [
    "I prefer my coffee black, no sugar.", "What did I say about the deployment last week?",
    "Héllo Wörld! Ça va? Naïve café, Ångström, Dvořák, Łódź, Żółć", "ÀÉÎÕÜ àéîõü ÇçÑñ ß Æ Ø Þ",
    "İstanbul'da ılık bir gün.", "ΣΟΦΙΑ ΟΔΟΣ and Привет, мир", "Tiếng Việt có dấu rất khó.",
    "我喜欢喝茶，不喜欢咖啡。", "東京タワーは333メートルです。", "서울에서 부산까지 기차로 갔어요.",
    "中文、日本語、한국어 mixed with English words.", "fn main() { println!(\"Hello, world!\"); }",
    "let v: Vec<u32> = (0..10).map(|x| x * 2).collect();", "Error E0382: borrow of moved value: `s`",
    "https://example.com/path?query=1&sort=desc#anchor", "user@example.org wrote: >> see attached",
    "The price went from $1,299.99 to €1.099,00 — a 15% drop.", "Version 2.0.0-rc.1+build.5 released 2024-05-17",
    "“Smart quotes” ‘single’ «guillemets» ¿Dónde? ¡Qué!", "ok?!?!... wait—what…",
    "Pneumonoultramicroscopicsilicovolcanoconiosis", "a" * 100 + " exactly one hundred", "b" * 101 + " too long",
    "antidisestablishmentarianism floccinaucinihilipilification",
    "I love pizza 🍕 and tacos 🌮!!!", "Ｆｕｌｌｗｉｄｔｈ ｔｅｘｔ", "The ﬁle ﬂoat_ﬁx.rs",
    "Tab\tnew\nline\rreturn  double  space", "zero\u200bwidth\u200d joiner, soft\u00adhyphen, nbsp\u00a0here",
    "nul\x00bell\x07esc\x1b vt\x0bff\x0c", "repl\ufffdchar private\ue000use", "the [UNK] and [PAD] tokens",
    "x² y³ ½ ① Ⅻ H₂O", "MixedCASE camelCase snake_case kebab-case", "12345678901234567890 3.14159 0x7fff",
    "", "   ", "...!!!???", "😀😃😄", "สวัสดีครับ",
]
a = R.load(asset)
assert len(TEXTS) == 40
out.parent.mkdir(parents=True, exist_ok=True)
with open(out, "w", encoding="utf-8") as f:
    for t in TEXTS:
        v = R.embed(t, a)
        toks = [a["vocab"][i] for i in R.tokenize(t, a)]
        f.write(json.dumps({"text": t, "tokens": toks, "vector": None if v is None else [round(x, 6) for x in v]},
                           ensure_ascii=False) + "\n")
print(f"wrote {out}: {sum(1 for t in TEXTS if R.embed(t, a) is None)} null vectors of {len(TEXTS)}")
