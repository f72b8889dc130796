//! A linear pass over the raw HTML that bounds the HTML parser's work before it runs.
//!
//! html5ever follows the HTML standard's tree-construction rules, and several of them
//! scan a list whose length the page controls: the *stack of open elements* (scope
//! checks on most block tags, "any other end tag", reconstruction) and the *list of
//! active formatting elements* (the "Noah's Ark" duplicate check on every `<b>`, `<i>`,
//! `<a>`, ..., and reconstruction, which re-creates every formatting element that a
//! closed block cut off). A page can make both lists as long as it likes: 150,000
//! unclosed `<b id=N>` tags (1.7 MB) keep 150,000 entries in both, and every tag then
//! costs a scan of all of them, so the parse takes many minutes. The same holds for deep
//! inline nesting followed by tags that check scope, for misnested `<p><b>` pairs
//! that make reconstruction clone more elements on every paragraph, and for one tag
//! with 100,000 attributes (the tokenizer checks each new attribute name against all
//! earlier ones).
//!
//! This pass lexes the page once, the way html5ever's tokenizer does (comments, raw
//! text of `<script>`, `<style>`, `<textarea>`, `<title>` and friends, quoted
//! attribute values that contain `>`), and runs a small *model* of the tree builder:
//! a stack of open elements with the standard's scope boundaries, the table and list
//! rules, implied end tags, foreign (SVG/MathML) content, and a list of active
//! formatting elements with markers and reconstruction. The model errs on one side
//! only: where it cannot tell exactly what the parser will do, it assumes the lists
//! are *longer* (it keeps an element open, or keeps a formatting entry). Against the
//! model it enforces these caps, editing the page so that the parser never sees the
//! excess:
//!
//! - [`MAX_NESTING`](MAX_NESTING) open elements: a start tag that would nest
//!   deeper is dropped (its text stays), and so is its matching end tag;
//! - [`MAX_FORMATTING`] active formatting elements: an excess `<b>`, `<font>`, ... is
//!   dropped the same way (formatting never changes the extracted text);
//! - [`MAX_ATTRIBUTES`] attributes per tag ([`MAX_FORMATTING_ATTRIBUTES`] on formatting
//!   tags, which the parser compares with each other): later ones are dropped;
//! - [`MAX_ELEMENTS`] elements created, counting the clones that reconstruction and
//!   the adoption agency make, and [`MAX_WORK`] steps of the parser's list scans: the
//!   page is cut before the tag that would pass either.
//!
//! Each parser step then costs at most a scan of `MAX_NESTING + MAX_FORMATTING`
//! entries, so the parse is linear in the page size with a bounded factor, and the
//! work cap bounds that factor's total. Real pages stay far below every cap: on the
//! extraction benchmark's 88 pages the model's stack is at most 49 deep (html5ever's,
//! with `<html>` and `<body>`, 51), at most 3 formatting elements are open, and the
//! largest page makes 1,600 elements and 71,000 steps of work. For them the output is
//! the input, unchanged and not copied.
//!
//! The model follows the parser closely on real markup, and where it does not (the
//! adoption agency moving subtrees, foster parenting, nested `<table>` start tags) it
//! counts more open elements than the parser has. A page can still make the parsed
//! tree deeper than the stack ever was (the adoption agency re-parents subtrees); that
//! costs the parser nothing, and tests check the time on random tag soup.

use std::borrow::Cow;
use std::collections::HashMap;

/// What [`extract_html`] left out of a page to keep the HTML parser's work bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncation {
    /// The cap that cut the page, or else the first one that made tags be dropped.
    pub reason: TruncationReason,
    /// Byte offset in the input where the page was cut: nothing after it was read.
    pub cut_at: Option<usize>,
    /// Tags or attribute runs left out while the rest of the page was read (their
    /// text is kept).
    pub dropped: usize,
}

/// The cap behind a [`Truncation`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TruncationReason {
    /// Elements nested deeper than [`MAX_NESTING`]: the deeper start tags (and their
    /// end tags) were dropped.
    Nesting,
    /// Too many formatting elements (`<b>`, `<font>`, `<a>`, ...) left open: the
    /// excess ones were dropped.
    Formatting,
    /// A tag with too many attributes: the excess attributes were dropped.
    Attributes,
    /// The page would make the parser create too many elements: it was cut.
    Elements,
    /// The page would make the parser scan its lists too often (many tags on a deep
    /// stack): it was cut.
    Work,
}

impl TruncationReason {
    /// A short lower-case name, for logs and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            TruncationReason::Nesting => "nesting",
            TruncationReason::Formatting => "formatting",
            TruncationReason::Attributes => "attributes",
            TruncationReason::Elements => "elements",
            TruncationReason::Work => "work",
        }
    }
}

impl std::fmt::Display for Truncation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.reason {
            TruncationReason::Nesting => "elements nested too deeply",
            TruncationReason::Formatting => "too many formatting elements left open",
            TruncationReason::Attributes => "a tag with too many attributes",
            TruncationReason::Elements => "too many elements",
            TruncationReason::Work => "too much parser work (deep or misnested markup)",
        };
        match self.cut_at {
            Some(at) => write!(f, "page cut at byte {at}: {what}")?,
            None => write!(f, "page bounded: {what}")?,
        }
        if self.dropped > 0 {
            write!(f, " ({} tags or attribute runs dropped)", self.dropped)?;
        }
        Ok(())
    }
}

/// The deepest nesting of elements the HTML parser is given. The parser checks the
/// stack of open elements on most tags, so a page nesting 100,000 elements would take
/// minutes; real pages stay below 100 (the extraction benchmark's deepest, 51). Start
/// tags that would nest deeper are dropped, their text kept.
pub const MAX_NESTING: usize = 256;

/// The most active formatting elements (`<a>`, `<b>`, `<font>`, `<i>`, `<nobr>`, ...
/// left open) kept; the parser compares each new one with all of them. Real pages
/// have a handful.
pub const MAX_FORMATTING: usize = 32;

/// The most attributes kept on one tag; html5ever checks each new attribute name
/// against every earlier one, so the cost of one tag is quadratic in this.
pub const MAX_ATTRIBUTES: usize = 256;

/// The most attributes kept on a formatting tag: the parser clones and sorts the
/// attributes of formatting elements to compare them with each other.
pub const MAX_FORMATTING_ATTRIBUTES: usize = 32;

/// The most work, in steps of the parser's scans of its two lists, that one page may
/// cause; the page is cut before the tag that passes it. A step is one element of the
/// stack looked at (the parser looks at up to the whole stack on most tags); comparing
/// two formatting elements counts 32 steps per attribute. A 2 MiB page of ordinary markup
/// costs a few million; this many take about 0.2 s of parsing.
pub const MAX_WORK: usize = 25_000_000;

/// The most elements the parser is let create for one page, the clones made by the
/// parser's repair rules included; the page is cut before the tag that passes it.
/// Real article pages create 2,000-60,000; a 2 MiB page of one-word table cells
/// about 200,000.
pub const MAX_ELEMENTS: usize = 250_000;

/// The page as the parser should see it, and what was left out of it.
pub(super) struct Bounded<'a> {
    pub html: Cow<'a, str>,
    pub truncation: Option<Truncation>,
}

/// Applies the caps described in the module documentation to `html`.
pub(super) fn bound(html: &str) -> Bounded<'_> {
    let mut pass = Pass::new(html);
    pass.run();
    pass.finish()
}

// ---------------------------------------------------------------------------------
// Tag classes

/// Properties of a tag name in the HTML standard that the model needs (bit flags).
type Flags = u32;
const VOID: Flags = 1 << 0;
/// Raw text or RCDATA: the tokenizer reads everything up to the matching end tag.
const RAW: Flags = 1 << 1;
const FORMATTING: Flags = 1 << 2;
/// "Special" elements: they stop the walk of "any other end tag" and the adoption
/// agency's search for a furthest block.
const SPECIAL: Flags = 1 << 3;
/// Boundary of the default scope ("has an element in scope").
const SCOPE: Flags = 1 << 4;
/// Extra boundaries of button scope and list item scope (merged: more boundaries
/// means fewer pops, the safe side).
const NARROW: Flags = 1 << 5;
/// Boundary of table scope.
const TABLE_SCOPE: Flags = 1 << 6;
/// Puts a marker on the list of active formatting elements.
const MARKER: Flags = 1 << 7;
/// A start tag that closes an open `<p>` in button scope and does not reconstruct
/// the active formatting elements.
const BLOCK: Flags = 1 << 8;
/// An end tag that closes the element if it is in the default scope.
const BLOCK_END: Flags = 1 << 9;
const HEADING: Flags = 1 << 10;
/// Breaks out of SVG/MathML content back to HTML.
const BREAKOUT: Flags = 1 << 11;
/// An SVG/MathML element whose children are parsed as HTML.
const INTEGRATION: Flags = 1 << 12;
/// Never pushed: `<html>`, `<head>`, `<body>`, `<frameset>` merge into the existing ones.
const IGNORED: Flags = 1 << 13;
const TABLE_PART: Flags = 1 << 14;

