//! Secret detection: API keys and tokens of the common providers, JWTs, PEM
//! private keys and `password=`-style assignments.
//!
//! A token is only looked for where a run of `[A-Za-z0-9_-]` begins, and
//! each attempt reads at most that run (a JWT: three of them), so the scan
//! is linear. Prefixes alone are not enough: the random part must have the
//! provider's length and mix character classes, which keeps names such as
//! `sk-learn` or `ghp_config` out.

use super::scan::{is_word, starts_with_ci};
use super::{
    Report, ANTHROPIC_KEY_BODY_CHARS_MIN, JWT_SEGMENT_CHARS_MIN, JWT_SIGNATURE_CHARS_MIN, OPENAI_KEY_BODY_CHARS_MIN,
    PEM_BLOCK_BYTES_MAX, SECRET_ASSIGNMENT_VALUE_BYTES_MAX, SECRET_ASSIGNMENT_VALUE_CHARS_MIN, SECRET_FIELD_VALUE_CHARS_MIN,
    SECRET_TOKEN_BODY_CHARS_MIN,
};

/// Characters after `AKIA`/`ASIA` in an AWS access key id.
const AWS_KEY_ID_BODY_LEN: usize = 16;
/// Characters after `AIza` in a Google API key.
const GOOGLE_KEY_BODY_LEN: usize = 35;
/// Characters after `ghp_` (and its siblings) in a GitHub token.
const GITHUB_TOKEN_BODY_LEN: usize = 36;
/// Shortest part after `github_pat_` (real ones have 82).
const GITHUB_PAT_BODY_CHARS_MIN: usize = 40;
/// Slack's token bodies are digit groups and a random tail; this is the
/// shortest plausible one.
const SLACK_BODY_CHARS_MIN: usize = 10;

/// What kind of secret a [`Span`] covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SecretKind {
    /// `pf_live_…`.
    PfLiveKey,
    /// Stripe `sk_live_`, `rk_live_`, `sk_test_`, `rk_test_`.
    StripeKey,
    /// OpenAI `sk-…`, `sk-proj-…`.
    OpenaiKey,
    /// Anthropic `sk-ant-…`.
    AnthropicKey,
    /// AWS access key id `AKIA…`/`ASIA…`.
    AwsAccessKey,
    /// GitHub `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` and `github_pat_`.
    GithubToken,
    /// Slack `xoxb-`, `xoxp-` and siblings.
    SlackToken,
    /// Google `AIza…`.
    GoogleApiKey,
    /// A JSON Web Token.
    Jwt,
    /// A PEM private key block, BEGIN through END.
    PrivateKey,
    /// The value of a `password=`, `token:`, `api_key=`… assignment.
    Password,
}

impl SecretKind {
    /// Every kind, in declaration order.
    pub const ALL: [SecretKind; 11] = [
        SecretKind::PfLiveKey,
        SecretKind::StripeKey,
        SecretKind::OpenaiKey,
        SecretKind::AnthropicKey,
        SecretKind::AwsAccessKey,
        SecretKind::GithubToken,
        SecretKind::SlackToken,
        SecretKind::GoogleApiKey,
        SecretKind::Jwt,
        SecretKind::PrivateKey,
        SecretKind::Password,
    ];

    /// The stable snake_case name, used in `[REDACTED:name]` and reports.
    pub fn name(&self) -> &'static str {
        match self {
            SecretKind::PfLiveKey => "pf_live_key",
            SecretKind::StripeKey => "stripe_key",
            SecretKind::OpenaiKey => "openai_key",
            SecretKind::AnthropicKey => "anthropic_key",
            SecretKind::AwsAccessKey => "aws_access_key",
            SecretKind::GithubToken => "github_token",
            SecretKind::SlackToken => "slack_token",
            SecretKind::GoogleApiKey => "google_api_key",
            SecretKind::Jwt => "jwt",
            SecretKind::PrivateKey => "private_key",
            SecretKind::Password => "password",
        }
    }
}

/// One secret found in a text: byte offsets, always on char boundaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First byte of the secret.
    pub start: usize,
    /// One past its last byte.
    pub end: usize,
    /// What it is.
    pub kind: SecretKind,
}

