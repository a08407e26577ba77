//! Equality with fancy-regex (tiktoken's engine) compiled from tiktoken
//! 0.14's pattern strings, and the Unicode table regenerated from
//! regex-syntax (the tables fancy-regex uses).

use super::*;
use fancy_regex::Regex;
use regex_syntax::hir::{Class, HirKind};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// tiktoken_ext/openai_public.py, cl100k_base `pat_str`.
const CL100K: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
/// tiktoken_ext/openai_public.py, o200k_base `pat_str` parts.
const O200K: [&str; 7] = [
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"\s*[\r\n]+",
    r"\s+(?!\S)",
    r"\s+",
];

fn regex(pattern: Pattern) -> &'static Regex {
    static CL: OnceLock<Regex> = OnceLock::new();
    static O2: OnceLock<Regex> = OnceLock::new();
    match pattern {
        Pattern::Cl100k => CL.get_or_init(|| Regex::new(CL100K).unwrap()),
        Pattern::O200k => O2.get_or_init(|| Regex::new(&O200K.join("|")).unwrap()),
    }
}

const BOTH: [Pattern; 2] = [Pattern::Cl100k, Pattern::O200k];

fn oracle(pattern: Pattern, text: &str) -> Vec<&str> {
    regex(pattern).find_iter(text).map(|m| m.unwrap().as_str()).collect()
}

/// Asserts equality for both patterns; returns the number of pieces.
fn check(text: &str) -> usize {
    let mut count = 0;
    for pattern in BOTH {
        let want = oracle(pattern, text);
        let got: Vec<&str> = pieces(pattern, text).collect();
        if got != want {
            panic!("{pattern:?} {text:?}\n got: {got:?}\nwant: {want:?}");
        }
        count += got.len();
    }
    count
}

// ---- The Unicode table ----

fn class(pattern: &str) -> Vec<(u32, u32)> {
    let hir = regex_syntax::Parser::new().parse(pattern).unwrap();
    match hir.kind() {
        HirKind::Class(Class::Unicode(c)) => c.ranges().iter().map(|r| (r.start() as u32, r.end() as u32)).collect(),
        other => panic!("{pattern}: not a class: {other:?}"),
    }
}

/// Flags of every code point, from regex-syntax's classes.
fn all_flags() -> Vec<u8> {
    let mut flags = vec![0u8; 0x11_0000];
    let mut mark = |pattern: &str, bits: u8| {
        for (lo, hi) in class(pattern) {
            for cp in lo..=hi {
                flags[cp as usize] |= bits;
            }
        }
    };
    mark(r"\p{L}", LETTER);
    mark(r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", UPPER);
    mark(r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", LOWER);
    mark(r"\p{N}", NUMBER);
    mark(r"\s", SPACE);
    mark(r"[\r\n]", NEWLINE);
    flags
}

/// `start << 8 | flags` for each run of equal flags above ASCII.
fn runs(flags: &[u8]) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for cp in 0x80..flags.len() {
        if cp == 0x80 || flags[cp] != flags[cp - 1] {
            out.push((cp as u32) << 8 | flags[cp] as u32);
        }
    }
    out
}

fn render(runs: &[u32]) -> String {
    let mut s = String::new();
    s.push_str("//! Classes of the non-ASCII code points for the pre-tokenizer.\n");
    s.push_str("//!\n");
    s.push_str("//! GENERATED from regex-syntax 0.8.11 (Unicode 16.0), the tables tiktoken's\n");
    s.push_str("//! fancy-regex uses. Do not edit: `cargo test --lib tokenizer::pretok`\n");
    s.push_str("//! fails and prints the new source when this is stale; with\n");
    s.push_str("//! `EDGEMEM_WRITE_UNICODE_TABLE=1` it rewrites this file.\n\n");
    s.push_str("// `start_flags`: the code point, then the flags byte.\n");
    s.push_str("#![allow(clippy::unusual_byte_groupings)]\n\n");
    s.push_str("/// Runs of code points with equal class flags (see `pretok`'s `LETTER`..\n");
    s.push_str("/// `NEWLINE`), as `start << 8 | flags`, sorted; a run lasts until the next\n");
    s.push_str(&format!("/// starts, the last one up to U+10FFFF. {} bytes.\n", runs.len() * 4));
    s.push_str("#[rustfmt::skip]\n");
    s.push_str(&format!("pub(super) static RUNS: [u32; {}] = [\n", runs.len()));
    for line in runs.chunks(8) {
        s.push_str("   ");
        for r in line {
            s.push_str(&format!(" 0x{:06x}_{:02x},", r >> 8, r & 0xff));
        }
        s.push('\n');
    }
    s.push_str("];\n");
    s
}

#[test]
fn unicode_table_is_current() {
    let flags = all_flags();
    let want = runs(&flags);
    let source = render(&want);
    if std::env::var_os("EDGEMEM_WRITE_UNICODE_TABLE").is_some() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core/tokenizer/unicode_table.rs");
        std::fs::write(&path, &source).unwrap();
        eprintln!("wrote {}", path.display());
    }
    if RUNS[..] != want[..] {
        panic!("src/core/tokenizer/unicode_table.rs is stale; regenerated source:\n{source}");
    }
    for c in 0..128 {
        assert_eq!(ASCII[c], flags[c], "ASCII table, char {c:#x}");
    }
    for cp in (0x80..0x11_0000u32).filter(|&cp| char::from_u32(cp).is_some()) {
        assert_eq!(unicode_flags(cp), flags[cp as usize], "lookup of U+{cp:04X}");
    }
}

