//! A content stream (or CMap) as a flat run of tokens, in constant memory.
//!
//! The pre-scan needs to know, before the parser builds anything, how many
//! operators and operands a page's drawing holds, how deep its `q` (save graphics
//! state) operators nest, which drawing objects it calls with `Do`, and what ranges a
//! ToUnicode CMap declares. Building lopdf's `Content` to find out would be the very
//! allocation the limits are there to prevent, so this lexer only walks the bytes:
//! no token is copied, nested arrays and dictionaries are a counter, not a recursion.
//!
//! In content mode it stops where lopdf's content parser stops (a stray `)` or `>`,
//! a bad hex string, a word that is neither a number nor an operator): what lopdf
//! never parses, the parser never runs, so counting on past it would only turn
//! image bytes into imaginary operators. In CMap mode it never stops, because the
//! CMap parser's lexer is more forgiving than lopdf's.

/// One token; byte slices point into the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token<'a> {
    /// An operator keyword (`q`, `Tj`, `Do`, `beginbfrange` ...).
    Operator(&'a [u8]),
    /// A name, without its `/`.
    Name(&'a [u8]),
    /// A hex string's digits (whitespace included), without `<` and `>`.
    Hex(&'a [u8]),
    /// `[`.
    ArrayStart,
    /// `]`.
    ArrayEnd,
    /// `<<`.
    DictStart,
    /// `>>`.
    DictEnd,
    /// Any other operand: a number, a literal string, true, false, null.
    Operand,
}

/// Which parser's rules to follow (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// lopdf's content-stream parser: stop where it stops.
    Content,
    /// A CMap: skip what is not understood and go on.
    Cmap,
}

/// The tokens of `data`, in order.
pub struct Lexer<'a> {
    data: &'a [u8],
    at: usize,
    mode: Mode,
    arrays: usize,
    dicts: usize,
    /// Set after the `ID` operator: the inline image's data comes next.
    image_data: bool,
}

impl<'a> Lexer<'a> {
    /// A lexer over `data` following `mode`.
    pub fn new(data: &'a [u8], mode: Mode) -> Self {
        Lexer {
            data,
            at: 0,
            mode,
            arrays: 0,
            dicts: 0,
            image_data: false,
        }
    }

    fn stop(&mut self) -> Option<Token<'a>> {
        self.at = self.data.len();
        None
    }

    /// Junk: the end in content mode, skipped (as an operand) in CMap mode.
    fn junk(&mut self) -> Option<Token<'a>> {
        match self.mode {
            Mode::Content => self.stop(),
            Mode::Cmap => Some(Token::Operand),
        }
    }

    fn skip_space_and_comments(&mut self) {
        while let Some(&b) = self.data.get(self.at) {
            if is_space(b) {
                self.at += 1;
            } else if b == b'%' {
                while let Some(&c) = self.data.get(self.at) {
                    if c == b'\n' || c == b'\r' {
                        break;
                    }
                    self.at += 1;
                }
            } else {
                break;
            }
        }
    }

    /// Skips an inline image's data: from after `ID` and one white-space byte to
    /// the `EI` that stands alone.
    fn skip_image_data(&mut self) {
        let start = (self.at + 1).min(self.data.len());
        let rest = &self.data[start..];
        let end = rest
            .windows(2)
            .enumerate()
            .find(|&(i, w)| {
                w == b"EI"
                    && (i == 0 || is_space(rest[i - 1]))
                    && rest
                        .get(i + 2)
                        .is_none_or(|&b| is_space(b) || is_delimiter(b))
            })
            .map_or(rest.len(), |(i, _)| i);
        self.at = start + end;
    }

    /// A literal string from its `(`: nested parentheses balance, `\` escapes.
    fn literal_string(&mut self) -> Option<Token<'a>> {
        let mut depth = 0usize;
        while let Some(&b) = self.data.get(self.at) {
            self.at += 1;
            match b {
                b'\\' => self.at += 1,
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(Token::Operand);
                    }
                }
                _ => {}
            }
        }
        // Unterminated: lopdf fails here.
        self.junk()
    }

    fn hex_string(&mut self) -> Option<Token<'a>> {
        let start = self.at + 1;
        let mut end = start;
        while let Some(&b) = self.data.get(end) {
            if b == b'>' {
                self.at = end + 1;
                return Some(Token::Hex(&self.data[start..end]));
            }
            if !(b.is_ascii_hexdigit() || is_space(b)) {
                break;
            }
            end += 1;
        }
        self.at = end.max(start);
        self.junk()
    }

    fn word(&mut self) -> Option<Token<'a>> {
        let start = self.at;
        while self
            .data
            .get(self.at)
            .is_some_and(|&b| !is_space(b) && !is_delimiter(b))
        {
            self.at += 1;
        }
        let word = &self.data[start..self.at];
        if is_number(word) || matches!(word, b"true" | b"false" | b"null") {
            return Some(Token::Operand);
        }
        if word
            .iter()
            .all(|&c| c.is_ascii_alphabetic() || b"*'\"".contains(&c))
        {
            if word == b"ID" {
                self.image_data = true;
            }
            return Some(Token::Operator(word));
        }
        self.junk()
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        if self.image_data {
            self.image_data = false;
            self.skip_image_data();
        }
        self.skip_space_and_comments();
        let &b = self.data.get(self.at)?;
        match b {
            b'(' => self.literal_string(),
            b'<' if self.data.get(self.at + 1) == Some(&b'<') => {
                self.at += 2;
                self.dicts += 1;
                Some(Token::DictStart)
            }
            b'<' => self.hex_string(),
            b'>' if self.data.get(self.at + 1) == Some(&b'>') && self.dicts > 0 => {
                self.at += 2;
                self.dicts -= 1;
                Some(Token::DictEnd)
            }
            b'[' => {
                self.at += 1;
                self.arrays += 1;
                Some(Token::ArrayStart)
            }
            b']' if self.arrays > 0 => {
                self.at += 1;
                self.arrays -= 1;
                Some(Token::ArrayEnd)
            }
            b'/' => {
                let start = self.at + 1;
                self.at = start;
                while self
                    .data
                    .get(self.at)
                    .is_some_and(|&b| !is_space(b) && !is_delimiter(b))
                {
                    self.at += 1;
                }
                Some(Token::Name(&self.data[start..self.at]))
            }
            b')' | b'>' | b']' | b'{' | b'}' => {
                self.at += 1;
                self.junk()
            }
            _ => self.word(),
        }
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'\0')
}