/// Interned tag names: the common ones have fixed ids (their index in [`KNOWN`]).
type Id = u32;

/// Known tag names with their flags, sorted; an id is an index into this table. Names
/// with no flags are here only to be looked up fast.
const KNOWN: &[(&str, Flags)] = &[
    ("a", FORMATTING),
    ("abbr", 0),
    ("address", SPECIAL | BLOCK | BLOCK_END),
    ("annotation-xml", SPECIAL | SCOPE | NARROW | INTEGRATION),
    ("applet", SPECIAL | SCOPE | NARROW | MARKER | BLOCK_END),
    ("area", VOID | SPECIAL),
    ("article", SPECIAL | BLOCK | BLOCK_END),
    ("aside", SPECIAL | BLOCK | BLOCK_END),
    ("audio", 0),
    ("b", FORMATTING | BREAKOUT),
    ("base", VOID | SPECIAL),
    ("basefont", VOID | SPECIAL),
    ("bdi", 0),
    ("bdo", 0),
    ("bgsound", VOID | SPECIAL),
    ("big", FORMATTING | BREAKOUT),
    ("blockquote", SPECIAL | BLOCK | BLOCK_END | BREAKOUT),
    ("body", SPECIAL | IGNORED | BREAKOUT),
    ("br", VOID | SPECIAL | BREAKOUT),
    ("button", SPECIAL | NARROW | BLOCK_END),
    ("canvas", 0),
    ("caption", SPECIAL | SCOPE | NARROW | MARKER | TABLE_PART),
    ("center", SPECIAL | BLOCK | BLOCK_END | BREAKOUT),
    ("circle", 0),
    ("cite", 0),
    ("clippath", 0),
    ("code", FORMATTING | BREAKOUT),
    ("col", VOID | SPECIAL),
    ("colgroup", SPECIAL | TABLE_PART),
    ("data", 0),
    ("datalist", 0),
    ("dd", SPECIAL | BLOCK | BREAKOUT),
    ("defs", 0),
    ("del", 0),
    ("desc", SPECIAL | SCOPE | NARROW | INTEGRATION),
    ("details", SPECIAL | BLOCK | BLOCK_END),
    ("dfn", 0),
    ("dialog", BLOCK | BLOCK_END),
    ("dir", SPECIAL | BLOCK | BLOCK_END),
    ("div", SPECIAL | BLOCK | BLOCK_END | BREAKOUT),
    ("dl", SPECIAL | BLOCK | BLOCK_END | BREAKOUT),
    ("dt", SPECIAL | BLOCK | BREAKOUT),
    ("ellipse", 0),
    ("em", FORMATTING | BREAKOUT),
    ("embed", VOID | SPECIAL | BREAKOUT),
    ("fieldset", SPECIAL | BLOCK | BLOCK_END),
    ("figcaption", SPECIAL | BLOCK | BLOCK_END),
    ("figure", SPECIAL | BLOCK | BLOCK_END),
    ("font", FORMATTING),
    ("footer", SPECIAL | BLOCK | BLOCK_END),
    ("foreignobject", SPECIAL | SCOPE | NARROW | INTEGRATION),
    ("form", SPECIAL | BLOCK),
    ("frame", VOID | SPECIAL),
    ("frameset", SPECIAL | IGNORED),
    ("g", 0),
    ("h1", SPECIAL | BLOCK | HEADING | BREAKOUT),
    ("h2", SPECIAL | BLOCK | HEADING | BREAKOUT),
    ("h3", SPECIAL | BLOCK | HEADING | BREAKOUT),
    ("h4", SPECIAL | BLOCK | HEADING | BREAKOUT),
    ("h5", SPECIAL | BLOCK | HEADING | BREAKOUT),
    ("h6", SPECIAL | BLOCK | HEADING | BREAKOUT),
    ("head", SPECIAL | IGNORED | BREAKOUT),
    ("header", SPECIAL | BLOCK | BLOCK_END),
    ("hgroup", SPECIAL | BLOCK | BLOCK_END),
    ("hr", VOID | SPECIAL | BLOCK | BREAKOUT),
    ("html", SPECIAL | SCOPE | NARROW | TABLE_SCOPE | IGNORED),
    ("i", FORMATTING | BREAKOUT),
    ("iframe", RAW | SPECIAL),
    ("image", VOID),
    ("img", VOID | SPECIAL | BREAKOUT),
    ("input", VOID | SPECIAL),
    ("ins", 0),
    ("kbd", 0),
    ("keygen", VOID | SPECIAL),
    ("label", 0),
    ("legend", 0),
    ("li", SPECIAL | BLOCK | BREAKOUT),
    ("line", 0),
    ("link", VOID | SPECIAL),
    ("listing", SPECIAL | BLOCK | BLOCK_END | BREAKOUT),
    ("main", SPECIAL | BLOCK | BLOCK_END),
    ("mark", 0),
    ("marquee", SPECIAL | SCOPE | NARROW | MARKER | BLOCK_END),
    ("mask", 0),
    ("math", 0),
    ("menu", SPECIAL | BLOCK | BLOCK_END | BREAKOUT),
    ("meta", VOID | SPECIAL | BREAKOUT),
    ("meter", 0),
    ("mi", SPECIAL | SCOPE | NARROW | INTEGRATION),
    ("mn", SPECIAL | SCOPE | NARROW | INTEGRATION),
    ("mo", SPECIAL | SCOPE | NARROW | INTEGRATION),
    ("ms", SPECIAL | SCOPE | NARROW | INTEGRATION),
    ("mtext", SPECIAL | SCOPE | NARROW | INTEGRATION),
    ("nav", SPECIAL | BLOCK | BLOCK_END),
    ("nobr", FORMATTING | BREAKOUT),
    ("noembed", RAW | SPECIAL),
    ("noframes", RAW | SPECIAL),
    ("noscript", RAW | SPECIAL),
    ("object", SPECIAL | SCOPE | NARROW | MARKER | BLOCK_END),
    ("ol", SPECIAL | NARROW | BLOCK | BLOCK_END | BREAKOUT),
    ("optgroup", 0),
    ("option", 0),
    ("output", 0),
    ("p", SPECIAL | BLOCK | BREAKOUT),
    ("param", VOID | SPECIAL),
    ("path", 0),
    ("pattern", 0),
    ("picture", 0),
    ("plaintext", SPECIAL),
    ("polygon", 0),
    ("polyline", 0),
    ("pre", SPECIAL | BLOCK | BLOCK_END | BREAKOUT),
    ("progress", 0),
    ("q", 0),
    ("rect", 0),
    ("ruby", BREAKOUT),
    ("s", FORMATTING | BREAKOUT),
    ("samp", 0),
    ("script", RAW | SPECIAL),
    ("search", SPECIAL | BLOCK | BLOCK_END),
    ("section", SPECIAL | BLOCK | BLOCK_END),
    ("select", SPECIAL),
    ("slot", 0),
    ("small", FORMATTING | BREAKOUT),
    ("source", VOID | SPECIAL),
    ("span", BREAKOUT),
    ("stop", 0),
    ("strike", FORMATTING | BREAKOUT),
    ("strong", FORMATTING | BREAKOUT),
    ("style", RAW | SPECIAL),
    ("sub", BREAKOUT),
    ("summary", SPECIAL | BLOCK | BLOCK_END),
    ("sup", BREAKOUT),
    ("svg", 0),
    ("symbol", 0),
    ("table", SPECIAL | SCOPE | NARROW | TABLE_SCOPE | BREAKOUT),
    ("tbody", SPECIAL | TABLE_PART),
    ("td", SPECIAL | SCOPE | NARROW | MARKER | TABLE_PART),
    ("template", SPECIAL | SCOPE | NARROW | TABLE_SCOPE | MARKER),
    ("text", 0),
    ("textarea", RAW | SPECIAL),
    ("tfoot", SPECIAL | TABLE_PART),
    ("th", SPECIAL | SCOPE | NARROW | MARKER | TABLE_PART),
    ("thead", SPECIAL | TABLE_PART),
    ("time", 0),
    ("title", RAW | SPECIAL | SCOPE | NARROW | INTEGRATION),
    ("tr", SPECIAL | TABLE_PART),
    ("track", VOID | SPECIAL),
    ("tspan", 0),
    ("tt", FORMATTING | BREAKOUT),
    ("u", FORMATTING | BREAKOUT),
    ("ul", SPECIAL | NARROW | BLOCK | BLOCK_END | BREAKOUT),
    ("use", 0),
    ("var", BREAKOUT),
    ("video", 0),
    ("wbr", VOID | SPECIAL),
    ("xmp", RAW | SPECIAL),
];

/// Looks a lower-case name up in [`KNOWN`] (sorted, so a binary search).
fn known(name: &[u8]) -> Option<Id> {
    KNOWN
        .binary_search_by(|(known, _)| known.as_bytes().cmp(name))
        .ok()
        .map(|i| i as Id)
}

