//! The pre-scan: a PDF's structure measured with lopdf before `pdf-extract` is let
//! loose on it, so that files built to exhaust a parser are refused with a reason
//! instead of crashing or flooding the process that reads them.
//!
//! `pdf-extract` follows a PDF wherever it leads: it draws a form XObject by
//! recursing into it (a drawing that draws itself overflows the stack), looks up a
//! page's resources through `/Parent` links (a page that is its own parent is an
//! endless loop), inflates every stream whole (a filter chain is a memory bomb),
//! copies the graphics state on every `q` and expands every ToUnicode range into a
//! map entry per code. None of that has a limit of its own. This module walks the
//! same paths first, with a visited set, a depth cap and counters, and says what it
//! found; it runs inside the sandboxed worker, whose operating-system limits stay the
//! backstop for whatever it does not foresee.
//!
//! Two levels:
//! - [`load`] and [`check_document`]: every stream's filter chain may inflate to
//!   [`MAX_INFLATED_BYTES`] in all (object streams are measured while lopdf loads
//!   them, the rest after), and ToUnicode maps may declare [`MAX_CMAP_CODES`] codes
//!   each, [`MAX_DOCUMENT_CMAP_CODES`] in all. A document over these is refused.
//! - [`check_page`]: one page's lookups up the page tree must end, and its drawing
//!   (page content plus every XObject it draws, each time it draws it) must stay
//!   within [`MAX_DRAWING_DEPTH`] nested XObjects without a cycle,
//!   [`MAX_PAGE_TOKENS`] operators and operands, [`MAX_STATE_NESTING`] nested `q`,
//!   and [`MAX_INFLATED_BYTES`] of decoded content. A page over these is not read.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};

use pdf_extract::{Dictionary, Document, LoadOptions, Object, ObjectId, Stream};

use super::inflate::{self, OverLimit};
use super::lex::{self, Lexer, Mode, Token};
use super::{MAX_INFLATED_BYTES, REFUSED};
use crate::text::thousands;

/// Form XObjects drawn inside each other, at most (a page's content is depth 0).
pub const MAX_DRAWING_DEPTH: usize = 32;

/// Operators and operands (array elements included) one page's drawing may hold,
/// counting an XObject's again each time it is drawn.
pub const MAX_PAGE_TOKENS: u64 = 1_000_000;

/// `q` operators open at once in one content stream (the parser copies the
/// graphics state for each).
pub const MAX_STATE_NESTING: usize = 4096;

/// Codes one ToUnicode CMap may map through `beginbfrange` (two full 16-bit ranges).
pub const MAX_CMAP_CODES: u64 = 131_072;

/// Codes all ToUnicode CMaps of a document may map together.
pub const MAX_DOCUMENT_CMAP_CODES: u64 = 524_288;

/// `/Parent` links followed from a page, at most.
const MAX_TREE_DEPTH: usize = 1024;

/// Nesting of arrays and dictionaries in a CMap (its parser recurses on them).
const MAX_CMAP_NESTING: usize = 32;

/// Nesting of dictionaries and arrays searched for `/ToUnicode`.
const MAX_OBJECT_DEPTH: usize = 32;

const MIB: usize = 1024 * 1024;

fn inflated_too_much() -> String {
    format!(
        "{REFUSED}its streams inflate past {} MiB (a filter chain or compression bomb)",
        MAX_INFLATED_BYTES / MIB
    )
}

thread_local! {
    /// Inflate budget left while lopdf loads a document, and whether an object
    /// stream went past it (lopdf's load filter is a plain `fn`, so it lives here).
    static LOADING: Cell<(usize, bool)> = const { Cell::new((0, false)) };
}

/// lopdf's load filter: measures every object stream (lopdf inflates them while
/// loading, before anything else can look) against the budget, and drops one that
/// would pass it, so lopdf never inflates it.
fn measure_object_streams(id: ObjectId, object: &mut Object) -> Option<(ObjectId, Object)> {
    if let Object::Stream(stream) = object
        && stream.dict.has_type(b"ObjStm")
    {
        let (left, _) = LOADING.get();
        match inflate::decode(stream, left, false) {
            Ok(decoded) => LOADING.set((left.saturating_sub(decoded.cost), false)),
            Err(OverLimit) => {
                LOADING.set((0, true));
                return None;
            }
        }
    }
    // lopdf only looks at whether this is `None`; the object it keeps is its own.
    Some((id, Object::Null))
}

