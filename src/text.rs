//! Text helpers every layer needs: making untrusted text safe for a terminal,
//! shortening messages, and the normal form quotes are compared in.
//!
//! These are pure functions of strings, at the bottom of the house, so that no stage
//! has to import the view layer (or another stage) to clean a line of text.

/// Removes control characters (keeping newline and tab) and bidirectional-override
/// characters from untrusted text.
pub fn sanitize_text(text: &str) -> String {
    text.chars()
        .filter(|&c| {
            (c == '\n' || c == '\t' || !c.is_control())
                && !matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
        })
        .collect()
}

/// Like [`sanitize_text`], and also folds all whitespace to single spaces: for text
/// that must stay on one line (titles, URLs, error messages).
pub fn sanitize_line(text: &str) -> String {
    sanitize_text(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` cut to at most `max` bytes, at a character boundary (for byte bounds:
/// protocol fields, conversation turns).
pub fn cut_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Shortens a one-line message to at most `max` characters (on a char boundary), for
/// error messages that quote untrusted or long text.
pub fn shorten(text: &str, max: usize) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// Lower-cases, folds curly quotes, dashes and ellipsis characters to ASCII, drops
/// invisible characters, and collapses whitespace to single spaces.
pub fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        let mapped: &str = match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '`' | '\u{00B4}' => {
                "'"
            }
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{00AB}'
            | '\u{00BB}' => "\"",
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
            | '\u{2212}' => "-",
            '\u{2026}' => "...",
            '\u{00AD}' | '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' => continue,
            c if c.is_whitespace() => {
                space = !out.is_empty();
                continue;
            }
            _ => {
                if space {
                    out.push(' ');
                    space = false;
                }
                for lower in c.to_lowercase() {
                    out.push(lower);
                }
                continue;
            }
        };
        if space {
            out.push(' ');
            space = false;
        }
        out.push_str(mapped);
    }
    out
}

/// Soft hyphens, zero-width and bidi-control characters: invisible on the page, but
/// they split words for any later matching.
pub fn is_invisible(c: char) -> bool {
    matches!(c, '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{FEFF}')
}

/// Collapses whitespace (and control-character) runs to one space and drops soft
/// hyphens, zero-width and bidi-control characters, which would otherwise break quote
/// matching.
pub fn clean_inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars() {
        if is_invisible(c) {
            continue;
        }
        // Control characters (escape sequences included) count as whitespace, so
        // extracted text can never drive a terminal.
        if c.is_whitespace() || c.is_control() {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        out.push(c);
    }
    out
}

/// Replaces every occurrence of each secret (an API key) in `text` with `<redacted>`.
///
/// The one redactor: errors, doctor lines and reply excerpts pass through it before
/// anyone prints them, because some servers quote the key they were sent back in their
/// error text ("Incorrect API key provided: sk-..."). Redact before shortening, so a
/// key cut in half cannot leak its first part. The longest secret is replaced first,
/// so a secret that holds another is replaced whole, never leaving its tail.
pub fn redact(text: &str, secrets: &[&str]) -> String {
    let mut out = text.to_string();
    for secret in longest_first(secrets)
        .into_iter()
        .filter(|s| !s.trim().is_empty())
    {
        if out.contains(secret) {
            out = out.replace(secret, "<redacted>");
        }
    }
    out
}

/// [`redact`] for text that arrives in pieces (a streamed model reply): a secret split
/// across pieces is still found, because the end of what has arrived is held back while
/// it could be the start of a secret. Everything a streamed reply shows as it arrives
/// passes through one of these, so a statement printed live is as redacted as the
/// final answer.
pub struct StreamRedactor<'a> {
    secrets: Vec<&'a str>,
    pending: String,
}