fn is_delimiter(b: u8) -> bool {
    matches!(
        b,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%'
    )
}

/// `[+-]digits`, `[+-]digits.digits`, `[+-].digits`, `[+-]digits.`
fn is_number(word: &[u8]) -> bool {
    let word = word
        .strip_prefix(b"+")
        .or_else(|| word.strip_prefix(b"-"))
        .unwrap_or(word);
    let mut digits = 0;
    let mut dots = 0;
    for &c in word {
        match c {
            b'0'..=b'9' => digits += 1,
            b'.' => dots += 1,
            _ => return false,
        }
    }
    digits > 0 && dots <= 1
}

/// A hex string as a CMap parser reads a code: its bytes (digit pairs, whitespace
/// skipped, an odd last digit taken as `d0`) folded into a `u32` the way
/// adobe-cmap-parser folds them (`code << 8 | byte`, so only the last four bytes
/// count), and how many bytes it has.
pub fn hex_code(digits: &[u8]) -> (u32, usize) {
    let mut code: u32 = 0;
    let mut bytes = 0usize;
    let mut high: Option<u32> = None;
    for &c in digits {
        let Some(d) = (c as char).to_digit(16) else {
            continue;
        };
        match high.take() {
            None => high = Some(d),
            Some(h) => {
                code = (code << 8) | (h << 4 | d);
                bytes += 1;
            }
        }
    }
    if let Some(h) = high {
        code = (code << 8) | (h << 4);
        bytes += 1;
    }
    (code, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(data: &[u8], mode: Mode) -> Vec<Token<'_>> {
        Lexer::new(data, mode).collect()
    }

    #[test]
    fn content_tokens() {
        let t = tokens(
            b"q 1 0 0 1 72 720 cm BT /F1 12 Tf [(Hi) -250 (there)] TJ ET % note\n/X1 Do Q",
            Mode::Content,
        );
        let ops: Vec<&[u8]> = t
            .iter()
            .filter_map(|t| match t {
                Token::Operator(o) => Some(*o),
                _ => None,
            })
            .collect();
        assert_eq!(
            ops,
            [&b"q"[..], b"cm", b"BT", b"Tf", b"TJ", b"ET", b"Do", b"Q"]
        );
        assert!(t.contains(&Token::Name(b"X1")));
        assert_eq!(t.len(), 22);
    }

    #[test]
    fn content_stops_where_lopdf_stops_and_skips_inline_images() {
        assert_eq!(tokens(b"q ) Q Q", Mode::Content).len(), 1);
        assert_eq!(tokens(b"q \xff\xfe Q", Mode::Content).len(), 1);
        assert_eq!(tokens(b"q <zz> Q", Mode::Content).len(), 1);
        let image = b"BI /W 1 /H 1 ID \x00)>]EI Q q EI q";
        let ops: Vec<_> = tokens(image, Mode::Content)
            .into_iter()
            .filter(|t| matches!(t, Token::Operator(_)))
            .collect();
        assert_eq!(
            ops,
            [
                Token::Operator(b"BI"),
                Token::Operator(b"ID"),
                Token::Operator(b"EI"),
                Token::Operator(b"q")
            ]
        );
    }

    #[test]
    fn cmap_mode_reads_ranges_and_goes_on_past_junk() {
        let t = tokens(
            b"{junk} ) 1 beginbfrange <0000> <FFFF> <0041> endbfrange",
            Mode::Cmap,
        );
        assert!(t.contains(&Token::Hex(b"FFFF")));
        assert!(t.contains(&Token::Operator(b"endbfrange")));
        assert_eq!(hex_code(b"FFFFFFFF"), (0xFFFF_FFFF, 4));
        assert_eq!(hex_code(b"0 0 4 1"), (0x41, 2));
        assert_eq!(hex_code(b"4"), (0x40, 1));
        assert_eq!(hex_code(b"0102030405"), (0x0203_0405, 5));
    }
}