/// A name of up to 8 bytes, ASCII-lower-cased, packed into an integer (`None` for
/// longer names): the fast path for looking up the common tags.
fn packed(name: &[u8]) -> Option<u64> {
    if name.is_empty() || name.len() > 8 {
        return None;
    }
    let mut bytes = [0u8; 8];
    for (to, from) in bytes.iter_mut().zip(name) {
        *to = from.to_ascii_lowercase();
    }
    Some(u64::from_be_bytes(bytes))
}

/// Slots of [`packed_known`]'s table: a power of two, four times the names in it.
const PACKED_SLOTS: usize = 512;

/// [`KNOWN`]'s names of up to 8 bytes, packed, in an open-addressing hash table
/// (multiplicative hash, linear probing; empty slots hold key 0). The table is fixed,
/// so no page can make its probe sequences longer.
fn packed_known() -> &'static [(u64, Id); PACKED_SLOTS] {
    static TABLE: std::sync::OnceLock<[(u64, Id); PACKED_SLOTS]> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = [(0u64, 0 as Id); PACKED_SLOTS];
        for (id, (name, _)) in KNOWN.iter().enumerate() {
            if let Some(key) = packed(name.as_bytes()) {
                let mut slot = packed_slot(key);
                while table[slot].0 != 0 {
                    slot = (slot + 1) % PACKED_SLOTS;
                }
                table[slot] = (key, id as Id);
            }
        }
        table
    })
}

fn packed_slot(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - PACKED_SLOTS.trailing_zeros())) as usize
}

/// Ids of the names that the rules below treat one by one.
struct Ids {
    a: Id,
    body: Id,
    br: Id,
    button: Id,
    caption: Id,
    colgroup: Id,
    dd: Id,
    dt: Id,
    font: Id,
    form: Id,
    li: Id,
    math: Id,
    nobr: Id,
    optgroup: Id,
    option: Id,
    p: Id,
    plaintext: Id,
    select: Id,
    svg: Id,
    table: Id,
    tbody: Id,
    tfoot: Id,
    thead: Id,
    tr: Id,
    address: Id,
    div: Id,
}

impl Ids {
    fn new() -> Ids {
        let id = |name: &str| known(name.as_bytes()).expect("name in KNOWN");
        Ids {
            a: id("a"),
            body: id("body"),
            br: id("br"),
            button: id("button"),
            caption: id("caption"),
            colgroup: id("colgroup"),
            dd: id("dd"),
            dt: id("dt"),
            font: id("font"),
            form: id("form"),
            li: id("li"),
            math: id("math"),
            nobr: id("nobr"),
            optgroup: id("optgroup"),
            option: id("option"),
            p: id("p"),
            plaintext: id("plaintext"),
            select: id("select"),
            svg: id("svg"),
            table: id("table"),
            tbody: id("tbody"),
            tfoot: id("tfoot"),
            thead: id("thead"),
            tr: id("tr"),
            address: id("address"),
            div: id("div"),
        }
    }
}

// ---------------------------------------------------------------------------------
// The model

/// An id that matches no name: an entry the model keeps only for its depth.
const DEAD: Id = Id::MAX;
/// No stack position.
const NONE: u32 = u32::MAX;

/// Which parsing rules apply inside an element.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ns {
    Html,
    /// SVG or MathML: tags are not raw text, `/>` closes, breakout tags leave.
    Foreign,
    /// An SVG/MathML element whose children are HTML again.
    Integration,
}

/// One element of the modelled stack of open elements. The floors are the positions
/// plus one of the nearest boundary at or below this entry (0: none), so a scope
/// check is one comparison.
#[derive(Clone, Copy)]
struct Open {
    id: Id,
    ns: Ns,
    scope: u32,
    narrow: u32,
    table: u32,
    special: u32,
    /// ... of the nearest element that is not SVG/MathML (an HTML element or an
    /// integration point).
    html: u32,
    /// Whether it counts toward the depth (see [`Pass::bury`]).
    counted: bool,
}

/// An entry of the modelled list of active formatting elements.
#[derive(Clone, Copy)]
enum Entry {
    Marker,
    /// A formatting element: its name, its position in the stack (`NONE` when it is
    /// no longer open, so that reconstruction will clone it), the element count it
    /// adds per clone (more for tags with long attribute text, which each clone
    /// copies), and where its attribute text is in the page (to find duplicates).
    Element {
        id: Id,
        pos: u32,
        weight: usize,
        attrs: (u32, u32),
    },
}

/// What a start or end tag looked like to the lexer.
struct Tag {
    /// `<` of the tag.
    start: usize,
    /// Just past its `>`.
    end: usize,
    id: Id,
    self_closing: bool,
    /// Attributes written (before any cap).
    attributes: usize,
    /// The attribute text kept (from the end of the name to `>` or the first
    /// attribute past the cap).
    attrs: (u32, u32),
    /// Byte offset of the first attribute past the cap, if any.
    excess_attributes: Option<usize>,
    /// A `<font>` with `color`, `face` or `size` (which breaks out of SVG/MathML).
    font_breaks_out: bool,
}

struct Pass<'a> {
    html: &'a str,
    bytes: &'a [u8],
    ids: Ids,
    /// Flags of every id; unknown names get 0 (an ordinary inline element).
    flags: Vec<Flags>,
    /// Ids of names that are not in [`KNOWN`].
    names: HashMap<Box<[u8]>, Id>,
    /// Per id: the stack positions where an element of that name is open, bottom first.
    open: Vec<Vec<u32>>,
    /// Per id: start tags dropped and not yet matched by a (dropped) end tag.
    dropped_open: Vec<u32>,
    stack: Vec<Open>,
    list: Vec<Entry>,
    /// Entries of `stack` that the parser no longer has (see [`Pass::bury`]).
    dead: usize,
    /// Element entries (not markers) in `list`.
    list_elements: usize,
    /// Elements the parser will have created.
    elements: usize,
    /// Scan steps the parser will have taken (see [`MAX_WORK`]).
    work: usize,
    /// What the current start tag was charged before it was processed.
    tag_charge: usize,
    /// Open SVG/MathML roots: raw-text rules are off inside them.
    foreign_roots: usize,
    /// The output, when anything was dropped; `copied` is how far `html` is copied.
    out: Option<String>,
    copied: usize,
    dropped: usize,
    first_reason: Option<TruncationReason>,
    cut: Option<(usize, TruncationReason)>,
    /// Scratch buffer for lower-casing names.
    lower: Vec<u8>,
    packed: &'static [(u64, Id); PACKED_SLOTS],
}

impl<'a> Pass<'a> {
    fn new(html: &'a str) -> Pass<'a> {
        Pass {
            html,
            bytes: html.as_bytes(),
            ids: Ids::new(),
            flags: KNOWN.iter().map(|&(_, f)| f).collect(),
            names: HashMap::new(),
            open: vec![Vec::new(); KNOWN.len()],
            dropped_open: vec![0; KNOWN.len()],
            stack: Vec::with_capacity(64),
            list: Vec::new(),
            dead: 0,
            list_elements: 0,
            elements: 0,
            work: 0,
            tag_charge: 0,
            foreign_roots: 0,
            out: None,
            copied: 0,
            dropped: 0,
            first_reason: None,
            cut: None,
            lower: Vec::with_capacity(16),
            packed: packed_known(),
        }
    }

    fn finish(self) -> Bounded<'a> {
        // A cut never falls before an edit (cuts come before edits within a tag).
        let end = self
            .cut
            .map_or(self.html.len(), |(at, _)| at)
            .max(self.copied);
        let html = match self.out {
            None => Cow::Borrowed(&self.html[..end]),
            Some(mut out) => {
                out.push_str(&self.html[self.copied..end]);
                Cow::Owned(out)
            }
        };
        let reason = self.cut.map(|(_, r)| r).or(self.first_reason);
        let truncation = reason.map(|reason| Truncation {
            reason,
            cut_at: self.cut.map(|(at, _)| at),
            dropped: self.dropped,
        });
        Bounded { html, truncation }
    }

    // --- editing the output -------------------------------------------------------

    /// Leaves `html[from..to]` out of the output. Edits come in document order.
    fn drop_range(&mut self, from: usize, to: usize) {
        debug_assert!(self.copied <= from && from <= to);
        if from < self.copied {
            return;
        }
        let out = self
            .out
            .get_or_insert_with(|| String::with_capacity(self.html.len()));
        out.push_str(&self.html[self.copied..from]);
        self.copied = to;
    }

    fn note_drop(&mut self, reason: TruncationReason) {
        self.dropped += 1;
        self.first_reason.get_or_insert(reason);
    }

    /// Drops a start tag because of `reason`; its end tag will be dropped too.
    fn drop_start_tag(&mut self, tag: &Tag, reason: TruncationReason) {
        self.drop_range(tag.start, tag.end);
        self.note_drop(reason);
        self.work -= self.tag_charge.min(self.work);
        if let Some(count) = self.dropped_open.get_mut(tag.id as usize) {
            *count += 1;
        }
    }

    // --- the lexer ----------------------------------------------------------------