impl<'a> StreamRedactor<'a> {
    /// A redactor for `secrets` (empty or blank ones are ignored).
    pub fn new(secrets: &[&'a str]) -> Self {
        StreamRedactor {
            secrets: secrets
                .iter()
                .copied()
                .filter(|s| !s.trim().is_empty())
                .collect(),
            pending: String::new(),
        }
    }

    /// Takes the next piece and returns the text that is now safe to show (possibly
    /// empty): everything but a tail that could still grow into a secret.
    pub fn push(&mut self, piece: &str) -> String {
        if self.secrets.is_empty() {
            return piece.to_string();
        }
        self.pending.push_str(piece);
        let redacted = redact(&self.pending, &self.secrets);
        let hold = self
            .secrets
            .iter()
            .map(|secret| partial_secret_at_end(&redacted, secret))
            .max()
            .unwrap_or(0);
        let cut = redacted.len() - hold;
        self.pending = redacted[cut..].to_string();
        let mut safe = redacted;
        safe.truncate(cut);
        safe
    }

    /// The held-back tail once the text has ended: it is not a whole secret.
    pub fn finish(&mut self) -> String {
        std::mem::take(&mut self.pending)
    }
}

/// The length of the longest proper prefix of `secret` that `text` ends with.
fn partial_secret_at_end(text: &str, secret: &str) -> usize {
    let longest = text.len().min(secret.len().saturating_sub(1));
    (1..=longest)
        .rev()
        .find(|&k| {
            secret.is_char_boundary(k)
                && text.is_char_boundary(text.len() - k)
                && text.ends_with(&secret[..k])
        })
        .unwrap_or(0)
}

/// The secrets this process was configured with ([`remember_secret`]), for the
/// places that write text to a file the settings do not all reach (the search log).
static KNOWN_SECRETS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The most secrets remembered (a process has a handful: two keys, a password or two).
const MAX_KNOWN_SECRETS: usize = 64;

/// Remembers `secret` (an API key, a password in a configured URL) for
/// [`redact_known`]. Blank ones are ignored.
pub fn remember_secret(secret: &str) {
    if secret.trim().is_empty() {
        return;
    }
    if let Ok(mut known) = KNOWN_SECRETS.lock()
        && !known.iter().any(|k| k == secret)
        && known.len() < MAX_KNOWN_SECRETS
    {
        known.push(secret.to_string());
    }
}

/// [`redact`] with every remembered secret and `also`.
pub fn redact_known(text: &str, also: &[&str]) -> String {
    let known = KNOWN_SECRETS.lock().map(|k| k.clone()).unwrap_or_default();
    let secrets: Vec<&str> = known
        .iter()
        .map(String::as_str)
        .chain(also.iter().copied())
        .collect();
    redact(text, &secrets)
}

/// `secrets`, the longest first: the order every redactor replaces them in.
fn longest_first<'a>(secrets: &[&'a str]) -> Vec<&'a str> {
    let mut sorted = secrets.to_vec();
    sorted.sort_by_key(|s| std::cmp::Reverse(s.len()));
    sorted
}

/// [`redact`] for a raw reply body, before anything reads it: every message, error
/// and excerpt later cut from the body is then free of the secrets, wherever the cut
/// falls.
pub fn redact_bytes(bytes: Vec<u8>, secrets: &[&str]) -> Vec<u8> {
    let mut out = bytes;
    for secret in longest_first(secrets)
        .into_iter()
        .map(|s| s.as_bytes())
        .filter(|s| !s.is_empty())
    {
        if !out.windows(secret.len()).any(|w| w == secret) {
            continue;
        }
        let mut replaced = Vec::with_capacity(out.len());
        let mut i = 0;
        while i < out.len() {
            if out[i..].starts_with(secret) {
                replaced.extend_from_slice(b"<redacted>");
                i += secret.len();
            } else {
                replaced.push(out[i]);
                i += 1;
            }
        }
        out = replaced;
    }
    out
}

/// Characters that `--json` writes as `\uXXXX` escapes although JSON allows them raw:
/// DEL, the C1 controls (U+0080..U+009F: U+009B is a CSI that some terminals obey),
/// and the invisible and bidirectional formatting characters of [`is_invisible`]
/// (U+202E, U+2066, U+061C, ...). A script that prints a field of our JSON to a
/// terminal then cannot be steered by a page.
pub fn needs_json_escape(c: char) -> bool {
    c == '\u{7F}' || ('\u{80}'..='\u{9F}').contains(&c) || is_invisible(c)
}

/// A JSON formatter that escapes [`needs_json_escape`] characters inside strings.
struct EscapingFormatter;