/// Loads a document with lopdf, object streams measured on the way in. Returns it
/// with the inflate budget left for [`check_document`].
pub fn load(bytes: &[u8]) -> Result<(Document, usize), String> {
    LOADING.set((MAX_INFLATED_BYTES, false));
    let options = LoadOptions {
        filter: Some(measure_object_streams),
        ..LoadOptions::default()
    };
    let loaded = Document::load_mem_with_options(bytes, options);
    let (left, over) = LOADING.get();
    if over {
        return Err(inflated_too_much());
    }
    let doc = loaded.map_err(|e| {
        format!(
            "the PDF cannot be read ({}); it may be cut short or damaged",
            crate::text::shorten(&e.to_string(), 120)
        )
    })?;
    Ok((doc, left))
}

/// The document-wide limits: all streams' filter chains within the inflate budget
/// `left` (what [`load`] left), and the ToUnicode maps within their code limits.
pub fn check_document(doc: &Document, left: usize) -> Result<(), String> {
    let mut left = left;
    for object in doc.objects.values() {
        let Object::Stream(stream) = object else {
            continue;
        };
        // Object streams were measured while loading (and are inflated now);
        // cross-reference streams are read by lopdf before any of this.
        if stream.dict.has_type(b"ObjStm") || stream.dict.has_type(b"XRef") {
            continue;
        }
        let decoded = inflate::decode(stream, left, false).map_err(|_| inflated_too_much())?;
        left -= decoded.cost.min(left);
    }
    check_cmaps(doc)
}

/// Every stream some dictionary names as its `/ToUnicode`, measured once each.
fn check_cmaps(doc: &Document) -> Result<(), String> {
    let mut maps: Vec<ObjectId> = Vec::new();
    for object in doc.objects.values() {
        find_to_unicode(object, 0, &mut maps);
    }
    let mut measured: HashMap<ObjectId, u64> = HashMap::new();
    let mut total = 0u64;
    for id in maps {
        let codes = match measured.get(&id) {
            Some(&codes) => codes,
            None => {
                let Ok(Object::Stream(stream)) = doc.get_object(id) else {
                    continue;
                };
                let codes = cmap_codes(stream)?;
                measured.insert(id, codes);
                codes
            }
        };
        total = total.saturating_add(codes);
        if total > MAX_DOCUMENT_CMAP_CODES {
            return Err(format!(
                "{REFUSED}its fonts' ToUnicode maps cover more than {} codes together",
                thousands(MAX_DOCUMENT_CMAP_CODES)
            ));
        }
    }
    Ok(())
}

fn find_to_unicode(object: &Object, depth: usize, found: &mut Vec<ObjectId>) {
    if depth > MAX_OBJECT_DEPTH {
        return;
    }
    let dict = match object {
        Object::Dictionary(dict) => dict,
        Object::Stream(stream) => &stream.dict,
        Object::Array(items) => {
            for item in items {
                find_to_unicode(item, depth + 1, found);
            }
            return;
        }
        _ => return,
    };
    for (key, value) in dict.iter() {
        if key.as_slice() == b"ToUnicode"
            && let Object::Reference(id) = value
        {
            found.push(*id);
        }
        find_to_unicode(value, depth + 1, found);
    }
}

/// The codes a ToUnicode CMap maps through `beginbfrange` ranges with a string
/// destination (the parser inserts one entry per code of those; array
/// destinations and `beginbfchar` are one entry per item written, bounded by the
/// stream's size).
fn cmap_codes(stream: &Stream) -> Result<u64, String> {
    let data = inflate::decode(stream, MAX_INFLATED_BYTES, true)
        .map_err(|_| inflated_too_much())?
        .data;
    let too_many = || {
        format!(
            "{REFUSED}a font's ToUnicode map covers more than {} codes (a range like <00000000> <FFFFFFFF>)",
            thousands(MAX_CMAP_CODES)
        )
    };
    let mut codes = 0u64;
    let mut in_ranges = false;
    // Within `beginbfrange`: the last two codes read, then the destination.
    let mut pending: Vec<u32> = Vec::with_capacity(2);
    let mut nesting = 0usize;
    for token in Lexer::new(&data, Mode::Cmap) {
        match token {
            Token::ArrayStart | Token::DictStart => {
                nesting += 1;
                if nesting > MAX_CMAP_NESTING {
                    return Err(format!(
                        "{REFUSED}a font's ToUnicode map nests arrays more than {MAX_CMAP_NESTING} deep"
                    ));
                }
            }
            Token::ArrayEnd | Token::DictEnd => nesting = nesting.saturating_sub(1),
            _ => {}
        }
        match token {
            Token::Operator(b"beginbfrange") => {
                in_ranges = true;
                pending.clear();
            }
            Token::Operator(b"endbfrange") => in_ranges = false,
            Token::Hex(digits) if in_ranges && nesting == 0 => {
                let (code, _) = lex::hex_code(digits);
                if pending.len() < 2 {
                    pending.push(code);
                } else {
                    // A string destination: one entry per code from low to high.
                    let (low, high) = (pending[0], pending[1]);
                    if high >= low {
                        codes = codes.saturating_add(u64::from(high - low) + 1);
                    }
                    pending.clear();
                    if codes > MAX_CMAP_CODES {
                        return Err(too_many());
                    }
                }
            }
            Token::ArrayEnd if in_ranges && nesting == 0 && pending.len() == 2 => {
                // An array destination: as many entries as it has items.
                pending.clear();
            }
            _ => {}
        }
    }
    Ok(codes)
}