/// Every secret in `text`, in order, never overlapping.
pub fn find_secrets(text: &str) -> Vec<Span> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut pem = PemEnds::default();
    let mut i = 0;
    while i < b.len() {
        match secret_at(b, i, &mut pem) {
            Some(span) => {
                i = span.end;
                out.push(span);
            }
            None => i += 1,
        }
    }
    out
}

/// Whether a JSON field named `key` holding `value` is a secret by its
/// name: `{"password": "…"}`, `{"apiKey": "…"}`. The `password=` detector
/// needs the name and the value in one string; structured data splits them,
/// so the scrub asks this of every string field. Names are compared without
/// case, `_` or `-`; bare `token` is left out (a crypto asset's `token` is
/// its symbol), and the value must look like one (not empty, masked, a
/// template or an environment variable's name).
pub fn is_secret_field(key: &str, value: &str) -> bool {
    const NAMES: &[&str] = &[
        "password", "passwd", "pwd", "passphrase", "secret", "clientsecret", "apisecret", "apikey", "apitoken",
        "accesstoken", "authtoken", "refreshtoken", "bearertoken", "secretkey", "secretaccesskey", "privatekey",
        "accesskeysecret", "sessiontoken",
    ];
    let name = || key.bytes().filter(|c| !matches!(c, b'_' | b'-')).map(|c| c.to_ascii_lowercase());
    if !NAMES.iter().any(|k| k.bytes().eq(name())) {
        return false;
    }
    // The name says it is a secret, so a short value counts too (unlike
    // the free-text detector, which needs a long one to be sure).
    let v = value.trim().as_bytes();
    let env_name = v.iter().all(|&c| c.is_ascii_uppercase() || c == b'_' || c.is_ascii_digit());
    let masked = v.iter().all(|&c| c == v[0]);
    v.len() >= SECRET_FIELD_VALUE_CHARS_MIN && !masked && !env_name && !matches!(v[0], b'<' | b'$' | b'%' | b'{') && !value.starts_with("[REDACTED:")
}

/// `text` with each secret replaced by `[REDACTED:kind]`, counted in
/// `report`; `None` when there is none.
pub fn redact_secrets(text: &str, report: &mut Report) -> Option<String> {
    let spans = find_secrets(text);
    if spans.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for s in &spans {
        out.push_str(&text[at..s.start]);
        out.push_str("[REDACTED:");
        out.push_str(s.kind.name());
        out.push(']');
        report.add(s.kind.name(), 1);
        at = s.end;
    }
    out.push_str(&text[at..]);
    Some(out)
}

fn secret_at(b: &[u8], i: usize, pem: &mut PemEnds) -> Option<Span> {
    let c = b[i];
    if c == b'-' {
        return private_key(b, i, pem);
    }
    if !c.is_ascii_alphabetic() {
        return None;
    }
    let prev = if i == 0 { b' ' } else { b[i - 1] };
    if !is_token_char(prev) {
        if let Some(span) = token(b, i) {
            return Some(span);
        }
    }
    // `DB_PASSWORD=` names its secret after an underscore, so only letters
    // and digits bind an assignment's keyword to what precedes it.
    if !prev.is_ascii_alphanumeric() {
        return assignment(b, i);
    }
    None
}

/// Characters of a token body (base64url's alphabet).
fn is_token_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

fn run_end(b: &[u8], from: usize, ok: impl Fn(u8) -> bool) -> usize {
    from + b[from..].iter().take_while(|&&c| ok(c)).count()
}

/// Whether a random-looking body: at least two of digits, lower and upper
/// case, and enough distinct characters that it is not a word repeated.
fn looks_random(body: &[u8]) -> bool {
    let (mut digit, mut lower, mut upper) = (false, false, false);
    let mut seen = [false; 128];
    let mut distinct = 0;
    for &c in body {
        digit |= c.is_ascii_digit();
        lower |= c.is_ascii_lowercase();
        upper |= c.is_ascii_uppercase();
        if c < 128 && !seen[c as usize] {
            seen[c as usize] = true;
            distinct += 1;
        }
    }
    u8::from(digit) + u8::from(lower) + u8::from(upper) >= 2 && distinct >= (body.len() / 2).min(12)
}

