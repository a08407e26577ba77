#!/usr/bin/env python3
"""Pure-Python reference of the Rust static embedder over an EMB1 asset (the spec the Rust side follows).

Usage: reference.py ASSET "text" ...   -> prints tokens and the first values of each vector.

Normalisation copies tokenizers' BertNormalizer + BertPreTokenizer + WordPiece exactly, in their order:
clean -> CJK spacing -> strip accents (NFD, drop Mn) -> per-char lowercase -> split -> WordPiece.
"""
import math, struct, sys, unicodedata, zlib


def load(path):
    b = open(path, "rb").read()
    assert b[:4] == b"EMB1", "bad magic"
    assert struct.unpack_from("<I", b, len(b) - 4)[0] == zlib.crc32(b[:-4]), "bad crc"
    dim, n, name_len = struct.unpack_from("<III", b, 4)
    o = 16
    name = b[o:o + name_len].decode(); o += name_len
    unk_id, tokens_max, word_chars_max = struct.unpack_from("<III", b, o); o += 12
    vocab = []
    for _ in range(n):
        l = b[o]; vocab.append(b[o + 1:o + 1 + l].decode()); o += 1 + l
    scales = struct.unpack_from(f"<{n}f", b, o); o += 4 * n
    rows = b[o:o + n * dim]; o += n * dim
    assert o == len(b) - 4
    return {"dim": dim, "name": name, "unk_id": unk_id, "tokens_max": tokens_max,
            "word_chars_max": word_chars_max, "vocab": vocab, "index": {t: i for i, t in enumerate(vocab)},
            "scales": scales, "rows": rows}


def is_cjk(o):  # tokenizers' is_chinese_char: CJK Unified Ideographs + extensions + compatibility blocks
    return (0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0x20000 <= o <= 0x2A6DF or 0x2A700 <= o <= 0x2B73F
            or 0x2B740 <= o <= 0x2B81F or 0x2B920 <= o <= 0x2CEAF or 0xF900 <= o <= 0xFAFF or 0x2F800 <= o <= 0x2FA1F)


def is_ws(c):
    return c in "\t\n\r " or unicodedata.category(c) == "Zs" or c in "\u2028\u2029"


def is_punct(c):
    o = ord(c)
    return 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126 or unicodedata.category(c).startswith("P")


def normalize(text):
    out = []
    for c in text:
        # clean_text: tokenizers drops NUL, U+FFFD and control/format/private-use chars (Cc, Cf, Co) but \t \n \r
        if c == "\0" or c == "\ufffd" or (c not in "\t\n\r" and unicodedata.category(c) in ("Cc", "Cf", "Co")):
            continue
        if is_ws(c):
            out.append(" ")
        elif is_cjk(ord(c)):
            out.append(f" {c} ")
        else:
            out.append(c)
    s = "".join(c for c in unicodedata.normalize("NFD", "".join(out)) if unicodedata.category(c) != "Mn")
    return "".join(c.lower() for c in s)  # per char, like Rust char::to_lowercase (no final-sigma rule)


def words(norm):
    for piece in norm.split(" "):
        cur = ""
        for c in piece:
            if is_punct(c):
                if cur: yield cur
                yield c; cur = ""
            else:
                cur += c
        if cur: yield cur


def wordpiece(word, a):
    if len(word) > a["word_chars_max"]:
        return [a["unk_id"]]
    ids, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start:
            sub = word[start:end] if start == 0 else "##" + word[start:end]
            if sub in a["index"]:
                ids.append(a["index"][sub]); break
            end -= 1
        else:
            return [a["unk_id"]]
        start = end
    return ids


def tokenize(text, a):
    return [i for w in words(normalize(text)) for i in wordpiece(w, a)]


def embed(text, a):
    """Sum of the dequantised rows of the first tokens_max ids, L2-normalised; None when the sum is zero."""
    dim, rows, sc = a["dim"], a["rows"], a["scales"]
    acc = [0.0] * dim
    for i in tokenize(text, a)[: a["tokens_max"]]:
        s = sc[i]
        if s == 0.0:
            continue
        r = rows[i * dim:(i + 1) * dim]
        for j in range(dim):
            q = r[j] - 256 if r[j] > 127 else r[j]
            acc[j] += s * q
    n = math.sqrt(sum(x * x for x in acc))
    return None if n == 0.0 else [x / n for x in acc]


if __name__ == "__main__":
    a = load(sys.argv[1])
    for t in sys.argv[2:]:
        v = embed(t, a)
        print([a["vocab"][i] for i in tokenize(t, a)], None if v is None else [round(x, 4) for x in v[:6]])