/// One page's limits (see the module doc): `Err` with the reason when the page must
/// not be read.
pub fn check_page(doc: &Document, page_id: ObjectId) -> Result<(), String> {
    let Ok(page) = doc.get_dictionary(page_id) else {
        return Ok(());
    };
    let resources = inherited(doc, page_id, page, b"Resources", |o| o.as_dict().is_ok())?
        .and_then(|o| o.as_dict().ok());
    inherited(doc, page_id, page, b"MediaBox", |o| o.as_array().is_ok())?;
    let mut walk = Walk {
        doc,
        tokens: 0,
        bytes: 0,
        path: Vec::new(),
        measured: HashMap::new(),
    };
    // The page's content streams, joined as lopdf joins them for the parser.
    let mut content = Vec::new();
    for id in doc.get_page_contents(page_id) {
        let Ok(Object::Stream(stream)) = doc.get_object(id) else {
            continue;
        };
        let left = MAX_INFLATED_BYTES.saturating_sub(content.len());
        let decoded = inflate::decode(stream, left, true).map_err(|_| walk.too_big())?;
        content.extend_from_slice(&decoded.data);
        content.push(b'\n');
    }
    walk.bytes = content.len() as u64;
    walk.draw(&content, resources, 0)
}

/// Follows `key` up the page tree as the parser does (the page, then its `/Parent`,
/// and so on, until a value that `wanted` accepts), refusing a chain that loops.
fn inherited<'a>(
    doc: &'a Document,
    page_id: ObjectId,
    page: &'a Dictionary,
    key: &[u8],
    wanted: fn(&Object) -> bool,
) -> Result<Option<&'a Object>, String> {
    let mut seen = HashSet::from([page_id]);
    let mut node = page;
    for _ in 0..MAX_TREE_DEPTH {
        if let Ok(value) = node.get(key) {
            let value = deref(doc, value);
            if wanted(value) {
                return Ok(Some(value));
            }
        }
        let Some(parent) = node.get(b"Parent").ok().and_then(|p| p.as_reference().ok()) else {
            return Ok(None);
        };
        if !seen.insert(parent) {
            return Err(format!(
                "{REFUSED}its page tree loops (a page's /Parent leads back to itself)"
            ));
        }
        let Ok(next) = doc.get_dictionary(parent) else {
            return Ok(None);
        };
        node = next;
    }
    Err(format!(
        "{REFUSED}its page tree is more than {MAX_TREE_DEPTH} levels deep"
    ))
}

fn deref<'a>(doc: &'a Document, object: &'a Object) -> &'a Object {
    match object {
        Object::Reference(id) => doc.get_object(*id).unwrap_or(object),
        _ => object,
    }
}

/// One page's drawing, walked as the parser will run it.
struct Walk<'a> {
    doc: &'a Document,
    /// Operators and operands so far, XObjects counted each time they are drawn.
    tokens: u64,
    /// Decoded content bytes so far, counted the same way.
    bytes: u64,
    /// The XObjects being drawn, outermost first: one drawn again inside itself is
    /// a cycle.
    path: Vec<ObjectId>,
    /// What drawing an XObject with given resources costs, once measured.
    measured: HashMap<(ObjectId, usize), (u64, u64)>,
}

impl<'a> Walk<'a> {
    fn too_big(&self) -> String {
        format!(
            "{REFUSED}a page's drawing inflates past {} MiB (content and the drawing objects it draws, each time drawn)",
            MAX_INFLATED_BYTES / MIB
        )
    }