    fn run(&mut self) {
        let mut i = 0;
        let len = self.bytes.len();
        while i < len && self.cut.is_none() {
            // `str::find` with an ASCII char is a fast memchr, and every index stays on
            // a char boundary because it points at or just past an ASCII byte.
            let Some(lt) = self.html[i..].find('<').map(|off| i + off) else {
                if i < len {
                    self.text(i);
                }
                break;
            };
            if lt > i {
                self.text(i);
                if self.cut.is_some() {
                    break;
                }
            }
            i = self.markup(lt);
        }
    }

    /// Handles what starts with `<` at `lt`; returns where lexing goes on.
    fn markup(&mut self, lt: usize) -> usize {
        let b = self.bytes;
        let next = b.get(lt + 1).copied();
        match next {
            Some(b'!') => {
                if b[lt + 2..].starts_with(b"--") {
                    self.comment_end(lt + 4)
                } else {
                    // DOCTYPE, CDATA outside foreign content, other declarations: a
                    // bogus comment up to the first `>`. (Inside SVG a CDATA section
                    // runs to `]]>`; ending it at `>` may read markup where the parser
                    // reads text, which only overestimates.)
                    self.to_gt(lt + 2)
                }
            }
            Some(b'?') => self.to_gt(lt + 2),
            Some(b'/') => match b.get(lt + 2) {
                Some(c) if c.is_ascii_alphabetic() => {
                    let tag = self.tag(lt, true);
                    let end = tag.end;
                    if tag.id != NONE {
                        self.end_tag(&tag);
                    }
                    end
                }
                Some(b'>') => lt + 3,
                Some(_) => self.to_gt(lt + 2),
                None => b.len(),
            },
            Some(c) if c.is_ascii_alphabetic() => {
                let tag = self.tag(lt, false);
                if tag.id == NONE {
                    // Cut off by the end of the input: the tokenizer drops it.
                    return b.len();
                }
                // A dropped tag costs the parser nothing: `drop_start_tag` refunds this.
                self.tag_charge = self.depth() + 1;
                if !self.charge(self.tag_charge, lt) {
                    return tag.end;
                }
                self.start_tag(tag)
            }
            _ => {
                // A lone `<` is text.
                self.text(lt);
                lt + 1
            }
        }
    }

    /// Past the comment whose text starts at `from`: `-->` or `--!>`, or the abrupt
    /// `<!-->` and `<!--->`.
    fn comment_end(&self, from: usize) -> usize {
        let b = self.bytes;
        if b[from..].starts_with(b">") {
            return from + 1;
        }
        if b[from..].starts_with(b"->") {
            return from + 2;
        }
        let mut at = from;
        while let Some(off) = self.html.get(at..).and_then(|rest| rest.find('-')) {
            let dash = at + off;
            if b.get(dash + 1) != Some(&b'-') {
                at = dash + 1;
                continue;
            }
            let rest = &b[dash + 2..];
            if rest.starts_with(b">") {
                return dash + 3;
            }
            if rest.starts_with(b"!>") {
                return dash + 4;
            }
            at = dash + 1;
        }
        b.len()
    }

    fn to_gt(&self, from: usize) -> usize {
        self.html[from..]
            .find('>')
            .map_or(self.bytes.len(), |off| from + off + 1)
    }

    /// Lexes the tag at `lt` like the tokenizer's tag and attribute states. A tag cut
    /// off by the end of input comes back with `id == NONE`.
    fn tag(&mut self, lt: usize, end_tag: bool) -> Tag {
        let b = self.bytes;
        let len = b.len();
        let name_start = lt + 1 + usize::from(end_tag);
        let mut i = name_start;
        while i < len && !matches!(b[i], b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'/' | b'>') {
            i += 1;
        }
        let name_end = i;
        let mut tag = Tag {
            start: lt,
            end: len,
            id: NONE,
            self_closing: false,
            attributes: 0,
            attrs: (name_end as u32, name_end as u32),
            excess_attributes: None,
            font_breaks_out: false,
        };
        let id = self.intern(name_start, name_end);
        let limit = if self.flags_of(id) & FORMATTING != 0 {
            MAX_FORMATTING_ATTRIBUTES
        } else {
            MAX_ATTRIBUTES
        };
        let mut attributes = 0usize;
        let is_font = id == self.ids.font;
        loop {
            // Before an attribute name.
            while i < len && matches!(b[i], b'\t' | b'\n' | b'\x0c' | b'\r' | b' ') {
                i += 1;
            }
            if i >= len {
                return tag;
            }
            match b[i] {
                b'>' => {
                    tag.end = i + 1;
                    tag.id = id;
                    tag.attrs.1 = tag.excess_attributes.unwrap_or(i) as u32;
                    return tag;
                }
                b'/' => {
                    if b.get(i + 1) == Some(&b'>') {
                        tag.self_closing = true;
                        tag.end = i + 2;
                        tag.id = id;
                        tag.attrs.1 = tag.excess_attributes.unwrap_or(i) as u32;
                        return tag;
                    }
                    i += 1;
                    continue;
                }
                _ => {}
            }
            // An attribute name (a leading `=` belongs to it).
            let attr_start = i;
            i += 1;
            while i < len
                && !matches!(
                    b[i],
                    b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'/' | b'>' | b'='
                )
            {
                i += 1;
            }
            attributes += 1;
            tag.attributes = attributes;
            if attributes > limit && tag.excess_attributes.is_none() {
                tag.excess_attributes = Some(attr_start);
            }
            if is_font {
                let name = &b[attr_start..i];
                tag.font_breaks_out |= [&b"color"[..], b"face", b"size"]
                    .iter()
                    .any(|n| name.eq_ignore_ascii_case(n));
            }
            // After the name: whitespace, then maybe `=` and a value.
            let mut j = i;
            while j < len && matches!(b[j], b'\t' | b'\n' | b'\x0c' | b'\r' | b' ') {
                j += 1;
            }
            if j >= len || b[j] != b'=' {
                i = j;
                continue;
            }
            j += 1;
            while j < len && matches!(b[j], b'\t' | b'\n' | b'\x0c' | b'\r' | b' ') {
                j += 1;
            }
            match b.get(j) {
                None => return tag,
                Some(&q @ (b'"' | b'\'')) => match self.html[j + 1..].find(char::from(q)) {
                    Some(off) => i = j + 1 + off + 1,
                    None => return tag,
                },
                Some(b'>') => i = j,
                Some(_) => {
                    while j < len && !matches!(b[j], b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'>')
                    {
                        j += 1;
                    }
                    i = j;
                }
            }
        }
    }

    fn flags_of(&self, id: Id) -> Flags {
        self.flags.get(id as usize).copied().unwrap_or(0)
    }

    /// The id of the tag name in `html[from..to]`, ASCII-lower-cased.
    fn intern(&mut self, from: usize, to: usize) -> Id {
        if let Some(key) = packed(&self.bytes[from..to]) {
            let mut slot = packed_slot(key);
            loop {
                let (k, id) = self.packed[slot];
                if k == key {
                    return id;
                }
                if k == 0 {
                    break;
                }
                slot = (slot + 1) % PACKED_SLOTS;
            }
        }
        self.lower.clear();
        self.lower
            .extend(self.bytes[from..to].iter().map(u8::to_ascii_lowercase));
        // Every known name of up to 8 bytes is in the packed table.
        if to - from > 8
            && let Some(id) = known(&self.lower)
        {
            return id;
        }
        if let Some(&id) = self.names.get(self.lower.as_slice()) {
            return id;
        }
        let id = self.flags.len() as Id;
        self.names.insert(self.lower.clone().into_boxed_slice(), id);
        self.flags.push(0);
        self.open.push(Vec::new());
        self.dropped_open.push(0);
        id
    }