impl serde_json::ser::Formatter for EscapingFormatter {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if needs_json_escape(c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                write!(writer, "\\u{:04x}", c as u32)?;
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

/// `value` as one line of JSON with [`needs_json_escape`] characters escaped: what
/// `--json` prints.
pub fn json_line(value: &serde_json::Value) -> String {
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, EscapingFormatter);
    // Serialising a Value into memory cannot fail (its keys are strings).
    let _ = serde::Serialize::serialize(value, &mut serializer);
    String::from_utf8(out).unwrap_or_default()
}

/// `n` with commas between thousands: 1000000 as "1,000,000" (progress lines, limits
/// in messages).
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(4096), "4,096");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(32), "32");
    }

    #[test]
    fn escapes_and_controls_are_removed() {
        let evil = "safe\x1b]0;pwned\x07 text\x1b[31m red\u{202E}drow\r\n next";
        let clean = sanitize_text(evil);
        assert!(!clean.contains('\x1b'));
        assert!(!clean.contains('\x07'));
        assert!(!clean.contains('\r'));
        assert!(!clean.contains('\u{202E}'));
        assert!(clean.contains('\n'));
        assert_eq!(sanitize_line("a\n\tb"), "a b");
    }

    #[test]
    fn a_secret_holding_another_is_redacted_whole_by_every_redactor() {
        // Given shortest first: "abc" replaced first would leave "def" of the key.
        let secrets = ["sk-abc", "sk-abcdef"];
        assert_eq!(redact("key sk-abcdef.", &secrets), "key <redacted>.");
        assert_eq!(
            redact_bytes(b"key sk-abcdef.".to_vec(), &secrets),
            b"key <redacted>.".to_vec()
        );
        let mut stream = StreamRedactor::new(&secrets);
        let mut shown = stream.push("key sk-ab");
        shown.push_str(&stream.push("cdef."));
        shown.push_str(&stream.finish());
        assert_eq!(shown, "key <redacted>.");
    }

    #[test]
    fn remembered_secrets_are_redacted_longest_first() {
        remember_secret("model-key-1234");
        remember_secret("  ");
        let line = redact_known(
            r#"{"query":"why does model-key-1234 fail, and search-key-9 too, model-key-1234-extra"}"#,
            &["search-key-9", "model-key-1234-extra"],
        );
        assert_eq!(
            line,
            r#"{"query":"why does <redacted> fail, and <redacted> too, <redacted>"}"#
        );
    }

    #[test]
    fn json_escapes_c1_controls_and_bidi_marks() {
        let value = serde_json::json!({"t": "a\u{9b}31m b\u{9c} c\u{7f} d\u{202e}e \u{2066}f\u{61c} \u{e9}\u{1f600}"});
        let line = json_line(&value);
        assert_eq!(
            line,
            r#"{"t":"a\u009b31m b\u009c c\u007f d\u202ee \u2066f\u061c é😀"}"#
        );
        let back: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back, value, "escaping never changes the value");
        assert!(!sanitize_text("x\u{61c}y").contains('\u{61c}'));
    }

    #[test]
    fn a_secret_split_across_pieces_never_comes_out_of_the_stream_redactor() {
        let key = "sk-live-0123456789";
        let text = format!("{{\"text\": \"the key is {key} and {key}.\", \"x\": \"é{key}\"}}");
        let expected = redact(&text, &[key]);
        // Every way to cut the text into two or three pieces (on char boundaries).
        let bounds: Vec<usize> = (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        for &a in &bounds {
            for &b in bounds.iter().filter(|&&b| b >= a).step_by(7) {
                let mut redactor = StreamRedactor::new(&[key]);
                let mut shown = String::new();
                for piece in [&text[..a], &text[a..b], &text[b..]] {
                    let safe = redactor.push(piece);
                    assert!(!safe.contains("sk-live"), "cut at {a}/{b}: {safe}");
                    shown.push_str(&safe);
                }
                shown.push_str(&redactor.finish());
                assert_eq!(shown, expected, "cut at {a}/{b}");
            }
        }
    }

    #[test]
    fn the_stream_redactor_holds_back_only_what_could_be_a_secret() {
        let mut redactor = StreamRedactor::new(&["secret-key"]);
        assert_eq!(redactor.push("plain text, then sec"), "plain text, then ");
        assert_eq!(redactor.push("ond"), "second");
        assert_eq!(redactor.finish(), "");
        let mut none = StreamRedactor::new(&[" "]);
        assert_eq!(none.push("as is"), "as is");
    }

    #[test]
    fn terminal_output_keeps_newline_and_tab_only() {
        let clean = sanitize_text("a\u{1b}[31mb\tc\n\u{9b}d");
        assert_eq!(clean, "a[31mb\tc\nd");
    }
}