    fn count(&mut self, tokens: u64, bytes: u64) -> Result<(), String> {
        self.tokens = self.tokens.saturating_add(tokens);
        self.bytes = self.bytes.saturating_add(bytes);
        if self.tokens > MAX_PAGE_TOKENS {
            return Err(format!(
                "{REFUSED}a page's drawing runs past {} operators and operands",
                thousands(MAX_PAGE_TOKENS)
            ));
        }
        if self.bytes > MAX_INFLATED_BYTES as u64 {
            return Err(self.too_big());
        }
        Ok(())
    }

    /// Walks one content stream drawn with `resources` at `depth`.
    fn draw(
        &mut self,
        content: &[u8],
        resources: Option<&'a Dictionary>,
        depth: usize,
    ) -> Result<(), String> {
        let mut open_states = 0usize;
        // The parser draws `Do`'s first operand.
        let mut first_operand: Option<Token> = None;
        for token in Lexer::new(content, Mode::Content) {
            self.count(1, 0)?;
            let Token::Operator(operator) = token else {
                if first_operand.is_none() {
                    first_operand = Some(token);
                }
                continue;
            };
            match operator {
                b"q" => {
                    open_states += 1;
                    if open_states > MAX_STATE_NESTING {
                        return Err(format!(
                            "{REFUSED}its graphics states (q) nest more than {} deep",
                            thousands(MAX_STATE_NESTING as u64)
                        ));
                    }
                }
                b"Q" => open_states = open_states.saturating_sub(1),
                b"Do" => {
                    if let Some(Token::Name(name)) = first_operand {
                        self.draw_xobject(name, resources, depth + 1)?;
                    }
                }
                _ => {}
            }
            first_operand = None;
        }
        Ok(())
    }

    /// Draws the XObject `name` from `resources`, as the parser's `Do` does: with
    /// its own `/Resources`, else the caller's.
    fn draw_xobject(
        &mut self,
        name: &[u8],
        resources: Option<&'a Dictionary>,
        depth: usize,
    ) -> Result<(), String> {
        let doc = self.doc;
        let Some(xobjects) = resources
            .and_then(|r| r.get(b"XObject").ok())
            .and_then(|x| deref(doc, x).as_dict().ok())
        else {
            return Ok(());
        };
        let Ok(Object::Reference(id)) = xobjects.get(name) else {
            return Ok(());
        };
        let Ok(Object::Stream(stream)) = doc.get_object(*id) else {
            return Ok(());
        };
        if self.path.contains(id) {
            return Err(format!(
                "{REFUSED}a drawing object (XObject) draws itself, directly or through others"
            ));
        }
        if depth > MAX_DRAWING_DEPTH {
            return Err(format!(
                "{REFUSED}its drawing objects (XObjects) nest more than {MAX_DRAWING_DEPTH} deep"
            ));
        }
        let own = stream
            .dict
            .get(b"Resources")
            .ok()
            .and_then(|r| deref(doc, r).as_dict().ok());
        let resources = own.or(resources);
        let key = (
            *id,
            resources.map_or(0, |r| r as *const Dictionary as usize),
        );
        if let Some(&(tokens, bytes)) = self.measured.get(&key) {
            return self.count(tokens, bytes);
        }
        let before = (self.tokens, self.bytes);
        let left = (MAX_INFLATED_BYTES as u64).saturating_sub(self.bytes) as usize;
        let decoded = inflate::decode(stream, left, true).map_err(|_| self.too_big())?;
        self.count(0, decoded.data.len() as u64)?;
        self.path.push(*id);
        self.draw(&decoded.data, resources, depth)?;
        self.path.pop();
        self.measured
            .insert(key, (self.tokens - before.0, self.bytes - before.1));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmap(ranges: &str) -> Stream {
        Stream::new(
            Dictionary::new(),
            format!("begincmap {ranges} endcmap").into_bytes(),
        )
    }

    #[test]
    fn cmap_ranges_are_counted_as_the_parser_expands_them() {
        let one =
            cmap("2 beginbfrange <0000> <00FF> <0041> <0100> <0101> [<0041> <0042>] endbfrange");
        assert_eq!(cmap_codes(&one), Ok(256));
        let full = cmap("1 beginbfrange <0000> <FFFF> <0000> endbfrange");
        assert_eq!(cmap_codes(&full), Ok(65_536));
        let huge = cmap("1 beginbfrange <00000000> <FFFFFFFF> <0041> endbfrange");
        let e = cmap_codes(&huge).unwrap_err();
        assert!(e.contains("more than 131,072 codes"), "{e}");
        let deep = cmap(&"[".repeat(100));
        assert!(cmap_codes(&deep).unwrap_err().contains("nests arrays"));
    }
}