    /// Past the end tag `</name` (name as lower-case bytes) that ends raw text, from
    /// `from`; the end of input if there is none.
    fn raw_text_end(&self, from: usize, name: &str) -> usize {
        let b = self.bytes;
        let mut at = from;
        while let Some(off) = self.html.get(at..).and_then(|rest| rest.find('<')) {
            let lt = at + off;
            if b.get(lt + 1) != Some(&b'/') {
                at = lt + 1;
                continue;
            }
            let name_at = lt + 2;
            let fits = b
                .get(name_at..name_at + name.len())
                .is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes()));
            let delimited = matches!(
                b.get(name_at + name.len()),
                Some(b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'/' | b'>')
            );
            if fits && delimited {
                return lt;
            }
            at = lt + 2;
        }
        b.len()
    }

    // --- the tree-builder model ---------------------------------------------------

    /// Open elements as the parser counts them.
    fn depth(&self) -> usize {
        self.stack.len() - self.dead
    }

    fn top(&self) -> Option<&Open> {
        self.stack.last()
    }

    fn top_ns(&self) -> Ns {
        self.top().map_or(Ns::Html, |o| o.ns)
    }

    /// The topmost open position of `id`.
    fn topmost(&self, id: Id) -> Option<u32> {
        self.open.get(id as usize).and_then(|v| v.last().copied())
    }

    /// Whether the element at `pos` is in scope given the floor of the current node
    /// (`floor` picks which floor).
    fn in_scope(&self, pos: u32, floor: fn(&Open) -> u32) -> bool {
        self.top().is_some_and(|top| floor(top) <= pos + 1)
    }

    /// Adds `steps` to the parser's work; false (and the page cut at `at`) past the cap.
    fn charge(&mut self, steps: usize, at: usize) -> bool {
        if self.cut.is_some() {
            return false;
        }
        self.work += steps;
        if self.work > MAX_WORK {
            self.cut = Some((at, TruncationReason::Work));
            return false;
        }
        true
    }

    fn note_elements(&mut self, weight: usize, at: usize) -> bool {
        if self.elements + weight > MAX_ELEMENTS {
            self.cut = Some((at, TruncationReason::Elements));
            return false;
        }
        self.elements += weight;
        true
    }

    /// Pushes an element; false (nothing pushed) when the stack is full.
    fn push(&mut self, id: Id, ns: Ns) -> bool {
        if self.depth() >= MAX_NESTING {
            return false;
        }
        let pos = self.stack.len() as u32;
        let flags = self.flags_of(id);
        let below = self.top().copied();
        let floor = |flag: Flags, get: fn(&Open) -> u32| {
            if flags & flag != 0 {
                pos + 1
            } else {
                below.as_ref().map_or(0, get)
            }
        };
        let entry = Open {
            id,
            ns,
            scope: floor(SCOPE, |o| o.scope),
            narrow: floor(SCOPE | NARROW, |o| o.narrow),
            table: floor(TABLE_SCOPE, |o| o.table),
            special: floor(SPECIAL | INTEGRATION, |o| o.special),
            html: if ns == Ns::Foreign {
                below.as_ref().map_or(0, |o| o.html)
            } else {
                pos + 1
            },
            counted: true,
        };
        self.stack.push(entry);
        if let Some(v) = self.open.get_mut(id as usize) {
            v.push(pos);
        }
        if id == self.ids.svg || id == self.ids.math {
            self.foreign_roots += 1;
        }
        true
    }

    /// Pops every element at `pos` and above.
    fn pop_to(&mut self, pos: u32) {
        while self.stack.len() > pos as usize {
            let Some(entry) = self.stack.pop() else { break };
            let at = self.stack.len() as u32;
            if !entry.counted {
                self.dead -= 1;
            }
            if entry.id == DEAD {
                continue;
            }
            if let Some(v) = self.open.get_mut(entry.id as usize) {
                v.pop();
            }
            if entry.id == self.ids.svg || entry.id == self.ids.math {
                self.foreign_roots -= 1;
            }
            let flags = self.flags_of(entry.id);
            if flags & FORMATTING != 0 {
                for e in self.list.iter_mut().rev() {
                    match e {
                        Entry::Marker => break,
                        Entry::Element { pos, .. } if *pos == at => {
                            *pos = NONE;
                            break;
                        }
                        Entry::Element { .. } => {}
                    }
                }
            }
            if flags & MARKER != 0 && entry.ns == Ns::Html {
                self.clear_list_to_marker();
            }
        }
    }

    /// The parser took the element at `pos` off its stack (`counted` false), or moved
    /// it where the model does not follow (`counted` true: it still counts toward the
    /// depth). Either way it no longer matches its name. The entry stays in the model's
    /// stack, which keeps every position valid, until what is below it is popped.
    fn bury(&mut self, pos: u32, counted: bool) {
        let Some(entry) = self.stack.get_mut(pos as usize) else {
            return;
        };
        if entry.counted && !counted {
            entry.counted = false;
            self.dead += 1;
        }
        let id = std::mem::replace(&mut entry.id, DEAD);
        if id == DEAD {
            return;
        }
        if let Some(v) = self.open.get_mut(id as usize)
            && let Some(i) = v.iter().rposition(|&p| p == pos)
        {
            v.remove(i);
        }
        if id == self.ids.svg || id == self.ids.math {
            self.foreign_roots -= 1;
        }
    }

    fn clear_list_to_marker(&mut self) {
        while let Some(e) = self.list.pop() {
            match e {
                Entry::Marker => break,
                Entry::Element { .. } => self.list_elements -= 1,
            }
        }
    }

    fn remove_entry(&mut self, index: usize) {
        if let Entry::Element { .. } = self.list.remove(index) {
            self.list_elements -= 1;
        }
    }

    /// Index of the last list entry of `id` after the last marker.
    fn last_entry(&self, id: Id) -> Option<usize> {
        for (i, e) in self.list.iter().enumerate().rev() {
            match *e {
                Entry::Marker => return None,
                Entry::Element { id: eid, .. } if eid == id => return Some(i),
                Entry::Element { .. } => {}
            }
        }
        None
    }

    /// "Reconstruct the active formatting elements": every entry after the last
    /// marker or open element is cloned and pushed again. `at` is where to cut the
    /// page if that passes a cap.
    fn reconstruct(&mut self, at: usize) {
        let first = {
            let mut first = self.list.len();
            for (i, e) in self.list.iter().enumerate().rev() {
                match *e {
                    Entry::Element { pos: NONE, .. } => first = i,
                    _ => break,
                }
            }
            first
        };
        for i in first..self.list.len() {
            let Entry::Element {
                id, weight, attrs, ..
            } = self.list[i]
            else {
                continue;
            };
            // The parser looks for each entry on the stack, then clones it.
            if !self.charge(self.depth(), at) || !self.note_elements(weight, at) {
                return;
            }
            if self.push(id, Ns::Html) {
                let pos = self.stack.len() as u32 - 1;
                self.list[i] = Entry::Element {
                    id,
                    pos,
                    weight,
                    attrs,
                };
            } else {
                // The stack is full: the model cannot follow the clone, so it forgets
                // the entry; the parser will clone it into a stack that the depth cap
                // keeps bounded, at most once per token.
                self.remove_entry(i);
                return;
            }
        }
    }

    /// Text from `at` (up to the next `<`): the parser reconstructs formatting.
    fn text(&mut self, at: usize) {
        // The parser looks for the last formatting entry on the stack.
        if !self.list.is_empty() && !self.charge(self.depth(), at) {
            return;
        }
        if matches!(self.list.last(), Some(Entry::Element { pos: NONE, .. })) {
            self.reconstruct(at);
        }
    }

    /// Trims attributes past the cap from the output.
    fn trim_attributes(&mut self, tag: &Tag) {
        if let Some(from) = tag.excess_attributes {
            let gt = if tag.self_closing {
                tag.end - 2
            } else {
                tag.end - 1
            };
            if from < gt {
                self.drop_range(from, gt);
                self.note_drop(TruncationReason::Attributes);
            }
        }
    }

    /// Pushes the element of a start tag (trimming its attributes), or drops the tag
    /// when the stack is full. Returns whether it was pushed.
    fn push_tag(&mut self, tag: &Tag, ns: Ns) -> bool {
        if self.push(tag.id, ns) {
            self.trim_attributes(tag);
            true
        } else {
            self.drop_start_tag(tag, TruncationReason::Nesting);
            false
        }
    }

    fn start_tag(&mut self, tag: Tag) -> usize {
        let id = tag.id;
        let flags = self.flags_of(id);
        if !self.note_elements(1, tag.start) {
            return tag.end;
        }
        // Foreign content: a breakout tag pops back to HTML first.
        if self.top_ns() == Ns::Foreign {
            let breaks_out = flags & BREAKOUT != 0 || (id == self.ids.font && tag.font_breaks_out);
            if breaks_out {
                let html = self.top().map_or(0, |o| o.html);
                self.pop_to(html);
            } else {
                if tag.self_closing {
                    self.trim_attributes(&tag);
                } else {
                    let ns = if flags & INTEGRATION != 0 {
                        Ns::Integration
                    } else {
                        Ns::Foreign
                    };
                    self.push_tag(&tag, ns);
                }
                return tag.end;
            }
        }
        if id == self.ids.svg || id == self.ids.math {
            self.reconstruct(tag.start);
            if self.cut.is_none() {
                if tag.self_closing {
                    self.trim_attributes(&tag);
                } else {
                    self.push_tag(&tag, Ns::Foreign);
                }
            }
            return tag.end;
        }
        if flags & IGNORED != 0 {
            self.trim_attributes(&tag);
            return tag.end;
        }
        if id == self.ids.plaintext {
            // Everything after it is text.
            self.close_p();
            return self.bytes.len();
        }
        if flags & RAW != 0 {
            // Raw text ends at its end tag; inside SVG/MathML (even in an integration
            // point) the model reads it as markup, which can only overestimate.
            if self.foreign_roots == 0 {
                self.trim_attributes(&tag);
                return self.raw_text_end(tag.end, KNOWN[id as usize].0);
            }
            self.push_tag(&tag, Ns::Html);
            return tag.end;
        }
        if flags & TABLE_PART != 0 {
            self.table_part(&tag);
            return tag.end;
        }
        if flags & FORMATTING != 0 {
            self.formatting_start(&tag);
            return tag.end;
        }
        if flags & BLOCK != 0 {
            self.close_p();
            if flags & HEADING != 0
                && self
                    .top()
                    .is_some_and(|o| self.flags_of(o.id) & HEADING != 0)
            {
                self.pop_to(self.stack.len() as u32 - 1);
            }
            if id == self.ids.li {
                self.close_list_item(&[self.ids.li]);
            } else if id == self.ids.dd || id == self.ids.dt {
                self.close_list_item(&[self.ids.dd, self.ids.dt]);
            }
        } else if id != self.ids.table {
            // (<table> closes an open <p> in no-quirks mode only; the model keeps it.)
            if id == self.ids.option {
                self.pop_if_top(self.ids.option);
            } else if id == self.ids.optgroup {
                self.pop_if_top(self.ids.option);
                self.pop_if_top(self.ids.optgroup);
            } else if id == self.ids.button
                && let Some(pos) = self.topmost(id)
                && self.in_scope(pos, |o| o.scope)
            {
                self.pop_to(pos);
            }
            self.reconstruct(tag.start);
            if self.cut.is_some() {
                return tag.end;
            }
        }
        if flags & VOID != 0 {
            self.trim_attributes(&tag);
            return tag.end;
        }
        if self.push_tag(&tag, Ns::Html) && flags & MARKER != 0 {
            self.list.push(Entry::Marker);
        }
        tag.end
    }

    fn pop_if_top(&mut self, id: Id) {
        if self.top().is_some_and(|o| o.id == id) {
            self.pop_to(self.stack.len() as u32 - 1);
        }
    }

    /// "If the stack has a `p` element in button scope, close a `p` element."
    fn close_p(&mut self) {
        if let Some(pos) = self.topmost(self.ids.p)
            && self.in_scope(pos, |o| o.narrow)
        {
            self.pop_to(pos);
        }
    }

    /// The `<li>` / `<dd>` / `<dt>` rule: walk down from the current node; an element
    /// of `names` is closed; a special element other than address, div and p stops
    /// the walk. The model looks at most 16 elements deep (stopping is the safe side).
    fn close_list_item(&mut self, names: &[Id]) {
        let len = self.stack.len();
        for pos in (len.saturating_sub(16)..len).rev() {
            let id = self.stack[pos].id;
            if names.contains(&id) {
                self.pop_to(pos as u32);
                return;
            }
            let special = id == DEAD
                || (self.flags_of(id) & (SPECIAL | INTEGRATION) != 0
                    && id != self.ids.address
                    && id != self.ids.div
                    && id != self.ids.p);
            if special {
                return;
            }
        }
    }

    /// The topmost `<table>` if it is in table scope (no `<template>` above it).
    fn open_table(&self) -> Option<u32> {
        self.topmost(self.ids.table)
            .filter(|&pos| self.in_scope(pos, |o| o.table))
    }

    /// Table parts outside a table are ignored by the parser. Inside one, the parser
    /// clears the stack back to the right table context and adds an implied `tbody`
    /// and `tr` where they are missing.
    fn table_part(&mut self, tag: &Tag) {
        let id = tag.id;
        let Some(table) = self.open_table() else {
            self.trim_attributes(tag);
            return;
        };
        let sections = [self.ids.tbody, self.ids.thead, self.ids.tfoot];
        let section = sections
            .iter()
            .filter_map(|&s| self.topmost(s))
            .max()
            .filter(|&s| s > table);
        let row = self.topmost(self.ids.tr).filter(|&r| r > table);
        if id == self.ids.colgroup {
            // Open only until the next tag that is not a <col>: not modelled.
            self.pop_to(table + 1);
            self.trim_attributes(tag);
            return;
        }
        if id == self.ids.caption || sections.contains(&id) {
            self.pop_to(table + 1);
        } else if id == self.ids.tr {
            match section {
                Some(s) => self.pop_to(s + 1),
                None => {
                    self.pop_to(table + 1);
                    self.implied(self.ids.tbody, tag.start);
                }
            }
        } else {
            // <td> or <th>.
            match (row, section) {
                (Some(r), _) => self.pop_to(r + 1),
                (None, Some(s)) => {
                    self.pop_to(s + 1);
                    self.implied(self.ids.tr, tag.start);
                }
                (None, None) => {
                    self.pop_to(table + 1);
                    self.implied(self.ids.tbody, tag.start);
                    self.implied(self.ids.tr, tag.start);
                }
            }
        }
        if self.cut.is_none() && self.push_tag(tag, Ns::Html) && self.flags_of(id) & MARKER != 0 {
            self.list.push(Entry::Marker);
        }
    }

    /// An element the parser adds without a tag (an implied `tbody` or `tr`).
    fn implied(&mut self, id: Id, at: usize) {
        if self.note_elements(1, at) {
            // With a full stack the model leaves it out; the parser's stack is then
            // shorter than the model's by the tags dropped so far, at least one.
            let _ = self.push(id, Ns::Html);
        }
    }

    fn formatting_start(&mut self, tag: &Tag) {
        let id = tag.id;
        if id == self.ids.a {
            // An open <a> is closed by the adoption agency first.
            if self.last_entry(id).is_some() {
                self.adoption_agency(id, tag.start);
            }
        } else if id == self.ids.nobr
            && let Some(pos) = self.topmost(id)
            && self.in_scope(pos, |o| o.scope)
        {
            self.adoption_agency(id, tag.start);
        }
        if self.cut.is_some() {
            return;
        }
        self.noahs_ark(tag);
        if self.list_elements >= MAX_FORMATTING {
            self.drop_start_tag(tag, TruncationReason::Formatting);
            return;
        }
        // The parser compares the new element with every entry, cloning and sorting
        // both attribute lists: measured, some 32 steps' time per attribute.
        let kept = tag.attributes.min(MAX_FORMATTING_ATTRIBUTES);
        if !self.charge(self.list.len() * (1 + 32 * kept), tag.start) {
            return;
        }
        self.reconstruct(tag.start);
        if self.cut.is_some() {
            return;
        }
        // Each clone of this element copies its attribute text.
        let weight = 1 + (tag.end - tag.start) / 64;
        if self.push_tag(tag, Ns::Html) {
            let pos = self.stack.len() as u32 - 1;
            self.list.push(Entry::Element {
                id,
                pos,
                weight,
                attrs: tag.attrs,
            });
            self.list_elements += 1;
        }
    }

    /// The parser's "Noah's Ark" clause: with three entries after the last marker
    /// that equal the new element (name and attributes), the earliest leaves the list
    /// (not the stack). The model takes attributes as equal when their text is, which
    /// may miss duplicates written differently (then it keeps more entries: the safe
    /// side).
    fn noahs_ark(&mut self, tag: &Tag) {
        let text = |(from, to): (u32, u32)| &self.bytes[from as usize..to as usize];
        let mut same = 0;
        let mut earliest = None;
        for (i, e) in self.list.iter().enumerate().rev() {
            match *e {
                Entry::Marker => break,
                Entry::Element { id, attrs, .. }
                    if id == tag.id && text(attrs) == text(tag.attrs) =>
                {
                    same += 1;
                    earliest = Some(i);
                }
                Entry::Element { .. } => {}
            }
        }
        if same >= 3
            && let Some(i) = earliest
        {
            self.remove_entry(i);
        }
    }

    /// The adoption agency algorithm for an end tag of formatting element `id`, as far
    /// as the stack depth and list length go. Returns false when the tag is to be
    /// handled as "any other end tag" instead. `at` is where to cut the page if the
    /// clones it makes pass [`MAX_ELEMENTS`].
    fn adoption_agency(&mut self, id: Id, at: usize) -> bool {
        let Some(index) = self.last_entry(id) else {
            return false;
        };
        // Up to 8 rounds, each scanning the stack and the list.
        if !self.charge(8 * (self.depth() + self.list.len()), at) {
            return true;
        }
        let Entry::Element { pos, weight, .. } = self.list[index] else {
            return false;
        };
        if pos == NONE {
            self.remove_entry(index);
            return true;
        }
        if !self.in_scope(pos, |o| o.scope) {
            return true;
        }
        let Some(top) = self.top().copied() else {
            return true;
        };
        if top.special <= pos + 1 {
            // No furthest block: pop up to the formatting element.
            self.pop_to(pos);
            if let Some(i) = self.last_entry(id) {
                self.remove_entry(i);
            }
            return true;
        }
        // A furthest block exists. The parser removes the element and moves a clone
        // above the special elements over it, one per round, making up to 4 clones a
        // round; within 8 rounds the clone is popped and forgotten. The model keeps the
        // element's depth, and keeps its entry when 8 rounds do not suffice.
        let mut specials = 0;
        let mut floor = top.special;
        while floor > pos + 1 && specials <= 8 {
            specials += 1;
            // `floor - 1` is a special element; continue below it.
            let below = floor as usize - 1;
            floor = if below == 0 {
                0
            } else {
                self.stack[below - 1].special
            };
        }
        if !self.note_elements(4 * specials.min(8) * weight, at) {
            return true;
        }
        self.bury(pos, specials > 8);
        if specials > 8 {
            if let Entry::Element { pos, .. } = &mut self.list[index] {
                *pos = NONE;
            }
        } else {
            self.remove_entry(index);
        }
        true
    }

    fn end_tag(&mut self, tag: &Tag) {
        let id = tag.id;
        if let Some(count) = self.dropped_open.get_mut(id as usize)
            && *count > 0
        {
            *count -= 1;
            // Counted with its start tag.
            self.drop_range(tag.start, tag.end);
            return;
        }
        if !self.charge(self.depth() + 1, tag.start) {
            return;
        }
        let flags = self.flags_of(id);
        if let Some(top) = self.top().copied()
            && top.ns == Ns::Foreign
        {
            // In SVG/MathML an end tag closes the nearest element of its name among
            // the foreign elements on top; else the HTML rules apply. `</p>` and
            // `</br>` leave the foreign content first.
            if let Some(pos) = self.topmost(id)
                && pos + 1 > top.html
            {
                self.pop_to(pos);
                return;
            }
            if id == self.ids.p || id == self.ids.br {
                self.pop_to(top.html);
            }
        }
        if flags & FORMATTING != 0 {
            if !self.adoption_agency(id, tag.start) {
                self.any_other_end_tag(id);
            }
            return;
        }
        if id == self.ids.p {
            match self
                .topmost(id)
                .filter(|&pos| self.in_scope(pos, |o| o.narrow))
            {
                Some(pos) => self.pop_to(pos),
                // The parser makes an empty <p>.
                None => {
                    let _ = self.note_elements(1, tag.start);
                }
            }
            return;
        }
        if id == self.ids.br {
            // Parsed as <br>.
            let _ = self.note_elements(1, tag.start);
            self.reconstruct(tag.start);
            return;
        }
        if id == self.ids.li {
            if let Some(pos) = self
                .topmost(id)
                .filter(|&pos| self.in_scope(pos, |o| o.narrow))
            {
                self.pop_to(pos);
            }
            return;
        }
        if flags & (BLOCK_END | HEADING) != 0 || id == self.ids.dd || id == self.ids.dt {
            let pos = if flags & HEADING != 0 {
                (0..6)
                    .filter_map(|k| self.topmost(known(&[b'h', b'1' + k]).unwrap_or(NONE)))
                    .max()
            } else {
                self.topmost(id)
            };
            if let Some(pos) = pos.filter(|&pos| self.in_scope(pos, |o| o.scope)) {
                self.pop_to(pos);
            }
            return;
        }
        if id == self.ids.form {
            if let Some(pos) = self
                .topmost(id)
                .filter(|&pos| self.in_scope(pos, |o| o.scope))
            {
                self.bury(pos, false);
                if pos as usize + 1 == self.stack.len() {
                    self.pop_to(pos);
                }
            }
            return;
        }
        if flags & TABLE_PART != 0 || id == self.ids.table {
            if let Some(pos) = self
                .topmost(id)
                .filter(|&pos| self.in_scope(pos, |o| o.table))
            {
                self.pop_to(pos);
            }
            return;
        }
        if id == self.ids.select {
            // Only option/optgroup may stand above it (select scope).
            let len = self.stack.len();
            for pos in (len.saturating_sub(4)..len).rev() {
                let open = self.stack[pos].id;
                if open == id {
                    self.pop_to(pos as u32);
                    return;
                }
                if open != self.ids.option && open != self.ids.optgroup {
                    return;
                }
            }
            return;
        }
        if id == self.ids.body || flags & IGNORED != 0 {
            return;
        }
        self.any_other_end_tag(id);
    }

    /// "Any other end tag": close the nearest open element of that name unless a
    /// special element stands above it.
    fn any_other_end_tag(&mut self, id: Id) {
        if let Some(pos) = self.topmost(id)
            && self.in_scope(pos, |o| o.special)
        {
            self.pop_to(pos);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `<b id=0>x<b id=1>x...`: unclosed formatting elements that all differ, so the
    /// parser's duplicate check keeps every one.
    fn b_bomb(n: usize) -> String {
        (0..n).map(|i| format!("<b id={i}>x")).collect()
    }

    fn unchanged(html: &str) {
        let bounded = bound(html);
        assert!(
            matches!(bounded.html, Cow::Borrowed(_)),
            "copied: {html:.200}"
        );
        assert_eq!(bounded.html, html);
        assert_eq!(bounded.truncation, None, "{html:.200}");
    }

    fn reason(html: &str) -> Option<TruncationReason> {
        bound(html).truncation.map(|t| t.reason)
    }

    #[test]
    fn real_pages_pass_unchanged_and_uncopied() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/extract");
        for entry in std::fs::read_dir(dir).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            unchanged(&crate::extract::decode_body(&bytes, None));
        }
    }

    #[test]
    fn well_formed_and_sloppy_markup_passes_unchanged() {
        unchanged(
            &"<p>Some <b>bold</b>, <i>italic</i> and <a href=x>linked</a> words.</p>\n"
                .repeat(20_000),
        );
        unchanged(&format!(
            "<ul>{}</ul>",
            "<li>item <b>one</b>".repeat(20_000)
        ));
        unchanged(&"<p>unclosed paragraph <font face=x>with font".repeat(20_000));
        unchanged(&"<table><tr><td>a<td>b<tr><td>c</table>".repeat(5_000));
        unchanged(&"<dl><dt>term<dd>definition</dl>".repeat(5_000));
        unchanged(&"<div><p>text<div>nested</div></div>".repeat(5_000));
        unchanged(&"<svg><path d=x/><g><rect/></g></svg><math><mi>x</mi></math>".repeat(5_000));
        unchanged(&"<select><option>a<option>b<optgroup><option>c</select>".repeat(5_000));
        unchanged(&"<h1>a<h2>b</h2><p>c</p>".repeat(5_000));
        // Misnested formatting: the parser closes it by the adoption agency.
        unchanged(&"<p><b>bold <i>both</b> italic</i></p>".repeat(20_000));
        unchanged(&"<b><p>para in bold</b> more</p>".repeat(20_000));
        unchanged(&"<a href=1>one<a href=2>two".repeat(20_000));
    }

    #[test]
    fn a_formatting_bomb_keeps_its_text_and_drops_the_excess_tags() {
        let n = 150_000;
        let html = b_bomb(n);
        let bounded = bound(&html);
        let t = bounded.truncation.expect("bounded");
        assert_eq!(t.reason, TruncationReason::Formatting);
        assert_eq!(t.cut_at, None);
        assert_eq!(t.dropped, n - MAX_FORMATTING);
        assert_eq!(bounded.html.matches("<b ").count(), MAX_FORMATTING);
        assert_eq!(bounded.html.matches('x').count(), n);
        assert!(bounded.html.starts_with("<b id=0>x<b id=1>x"));
    }

    #[test]
    fn every_formatting_tag_is_capped() {
        for tag in [
            "a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong",
            "tt", "u",
        ] {
            // Each inside its own table cell, so that even <a> and <nobr> stay open.
            let html: String = (0..2_000)
                .map(|i| format!("<table><tr><td><{tag} id={i}>x"))
                .collect();
            assert!(reason(&html).is_some(), "{tag}");
            let html: String = (0..2_000)
                .map(|i| format!("<div><{tag} id={i}>x"))
                .collect();
            assert!(reason(&html).is_some(), "{tag}");
        }
    }

    #[test]
    fn a_dropped_start_tag_takes_its_end_tag_along() {
        let opens: String = (0..40).map(|i| format!("<i id={i}>")).collect();
        let html = format!("{opens}x{}after", "</i>".repeat(40));
        let bounded = bound(&html);
        assert_eq!(bounded.html.matches("<i ").count(), MAX_FORMATTING);
        assert_eq!(bounded.html.matches("</i>").count(), MAX_FORMATTING);
        assert!(
            bounded
                .html
                .ends_with(&format!("x{}after", "</i>".repeat(MAX_FORMATTING)))
        );
        assert_eq!(bounded.truncation.unwrap().dropped, 40 - MAX_FORMATTING);
    }

    #[test]
    fn closed_formatting_elements_do_not_count() {
        unchanged(&b_bomb(1).replace("x", "x</b>").repeat(50_000));
        unchanged(
            &(0..20_000)
                .map(|i| format!("<b id={i}>x</b>"))
                .collect::<String>(),
        );
    }

    #[test]
    fn deep_nesting_drops_the_deeper_tags_and_keeps_the_text() {
        let html = format!(
            "{}deep{}after",
            "<div>".repeat(1_000),
            "</div>".repeat(1_000)
        );
        let bounded = bound(&html);
        let t = bounded.truncation.unwrap();
        assert_eq!(t.reason, TruncationReason::Nesting);
        assert_eq!(t.dropped, 1_000 - MAX_NESTING);
        assert_eq!(bounded.html.matches("<div>").count(), MAX_NESTING);
        assert_eq!(bounded.html.matches("</div>").count(), MAX_NESTING);
        assert!(bounded.html.contains("deep</div>"));
        assert!(bounded.html.ends_with("after"));
        // Inline nesting too, and the same page again after it is closed.
        let spans = format!("{}x{}", "<span>".repeat(300), "</span>".repeat(300));
        let spans = spans.repeat(3);
        let bounded = bound(&spans);
        assert_eq!(bounded.truncation.unwrap().dropped, 3 * (300 - MAX_NESTING));
    }

    #[test]
    fn misnesting_that_keeps_elements_open_counts_them() {
        // The parser ignores </div> and </b> here (a table is in the way), so each
        // round leaves a <div> or a <b> open.
        assert_eq!(
            reason(&"<div><table></div></table>".repeat(2_000)),
            Some(TruncationReason::Nesting)
        );
        let soup: String = (0..2_000)
            .map(|i| format!("<b id={i}><table></b></table>"))
            .collect();
        assert_eq!(reason(&soup), Some(TruncationReason::Formatting));
        // A formatting element closed across a block is re-opened after it.
        let soup: String = (0..2_000).map(|i| format!("<p><b id={i}>x</p>")).collect();
        assert_eq!(reason(&soup), Some(TruncationReason::Formatting));
    }

    #[test]
    fn too_many_elements_cut_the_page() {
        // Each stray </p> makes the parser create an empty <p>.
        let html = "</p>".repeat(MAX_ELEMENTS + 10);
        let t = bound(&html).truncation.unwrap();
        assert_eq!(t.reason, TruncationReason::Elements);
        assert_eq!(t.cut_at, Some(4 * MAX_ELEMENTS));
        assert_eq!(bound(&html).html.len(), 4 * MAX_ELEMENTS);
    }

    #[test]
    fn too_much_work_cuts_the_page() {
        let html = format!("{}{}", "<span>".repeat(255), "</zz>".repeat(400_000));
        let t = bound(&html).truncation.unwrap();
        assert_eq!(t.reason, TruncationReason::Work);
        let at = t.cut_at.unwrap();
        assert!(at > 6 * 255 && at < html.len(), "{at}");
        assert!(html[at..].starts_with("</zz>"));
    }

    #[test]
    fn excess_attributes_are_dropped_and_the_tag_kept() {
        let attrs: String = (0..1_000).map(|i| format!(" a{i}=\"v>{i}\"")).collect();
        for (open, close) in [("<div", ">"), ("<br", "/>")] {
            let html = format!("{open}{attrs}{close}text");
            let bounded = bound(&html);
            assert_eq!(
                bounded.truncation.unwrap().reason,
                TruncationReason::Attributes
            );
            let expected: String = (0..MAX_ATTRIBUTES)
                .map(|i| format!(" a{i}=\"v>{i}\""))
                .collect();
            // The whitespace before the first dropped attribute stays.
            assert_eq!(bounded.html, format!("{open}{expected} {close}text"));
        }
        let attrs: String = (0..100).map(|i| format!(" a{i}")).collect();
        let html = format!("<b{attrs}>x</b>");
        let bounded = bound(&html);
        assert_eq!(
            bounded.html.matches(" a").count(),
            MAX_FORMATTING_ATTRIBUTES
        );
        unchanged(&format!("<div{}>x</div>", &attrs[..]));
    }

    /// Markup that hides the bomb from the parser must hide it from the pass too.
    #[test]
    fn comments_raw_text_and_quoted_attributes_hide_tags() {
        let bomb = b_bomb(100);
        for (before, after) in [
            ("<!--", "-->"),
            ("<!-- a -- b - ", "--!>"),
            ("<script>", "</script>"),
            ("<script type=x>if (a</b) {", "}</script >"),
            ("<SCRIPT>", "</Script>"),
            ("<style>", "</style>"),
            ("<textarea>", "</textarea>"),
            ("<title>", "</title>"),
            ("<noscript>", "</noscript>"),
            ("<iframe>", "</iframe>"),
            ("<xmp>", "</xmp>"),
            ("<noembed>", "</noembed>"),
            ("<noframes>", "</noframes>"),
            ("<div title=\"", "\">"),
            ("<div title='", "'>"),
            ("<div a=1 title = '", "' b>"),
            ("<plaintext>", ""),
            ("<script>", ""),
            ("<!--", ""),
        ] {
            unchanged(&format!("<p>x{before}{bomb}{after}y</p>"));
        }
    }

    /// ... and markup that ends before the bomb must not hide it.
    #[test]
    fn tags_after_comments_raw_text_and_attributes_are_seen() {
        let bomb = b_bomb(100);
        for before in [
            "<!---->",
            "<!-->",
            "<!--->",
            "<!-- --!>",
            "<!-- <script> -->",
            "<!DOCTYPE html>",
            "<![CDATA[ x ]]>",
            "<?xml version=1?>",
            "</>",
            "</ x>",
            "<script></script>",
            "<script>\"</script>\"",
            "<script></scriptx></script>",
            "<style>a{}</style\n>",
            "<title>t</title/>",
            "<textarea><b></textarea>",
            "<div title=\"a>b\" x='<script>'>",
            "<div title=a>b>",
            "<div a\"b>",
            "<div =x>",
            "< b>",
            "<svg><style>",
            "<math><style></style></math>",
            "<svg><title>",
            "<svg><script>",
        ] {
            assert_eq!(
                reason(&format!("{before}{bomb}")),
                Some(TruncationReason::Formatting),
                "{before}"
            );
        }
    }

    #[test]
    fn odd_input_never_panics() {
        for html in [
            "",
            "<",
            "</",
            "<!",
            "<!-",
            "<!--",
            "<a",
            "<a ",
            "<a b",
            "<a b=",
            "<a b='",
            "<a b=c",
            "<a/",
            "</a",
            "</a ",
            "<é>",
            "<aé b=é>é</aé>",
            "<\u{0}>",
            "<a\u{0}b>",
            "<svg><p/>",
            "<svg></p>",
            "<table><td><table><td>",
            "</br></p></li></form>",
            "<form><div></form></div>",
            "<select></select></select>",
            "<nobr><nobr>",
        ] {
            let _ = bound(html);
            let _ = bound(&html.repeat(1_000));
        }
    }

    /// The depth of the deepest element of the parsed page (`<html>` is 1) and the
    /// number of elements.
    fn dom_depth(html: &str) -> (usize, usize) {
        let doc = scraper::Html::parse_document(html);
        let mut deepest = 0;
        let mut elements = 0;
        for node in doc.tree.nodes() {
            if node.value().is_element() {
                elements += 1;
                // Template contents hang under a fragment node: count elements only.
                let depth = node.ancestors().filter(|a| a.value().is_element()).count();
                deepest = deepest.max(depth + 1);
            }
        }
        (deepest, elements)
    }

    fn soup() -> impl Strategy<Value = String> {
        let unit = prop::sample::select(vec![
            "<b>",
            "<b id=1>",
            "<i class=x>",
            "<a href=x>",
            "<font color=red>",
            "<nobr>",
            "<em>",
            "<u>",
            "</b>",
            "</i>",
            "</a>",
            "</font>",
            "</nobr>",
            "</em>",
            "x",
            " ",
            "<div>",
            "</div>",
            "<p>",
            "</p>",
            "<span>",
            "</span>",
            "<table>",
            "</table>",
            "<tr>",
            "<td>",
            "</td>",
            "<th>",
            "<caption>",
            "<tbody>",
            "<li>",
            "</li>",
            "<ul>",
            "</ul>",
            "<dd>",
            "<dt>",
            "<h1>",
            "</h2>",
            "<br>",
            "</br>",
            "<hr>",
            "<svg>",
            "</svg>",
            "<math>",
            "<mi>",
            "<foreignObject>",
            "<path/>",
            "<span/>",
            "<form>",
            "</form>",
            "<select>",
            "<option>",
            "</select>",
            "<button>",
            "<object>",
            "</object>",
            "<template>",
            "</template>",
            "<marquee>",
            "</zz>",
            "<zz>",
            "<applet>",
            "<script>",
            "</script>",
            "<!--",
            "-->",
            "<title>",
            "</title>",
        ]);
        prop::collection::vec((unit, 1usize..40), 1..400).prop_map(|parts| {
            let mut html = String::new();
            for (i, (unit, times)) in parts.into_iter().enumerate() {
                for k in 0..times {
                    // Distinct attributes defeat the parser's duplicate check.
                    html.push_str(&unit.replacen("<b id=1>", &format!("<b id={i}-{k}>"), 1));
                }
            }
            html
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64),
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// The model errs on the safe side: the parser creates no more elements than
        /// the cap allows, and a page that passes unchanged was not copied.
        #[test]
        fn the_parser_stays_within_the_caps(html in soup()) {
            let bounded = bound(&html);
            let (_, elements) = dom_depth(&bounded.html);
            prop_assert!(elements <= MAX_ELEMENTS + 8, "{} elements", elements);
            if bounded.truncation.is_none() {
                prop_assert_eq!(&bounded.html, &html);
            }
        }
    }
}