/// The flags encode seven disjoint classes only if the categories and
/// White_Space do not overlap.
#[test]
fn classes_are_disjoint() {
    let flags = all_flags();
    let allowed = [0, LETTER | UPPER, LETTER | LOWER, LETTER | UPPER | LOWER, UPPER | LOWER, NUMBER, SPACE, SPACE | NEWLINE];
    for (cp, &f) in flags.iter().enumerate() {
        assert!(allowed.contains(&f), "U+{cp:04X} has flags {f:#b}");
    }
    assert!(flags[0x85] == SPACE && flags[0xfeff] == 0 && flags[0x1c] == 0);
}

/// `fold_letter` knows every case variant regex-syntax's `(?i)` accepts.
#[test]
fn contraction_letters_fold_as_regex_syntax_does() {
    for letter in "sdmtlvre".bytes() {
        let variants: Vec<u32> = class(&format!("(?i){}", letter as char)).iter().flat_map(|&(lo, hi)| lo..=hi).collect();
        let mut expected = vec![letter.to_ascii_uppercase() as u32, letter as u32];
        if letter == b's' {
            expected.push(0x17f);
        }
        assert_eq!(variants, expected, "{}", letter as char);
        for v in variants {
            let s = char::from_u32(v).unwrap().to_string();
            assert_eq!(fold_letter(s.as_bytes(), 0, letter), s.len());
        }
    }
}

// ---- Equality with fancy-regex ----

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn identical_to_fancy_regex_on_the_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/tokens");
    assert!(dir.is_dir(), "the shared token corpus {} is missing (it sits beside the project)", dir.display());
    let mut paths = Vec::new();
    files(&dir, &mut paths);
    paths.sort();
    let (mut checked, mut bytes) = (0, 0);
    for path in &paths {
        let Ok(text) = std::fs::read_to_string(path) else {
            eprintln!("skipped (not UTF-8): {}", path.display());
            continue;
        };
        check(&text);
        checked += 1;
        bytes += text.len();
    }
    eprintln!("corpus: {checked} files, {bytes} bytes");
    assert!(checked > 0, "no files in {}", dir.display());
}

#[test]
fn identical_to_fancy_regex_on_edge_cases() {
    let cases = [
        "",
        " ",
        "\n",
        "a",
        "hello world",
        "Hello, World! How's it going?",
        // Emoji, ZWJ sequences, skin tones, flags.
        "👍 👨‍👩‍👧‍👦 family 👋🏽 wave 🇺🇸🇫🇷",
        "a👍b",
        " 👍",
        "\u{200d}",
        "x\u{200d}y",
        // Combining marks.
        "\u{0301}A",
        "\u{0301}a",
        " \u{0301}A",
        "Cafe\u{0301} cafe\u{0301}s E\u{0301}COLE",
        "e\u{0301}\u{0301}\u{0301}",
        "\u{0301}\u{0301}",
        "A\u{0301}B\u{0301}C",
        "ABC\u{0301}DEF",
        "a\u{20dd}1",
        // Scripts.
        "中文字符测试，标点。",
        "日本語のテキスト、カタカナ・ひらがな。ー",
        "ภาษาไทยมีสระ เช่น กิน",
        "مرحبا بالعالم ١٢٣٤",
        "नमस्ते दुनिया १२३",
        "Привет, мир! ПРИВЕТ",
        "ǅemal ǅ ǈ ǋ",
        "ʰʰ ʰa aʰ Aʰ ʰA",
        "ªA Aª ª",
        // Digits.
        "1234567",
        "abc123def",
        "a1b22c333d4444",
        "٣٣٣٣ ²³¹ ½ Ⅻ",
        " 123",
        "$1,234.56",
        // Contractions.
        "I'M",
        "I'm",
        "they'll",
        "THEY'LL",
        "we've WE'VE we'Ve you're YOU'RE it's IT'S don't DON'T I'd I'D",
        "'s",
        "'s at start",
        "'S",
        "'sa",
        "'ll",
        "'llama",
        "'re'",
        "''s",
        "'",
        "x's",
        "x'",
        "1's",
        " 's",
        "\u{017F}",
        "'\u{017F}",
        "a'\u{017F}",
        "A'\u{017F}",
        "\u{017F}'\u{017F}",
        "a\u{2019}s",
        "\u{212A}elvin '\u{212A}",
        "\u{0301}'s",
        // Whitespace.
        "a  \n  ",
        "a  \n  b",
        "a \n\n \n b",
        "   \t\t  \n",
        "     \t",
        "  x",
        "\t x",
        "\tx",
        "x \t ",
        "x   ",
        "\r\n",
        "a\r\nb\r\n\r\n",
        "\n\r\n\r",
        "\u{0085}",
        "a\u{0085}b",
        "a \u{0085} b",
        "\u{FEFF}",
        "a\u{FEFF} b",
        "x\u{FEFF}\u{FEFF}y",
        "\u{FEFF}word",
        "\u{00A0}",
        "a\u{00A0}b",
        "a\u{00A0}\u{00A0}b",
        "\u{00A0}\n",
        "\u{2028}",
        "a\u{2028}b\u{2029}c",
        "\u{3000}日本",
        "\u{000B}\u{000C}x",
        "\u{001C}\u{001D}\u{001E}\u{001F}x",
        // Slashes and punctuation.
        "a/b\n/",
        "a/b/\n/\nc",
        "path/to/file.rs\n\n",
        "!!!\n\n",
        " !!!\r\n",
        "...---...",
        "<|endoftext|>",
        " <a href=\"x\">",
        "fn main() { println!(\"hi\"); }\n",
        "  // comment\n",
        "\u{0301}!!",
        "!\u{0301}x",
        "\u{E000}\u{10FFFF}\u{FFFD}",
    ];
    for case in cases {
        check(case);
    }
}