/// A provider token starting at `i`, where a token run begins.
fn token(b: &[u8], i: usize) -> Option<Span> {
    // Every prefix below starts with one of these: most words stop here.
    if !matches!(b[i], b'p' | b's' | b'r' | b'A' | b'g' | b'x' | b'e') {
        return None;
    }
    let span = |end, kind| Some(Span { start: i, end, kind });
    let rest = &b[i..];
    // A body of `len` characters from `from` that ends the token run.
    let body = |from: usize, min: usize, ok: fn(u8) -> bool| -> Option<usize> {
        let end = run_end(b, from, ok);
        (end - from >= min && b.get(end).is_none_or(|&c| !is_token_char(c)) && looks_random(&b[from..end])).then_some(end)
    };
    let alnum = |c: u8| c.is_ascii_alphanumeric();

    if rest.starts_with(b"pf_live_") {
        return span(body(i + 8, SECRET_TOKEN_BODY_CHARS_MIN, is_word)?, SecretKind::PfLiveKey);
    }
    if [&b"sk_live_"[..], b"rk_live_", b"sk_test_", b"rk_test_"].iter().any(|p| rest.starts_with(p)) {
        return span(body(i + 8, SECRET_TOKEN_BODY_CHARS_MIN, alnum)?, SecretKind::StripeKey);
    }
    if rest.starts_with(b"sk-ant-") {
        return span(body(i + 7, ANTHROPIC_KEY_BODY_CHARS_MIN, is_token_char)?, SecretKind::AnthropicKey);
    }
    if rest.starts_with(b"sk-") {
        return span(body(i + 3, OPENAI_KEY_BODY_CHARS_MIN, is_token_char)?, SecretKind::OpenaiKey);
    }
    if rest.starts_with(b"AKIA") || rest.starts_with(b"ASIA") {
        let end = run_end(b, i + 4, |c| c.is_ascii_uppercase() || c.is_ascii_digit());
        let whole = end - i - 4 == AWS_KEY_ID_BODY_LEN && b.get(end).is_none_or(|&c| !is_token_char(c));
        return if whole { span(end, SecretKind::AwsAccessKey) } else { None };
    }
    if rest.len() > 4 && rest.starts_with(b"gh") && matches!(rest[2], b'p' | b'o' | b'u' | b's' | b'r') && rest[3] == b'_' {
        return span(body(i + 4, GITHUB_TOKEN_BODY_LEN, alnum)?, SecretKind::GithubToken);
    }
    if rest.starts_with(b"github_pat_") {
        return span(body(i + 11, GITHUB_PAT_BODY_CHARS_MIN, is_word)?, SecretKind::GithubToken);
    }
    if rest.len() > 5 && rest.starts_with(b"xox") && matches!(rest[3], b'b' | b'p' | b'a' | b'o' | b'r' | b's') && rest[4] == b'-' {
        let end = body(i + 5, SLACK_BODY_CHARS_MIN, |c| c.is_ascii_alphanumeric() || c == b'-')?;
        return if b[i + 5..end].iter().any(u8::is_ascii_digit) { span(end, SecretKind::SlackToken) } else { None };
    }
    if rest.starts_with(b"AIza") {
        let end = run_end(b, i + 4, is_token_char);
        return if end - i - 4 == GOOGLE_KEY_BODY_LEN { span(end, SecretKind::GoogleApiKey) } else { None };
    }
    if rest.starts_with(b"eyJ") {
        return span(jwt(b, i)?, SecretKind::Jwt);
    }
    None
}

/// The end of a JWT whose header starts at `i`: three base64url segments.
fn jwt(b: &[u8], i: usize) -> Option<usize> {
    let b64 = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
    let header_end = run_end(b, i, b64);
    if header_end - i < JWT_SEGMENT_CHARS_MIN || b.get(header_end) != Some(&b'.') {
        return None;
    }
    let payload = header_end + 1;
    let payload_end = run_end(b, payload, b64);
    if payload_end - payload < JWT_SEGMENT_CHARS_MIN || b.get(payload_end) != Some(&b'.') {
        return None;
    }
    let sig = payload_end + 1;
    let sig_end = run_end(b, sig, b64);
    (sig_end - sig >= JWT_SIGNATURE_CHARS_MIN).then_some(sig_end)
}

