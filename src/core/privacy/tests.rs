//! Unit tests of the privacy filters: every kind found and replaced, the
//! checksums' negatives, look-alikes kept, pseudonyms and sealed ids, and
//! a property test over arbitrary text.

use proptest::prelude::*;

use super::*;

fn secret_kinds(text: &str) -> Vec<(&'static str, &str)> {
    find_secrets(text).into_iter().map(|s| (s.kind.name(), &text[s.start..s.end])).collect()
}

fn pii_kinds(text: &str) -> Vec<(&'static str, &str)> {
    find_pii(text).into_iter().map(|s| (s.kind.name(), &text[s.start..s.end])).collect()
}

const PEM: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx4Yz3kJf0a9Qw8zLmN2pR7tUv5yXbC1dE6fGhIjKlMnOpQrS\nT3uVwXyZ0a1b2c3d4e5f6g7h8i9j0k==\n-----END RSA PRIVATE KEY-----";

#[test]
fn every_secret_kind_is_found_and_redacted() {
    let cases = [
        ("pf_live_key", "pf_live_9aK2mQ7xT4vB8nR1cZ5wL3pD"),
        ("stripe_key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
        ("stripe_key", "rk_test_51HxYzABcdEFgh1234ijKL"),
        ("openai_key", "sk-Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5hJ7kL9mN1pQ"),
        ("openai_key", "sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9b_C1dE3fG5hJ7kL9m-N1pQ"),
        ("anthropic_key", "sk-ant-api03-Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5hJ7kL9mN1pQ-xYzAA"),
        ("aws_access_key", "AKIAIOSFODNN7EXAMPLE"),
        ("aws_access_key", "ASIAY34FZKBOKMUTVV7A"),
        ("github_token", "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"),
        ("github_token", "github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV"),
        ("slack_token", "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy"),
        ("google_api_key", "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI"),
        ("jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
        ("private_key", PEM),
    ];
    for (kind, secret) in cases {
        let text = format!("here: {secret} ok");
        assert_eq!(secret_kinds(&text), vec![(kind, secret)], "{text}");
        let mut report = Report::default();
        let out = redact_secrets(&text, &mut report).unwrap();
        assert_eq!(out, format!("here: [REDACTED:{kind}] ok"));
        assert_eq!(report.counts[kind], 1);
    }
}

#[test]
fn assignments_redact_the_value_only() {
    let cases = [
        ("password=hunter2hunter2", "hunter2hunter2"),
        ("DB_PASSWORD=s3cr3t-Pa55", "s3cr3t-Pa55"),
        (r#"{"api_key": "a8f5f167f44f4964"}"#, "a8f5f167f44f4964"),
        ("client_secret = 'Zx9-Yw8_Vu7'", "Zx9-Yw8_Vu7"),
        ("token: abc123def456.", "abc123def456"),
        ("passwd := \"correct-horse-9\"", "correct-horse-9"),
        (r#"{\"password\": \"hunter2hunter2\"}"#, "hunter2hunter2"),
        ("secret: \"my_secret_key\"", "my_secret_key"),
    ];
    for (text, value) in cases {
        assert_eq!(secret_kinds(text), vec![("password", value)], "{text}");
    }
    let mut r = Report::default();
    assert_eq!(redact_secrets("pwd=Tr0ub4dor&3", &mut r).unwrap(), "pwd=[REDACTED:password]&3");
    // A provider token as the value keeps its own kind.
    assert_eq!(secret_kinds("token=ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5")[0].0, "github_token");
}

#[test]
fn code_and_prose_are_not_secrets() {
    for text in [
        "password = input()",
        "token: Token",
        "password=None",
        "password=\"\"",
        "password = ${DB_PASSWORD}",
        "password = os.environ[\"DB_PASSWORD\"]",
        "password = os.environ.get('DB_PASSWORD')",
        "api_key = get_api_key()",
        "token = next_token",
        "token = self.tokenizer",
        "password: Optional[str] = None",
        "secret: SecretStr",
        "token: Option<String>,",
        "password == \"hunter2hunter2\"",
        "password: &str",
        "max_tokens=4096",
        "tokens: 12345678",
        "token::Kind",
        "password = \"********\"",
        "password: \"{{ vault_db_password }}\"",
        "token = 'GITHUB_TOKEN'",
        "the token: expired",
        "sk-learn and scikit-learn-contrib-extension",
        "sk_test_your_key_here",
        "ghp_config",
        "AKIA-style ids and AKIAIOSFODNN7EXAMPLEX",
        "eyJhbGciOi is how a JWT header starts",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqh\n-----END PUBLIC KEY-----",
        "secret_url: https://vault.example.com/v1",
        "",
    ] {
        assert_eq!(secret_kinds(text), vec![], "{text}");
    }
}

#[test]
fn truncated_pem_is_redacted_to_its_body() {
    let text = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nAbCdEf0123==\n\nThanks!";
    let s = find_secrets(text);
    assert_eq!(s.len(), 1);
    assert_eq!(&text[s[0].start..s[0].end], "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nAbCdEf0123==");
}

#[test]
fn every_pii_kind_is_found() {
    let cases = [
        ("email", "alice.smith+news@mail.example.co.uk"),
        ("phone", "+1 (415) 555-2671"),
        ("phone", "(415) 555-2671"),
        ("phone", "415-555-2671"),
        ("phone", "415.555.2671"),
        ("phone", "1-800-555-0199"),
        ("phone", "+14155552671"),
        ("phone", "020 7946 0958"),
        ("phone", "+44 (0)20 7946 0958"),
        ("phone", "030 1234567"),
        ("phone", "+49 30 1234567"),
        ("phone", "01 23 45 67 89"),
        ("card", "4111 1111 1111 1111"),
        ("card", "4111-1111-1111-1111"),
        ("card", "5555555555554444"),
        ("card", "3782 822463 10005"),
        ("iban", "GB82 WEST 1234 5698 7654 32"),
        ("iban", "DE89370400440532013000"),
        ("ip", "192.168.1.20"),
        ("ip", "2001:db8::8a2e:370:7334"),
        ("ip", "2001:0db8:85a3:0000:0000:8a2e:0370:7334"),
        ("ip", "fe80::1"),
        ("ip", "::ffff:192.0.2.1"),
        ("ssn", "123-45-6789"),
    ];
    for (kind, value) in cases {
        let text = format!("see {value}, thanks");
        assert_eq!(pii_kinds(&text), vec![(kind, value)], "{text}");
    }
    // After CJK text, inside brackets, at the ends.
    assert_eq!(pii_kinds("電話03-1234-5678です")[0].1, "03-1234-5678");
    assert_eq!(pii_kinds("[2001:db8::1]:8080")[0].1, "2001:db8::1");
    assert_eq!(pii_kinds("10.0.0.1:8080")[0].1, "10.0.0.1");
    assert_eq!(pii_kinds("bob@example.com.")[0].1, "bob@example.com");
}

#[test]
fn checksums_and_ranges_reject() {
    for text in [
        "4111 1111 1111 1112",          // Luhn
        "9400111202000000000000",       // too long for a card
        "7489123456784",                // Luhn passes, no issuer starts with 7
        "GB82 WEST 1234 5698 7654 33",  // mod-97
        "DE89370400440532013001",       // mod-97
        "DE8937040044053201300",        // length for DE
        "000-12-3456",
        "666-12-3456",
        "912-34-5678",
        "123-00-4567",
        "123-45-0000",
        "256.1.1.1",
        "01.2.3.4",
    ] {
        assert_eq!(pii_kinds(text), vec![], "{text}");
    }
}

#[test]
fn look_alikes_survive() {
    for text in [
        "order ORD-2024-118734 shipped",
        "session 01ARZ3NDEKTSV4RRFFQ69G5FAV and 123e4567-e89b-12d3-a456-426614174000",
        "price $1,299.99 or 1 299,00 € today",
        "on 2024-03-15, 15/03/2024, 15.03.2024 at 2024-03-15T10:30:00Z",
        "at 12:30:45 and 09:15",
        "v1.2.3 and v1.2.3.4 and 1.2.3.4.5",
        "version 1.2.3.4 was released",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b md5 d41d8cd98f00b204e9800998ecf8427e short a1b2c3d",
        "SKU-448812-BLK and AB-1234-XY",
        "UPS 1Z999AA10123456784, FedEx 748912345678, USPS 9400 1112 0200 0000 0000 00",
        "user_4111111111111111 and build-20240315-4155552671",
        "Add::add and std::fmt and a::b and ::",
        "MAC 00:1A:2B:3C:4D:5E",
        "ISBN 978-0-13-468599-1",
        "call 555-0123",
        "icon@2x.png lodash@4.17.21 @types/node",
        "1.2.3 and 10.5%",
        "01.02.2024 12:30",
        "2024 03 15 10",
    ] {
        assert_eq!(pii_kinds(text), vec![], "{text}");
        assert_eq!(secret_kinds(text), vec![], "{text}");
    }
    // A bare dotted quad is an address.
    assert_eq!(pii_kinds("1.2.3.4")[0].0, "ip");
}

#[test]
fn placeholders_and_pseudonyms() {
    let text = "Mail Bob@Example.com or bob@example.com, card 4111 1111 1111 1111.";
    let mut r = Report::default();
    let plain = Anonymizer::new(None).anonymize(text, &mut r).unwrap();
    assert_eq!(plain, "Mail [EMAIL] or [EMAIL], card [CARD].");
    assert_eq!((r.counts["email"], r.counts["card"], r.total()), (2, 1, 3));
    assert!(Anonymizer::new(None).anonymize("nothing here", &mut r).is_none());

    let secret = [7u8; 32];
    let k1 = PseudonymKey::derive(&secret, "tenant-a").unwrap();
    let k2 = PseudonymKey::derive(&secret, "tenant-b").unwrap();
    let a = Anonymizer::new(Some(&k1)).anonymize(text, &mut r).unwrap();
    let b = Anonymizer::new(Some(&k2)).anonymize(text, &mut r).unwrap();
    let tokens = |s: &str| s.split('[').skip(1).map(|t| t.split(']').next().unwrap().to_string()).collect::<Vec<_>>();
    let (ta, tb) = (tokens(&a), tokens(&b));
    assert_eq!(ta[0], ta[1], "same value (after normalization), same pseudonym");
    assert!(ta[0].starts_with("EMAIL:") && ta[0].len() == "EMAIL:".len() + PSEUDONYM_TOKEN_HEX_LEN);
    assert_ne!(ta[0], tb[0], "another namespace, another pseudonym");
    assert_eq!(ta[0], format!("EMAIL:{}", k1.token("email", "bob@example.com")));
    // Card digits are normalized: dashes and spaces hash alike.
    let c1 = Anonymizer::new(Some(&k1)).anonymize("4111-1111-1111-1111", &mut r).unwrap();
    assert_eq!(c1, format!("[CARD:{}]", k1.token("card", "4111111111111111")));
    assert_ne!(k1.token("email", "x"), k1.token("phone", "x"));
}

#[test]
fn key_derivation_and_debug() {
    assert!(PseudonymKey::derive(&[1u8; 15], "ns").is_err());
    let k = PseudonymKey::derive(&[1u8; 16], "ns").unwrap();
    let dbg = format!("{k:?}");
    assert_eq!(dbg, "PseudonymKey(<redacted>)");
}

#[test]
fn sealed_user_ids_round_trip_and_refuse_tampering() {
    let k = PseudonymKey::derive(b"0123456789abcdef0123456789abcdef", "ns").unwrap();
    let other = PseudonymKey::derive(b"0123456789abcdef0123456789abcdef", "ns2").unwrap();
    for id in ["", "u", "user-42", "alice@example.com", "ユーザー🙂", &"x".repeat(crate::core::limits::ID_BYTES_MAX)] {
        let sealed = k.seal_user_id(id);
        assert!(sealed.starts_with("psu_") && !sealed.contains(id) || id.is_empty() || id == "u");
        assert_eq!(sealed, k.seal_user_id(id), "deterministic");
        assert_eq!(k.open_user_id(&sealed).as_deref(), Some(id));
        assert_eq!(other.open_user_id(&sealed), None);
        // Flip each character in turn: never opens.
        let body = &sealed[4..];
        for i in 0..body.len() {
            let mut t: Vec<u8> = body.bytes().collect();
            t[i] = if t[i] == b'A' { b'B' } else { b'A' };
            let t = format!("psu_{}", String::from_utf8(t).unwrap());
            if t != sealed {
                assert_eq!(k.open_user_id(&t), None, "{t}");
            }
        }
    }
    assert_ne!(k.seal_user_id("a"), k.seal_user_id("b"));
    for bad in ["", "psu_", "psx_AAAA", "psu_!!!!", "psu_A", &format!("psu_{}", "A".repeat(2000))] {
        assert_eq!(k.open_user_id(bad), None, "{bad}");
    }
}

#[test]
fn base64url_is_canonical() {
    for n in 0..40u8 {
        let data: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37)).collect();
        assert_eq!(pseudonym::base64url_round_trip(&data), Some(data));
    }
}

struct Names;
impl Detector for Names {
    fn detect(&self, text: &str, out: &mut Vec<(usize, usize, String)>) {
        for name in ["Alice Smith", "Bob"] {
            for (i, _) in text.match_indices(name) {
                out.push((i, i + name.len(), "person".to_string()));
            }
        }
        // Out of range and off a char boundary: ignored, never a panic.
        out.push((text.len(), text.len() + 5, "junk".into()));
        out.push((0, 0, "empty".into()));
    }
}

#[test]
fn extra_detectors_and_overlaps() {
    let text = "Alice Smith <alice@example.com> and Bob";
    let mut r = Report::default();
    let out = Anonymizer::new(None).anonymize_with(text, &[&Names], &mut r).unwrap();
    assert_eq!(out, "[PERSON] <[EMAIL]> and [PERSON]");
    assert_eq!(r.counts["person"], 2);
    let k = PseudonymKey::derive(&[9u8; 16], "ns").unwrap();
    let out = Anonymizer::new(Some(&k)).anonymize_with("Bob", &[&Names], &mut r).unwrap();
    assert_eq!(out, format!("[PERSON:{}]", k.token("person", "Bob")));
    // Overlaps: the earliest start wins, then the longest.
    struct Wide;
    impl Detector for Wide {
        fn detect(&self, _: &str, out: &mut Vec<(usize, usize, String)>) {
            out.push((0, 3, "a".into()));
            out.push((0, 8, "b".into()));
            out.push((5, 12, "c".into()));
        }
    }
    let out = Anonymizer::new(None).anonymize_with("0123456789abcdef", &[&Wide], &mut r).unwrap();
    assert_eq!(out, "[B]89abcdef");
    let mut a = Report::default();
    a.add("x", 2);
    let mut b = Report::default();
    b.add("x", 1);
    b.add("y", 1);
    a.merge(&b);
    assert_eq!((a.counts["x"], a.total(), a.is_empty(), Report::default().is_empty()), (3, 4, false, true));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        check_spans(&text);
    }

    #[test]
    fn near_miss_text_never_panics(parts in prop::collection::vec(prop::sample::select(vec![
        "4111", " ", "-", ".", ":", "::", "+", "(", ")", "@", "example.com", "GB82", "WEST", "1234", "0", "255",
        "sk-", "ghp_", "AKIA", "eyJ", "password", "=", "\"", "'", "-----BEGIN PRIVATE KEY-----", "-----END ",
        "é", "語", "🙂", "\n", "a", "Z", "9", "_", "pf_live_", "xoxb-", "AIza", "::ffff:", "fe80",
    ]), 0..40)) {
        check_spans(&parts.concat());
    }
}

fn check_spans(text: &str) {
    for s in find_secrets(text) {
        assert!(s.start < s.end && text.is_char_boundary(s.start) && text.is_char_boundary(s.end));
    }
    let pii = find_pii(text);
    for w in pii.windows(2) {
        assert!(w[0].end <= w[1].start);
    }
    for s in &pii {
        assert!(s.start < s.end && text.is_char_boundary(s.start) && text.is_char_boundary(s.end));
    }
    let mut r = Report::default();
    let k = PseudonymKey::derive(&[3u8; 16], "p").unwrap();
    let _ = redact_secrets(text, &mut r);
    let _ = Anonymizer::new(Some(&k)).anonymize(text, &mut r);
}

#[test]
fn pathological_inputs_stay_linear() {
    // Each of these would take minutes if a scanner re-read its run from
    // every position; linear scans finish in milliseconds.
    for unit in ["sk-", "a@", "-----BEGIN PRIVATE KEY-----", "1 ", "1.", "password=", "eyJaaaaaaaaaaa.", "ff:", "GB82 ", "token=a1b2c3d4e5f6"] {
        let text = unit.repeat(200_000 / unit.len());
        check_spans(&text);
    }
}
