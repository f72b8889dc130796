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

mod lexer;
mod tags;
mod tree;

use tags::*;

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
}

#[cfg(test)]
mod tests;