/// Long runs: equal results and no quadratic blow-up.
#[test]
fn identical_to_fancy_regex_on_long_runs() {
    let cases = [
        " ".repeat(5000) + "x",
        " ".repeat(5000),
        "\n".repeat(3000) + "  x",
        "a".repeat(5000),
        "A".repeat(5000) + "a",
        "ª".repeat(1000) + &"A".repeat(1000) + "!",
        "A\u{0301}".repeat(1000) + "A",
        "!".repeat(5000) + "\n\n/",
        "1".repeat(5000),
        "'s".repeat(1000),
        "\u{0301}".repeat(3000),
    ];
    for case in &cases {
        check(case);
    }
}

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn identical_to_fancy_regex_on_random_strings() {
    const ASCII_CHARS: &str = "aeslmtdvrxSLMTDVREX01923 \r\n\t/'.,!-_(\"\u{b}";
    const TRICKY: &[char] = &[
        '\'', '\'', 's', 'S', ' ', ' ', '\n', '/', // more weight
        '\u{0301}', '\u{0903}', '\u{20DD}', '\u{0E31}', // Mn, Mc, Me, Thai Mn
        'ǅ', 'ʰ', 'ー', 'ª', 'あ', '中', 'ก', // Lt, Lm, Lm, Lo, Lo, Lo, Lo
        'É', 'é', 'ß', 'ſ', 'İ', 'ı', 'Σ', 'ς', 'Д', 'д', '\u{212A}', '\u{212B}', // Lu, Ll, folds
        '٣', '²', 'Ⅻ', '½', '１', // Nd, No, Nl, No, fullwidth Nd
        '\u{85}', '\u{A0}', '\u{1680}', '\u{2028}', '\u{2029}', '\u{3000}', '\u{FEFF}', '\u{200D}', '\u{1C}',
        '😀', '👍', '\u{1F3FB}', '🇺', '\u{E000}', '\u{FFFD}', '’', '،', '。',
    ];
    let ascii: Vec<char> = ASCII_CHARS.chars().collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut text = String::new();
    let mut pieces_seen = 0;
    for _ in 0..200_000 {
        text.clear();
        // Mostly short strings; one in ten long enough for long runs.
        let len = if rng.below(10) == 0 { rng.below(64) } else { rng.below(12) };
        for _ in 0..len {
            let c = if rng.below(2) == 0 { ascii[rng.below(ascii.len())] } else { TRICKY[rng.below(TRICKY.len())] };
            text.push(c);
        }
        pieces_seen += check(&text);
    }
    eprintln!("fuzz: 200000 strings, {pieces_seen} pieces");
}

/// Every string of up to 4 chars over a small alphabet with one char of
/// each class that matters.
#[test]
fn identical_to_fancy_regex_on_all_short_strings() {
    let alphabet = ['a', 'A', 'ʰ', '\u{0301}', '1', '\'', 's', ' ', '\t', '\n', '\r', '!', '/', '\u{85}'];
    let mut text = String::new();
    let n = alphabet.len();
    for len in 0..=4u32 {
        for mut k in 0..n.pow(len) {
            text.clear();
            for _ in 0..len {
                text.push(alphabet[k % n]);
                k /= n;
            }
            check(&text);
        }
    }
}