/// Where the next `-----END ` is, remembered across calls so that many
/// BEGIN lines without an END are still one linear search in all.
#[derive(Default)]
struct PemEnds {
    /// `None`: not searched yet; `Some(None)`: none after the last search start.
    next: Option<Option<usize>>,
}

impl PemEnds {
    fn after(&mut self, b: &[u8], from: usize) -> Option<usize> {
        match self.next {
            Some(None) => return None,
            Some(Some(p)) if p >= from => return Some(p),
            _ => {}
        }
        let found = find(&b[from..], b"-----END ").map(|p| p + from);
        self.next = Some(found);
        found
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A PEM private key line `-----BEGIN … PRIVATE KEY-----` or its END,
/// starting at `i`; returns the end of the line's closing dashes.
fn pem_line(b: &[u8], i: usize, opener: &[u8]) -> Option<usize> {
    if !b[i..].starts_with(opener) {
        return None;
    }
    let label_end = run_end(b, i + opener.len(), |c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b' ');
    let label = &b[i + opener.len()..label_end];
    (label.ends_with(b"PRIVATE KEY") && b[label_end..].starts_with(b"-----")).then_some(label_end + 5)
}

/// A whole PEM private key block starting at `i`. Without its END line
/// within [`PEM_BLOCK_BYTES_MAX`] (a truncated paste), the block runs to the
/// end of the base64 body that follows the BEGIN line.
fn private_key(b: &[u8], i: usize, pem: &mut PemEnds) -> Option<Span> {
    let header_end = pem_line(b, i, b"-----BEGIN ")?;
    let end = match pem.after(b, header_end) {
        Some(p) if p - header_end <= PEM_BLOCK_BYTES_MAX => pem_line(b, p, b"-----END "),
        _ => None,
    };
    let end = end.unwrap_or_else(|| {
        let limit = b.len().min(header_end + PEM_BLOCK_BYTES_MAX);
        let mut body = header_end;
        while body < limit && (b[body].is_ascii_alphanumeric() || b"+/=\r\n\t \\".contains(&b[body])) {
            // A blank line ends the body.
            if b[body] == b'\n' && blank_follows(&b[body + 1..limit]) {
                break;
            }
            body += 1;
        }
        // Leave the whitespace after the body where it was.
        header_end + b[header_end..body].trim_ascii_end().len()
    });
    Some(Span { start: i, end, kind: SecretKind::PrivateKey })
}

/// Whether the line that starts `rest` is blank.
fn blank_follows(rest: &[u8]) -> bool {
    let line = rest.iter().position(|&c| c == b'\n').map_or(rest, |p| &rest[..p]);
    line.iter().all(u8::is_ascii_whitespace)
}

/// Names whose assigned value is a secret, longest first where one is a
/// suffix of another's prefix (`access_token` before `token`).
const KEYWORDS: &[&[u8]] = &[
    b"secret_access_key",
    b"client_secret",
    b"access_token",
    b"secret_key",
    b"password",
    b"api_key",
    b"apikey",
    b"passwd",
    b"secret",
    b"token",
    b"pwd",
];

/// The value of a `keyword = value` (or `:`) assignment whose keyword
/// starts at `i`. The value must be a literal: not a call, an index, an
/// identifier or dotted path, a template or an empty or masked string.
fn assignment(b: &[u8], i: usize) -> Option<Span> {
    // Every keyword starts with one of these: most words stop here.
    if !matches!(b[i].to_ascii_lowercase(), b's' | b'c' | b'a' | b'p' | b't') {
        return None;
    }
    // `account:password:UID` lists fields; it assigns nothing.
    if i > 0 && b[i - 1] == b':' {
        return None;
    }
    let kw = KEYWORDS.iter().find(|k| starts_with_ci(b, i, k))?;
    let mut p = i + kw.len();
    if b.get(p).is_some_and(|&c| is_token_char(c)) {
        return None;
    }
    // A closing quote of a JSON or dict key, possibly escaped inside a string.
    for _ in 0..2 {
        if matches!(b.get(p), Some(b'"' | b'\'' | b'\\')) {
            p += 1;
        }
    }
    p = skip_blanks(b, p);
    match b.get(p) {
        Some(b'=') if !matches!(b.get(p + 1), Some(b'=' | b'>' | b'~')) => p += 1,
        Some(b':') if b.get(p + 1) == Some(&b'=') => p += 2,
        Some(b':') if b.get(p + 1) != Some(&b':') => p += 1,
        _ => return None,
    }
    p = skip_blanks(b, p);
    if b.get(p) == Some(&b'\\') {
        p += 1;
    }
    let span = match b.get(p) {
        Some(&q @ (b'"' | b'\'' | b'`')) => quoted_value(b, p + 1, q)?,
        Some(_) => unquoted_value(b, p)?,
        None => return None,
    };
    // A provider token as the value is reported as what it is.
    Some(token(b, span.0).filter(|t| t.end == span.1).unwrap_or(Span { start: span.0, end: span.1, kind: SecretKind::Password }))
}

fn skip_blanks(b: &[u8], mut p: usize) -> usize {
    while matches!(b.get(p), Some(b' ' | b'\t')) {
        p += 1;
    }
    p
}

fn char_count(v: &[u8]) -> usize {
    v.iter().filter(|&&c| c & 0xC0 != 0x80).count()
}

/// Rejections common to quoted and unquoted values: too short, masked
/// (`********`), or a template or format placeholder.
fn plausible_value(v: &[u8]) -> bool {
    if char_count(v) < SECRET_ASSIGNMENT_VALUE_CHARS_MIN || v.iter().all(|&c| c == v[0]) {
        return false;
    }
    let templated = [&b"${"[..], b"{{", b"%(", b"%s", b"<%", b"#{"].iter().any(|t| v.windows(2).any(|w| w == *t));
    !templated && !matches!(v[0], b'<' | b'$' | b'%' | b'{')
}

/// A quoted value whose first byte is at `from`, closed by `q` on the same
/// line with no blank inside.
fn quoted_value(b: &[u8], from: usize, q: u8) -> Option<(usize, usize)> {
    let limit = b.len().min(from + SECRET_ASSIGNMENT_VALUE_BYTES_MAX);
    let len = b[from..limit].iter().position(|&c| c == q || c == b'\\' || c.is_ascii_whitespace())?;
    let end = from + len;
    let closes = b[end] == q || (b[end] == b'\\' && b.get(end + 1) == Some(&q));
    let v = &b[from..end];
    // An all-caps name is an environment variable's, not its value.
    let env_name = v.iter().all(|&c| c.is_ascii_uppercase() || c == b'_' || c.is_ascii_digit());
    (closes && plausible_value(v) && !env_name).then_some((from, end))
}

/// An unquoted value starting at `from`: up to a blank or a delimiter, with
/// trailing sentence punctuation left out. It must mix a letter with a digit
/// or a symbol, so identifiers, dotted paths, keywords and numbers stay.
fn unquoted_value(b: &[u8], from: usize) -> Option<(usize, usize)> {
    let limit = b.len().min(from + SECRET_ASSIGNMENT_VALUE_BYTES_MAX + 1);
    let stop = |c: u8| c.is_ascii_whitespace() || b"\"'`<>,;&()[]{}".contains(&c);
    let mut end = from + b[from..limit].iter().take_while(|&&c| !stop(c)).count();
    if end - from > SECRET_ASSIGNMENT_VALUE_BYTES_MAX || matches!(b.get(end), Some(b'(' | b'[' | b'<' | b'{')) {
        return None;
    }
    while end > from && matches!(b[end - 1], b'.' | b'!' | b'?' | b':') {
        end -= 1;
    }
    let v = &b[from..end];
    if v.is_empty() || v.windows(3).any(|w| w == b"://") || matches!(v[0], b'&' | b'*' | b'@' | b'!' | b'#' | b'\\' | b'/' | b'.') {
        return None;
    }
    // An all-caps name is a variable or a manual's placeholder (`=TOKEN_VALUE`).
    if !v.iter().any(u8::is_ascii_lowercase) {
        return None;
    }
    let letter = v.iter().any(u8::is_ascii_alphabetic);
    let other = v.iter().any(|&c| c.is_ascii_digit() || !(c.is_ascii_alphabetic() || c == b'_' || c == b'.' || c >= 0x80));
    (letter && other && plausible_value(v)).then_some((from, end))
}
