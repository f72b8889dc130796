//! The tag names the model of [`super`] knows: each name's classes in the HTML
//! standard's tree-construction rules (void, raw text, formatting, special, the scope
//! boundaries, ...) as bit flags, and the interning of names to small ids, with a
//! fixed hash table for the common ones so that no page can slow the lookup.

/// Properties of a tag name in the HTML standard that the model needs (bit flags).
pub(super) type Flags = u32;
pub(super) const VOID: Flags = 1 << 0;
/// Raw text or RCDATA: the tokenizer reads everything up to the matching end tag.
pub(super) const RAW: Flags = 1 << 1;
pub(super) const FORMATTING: Flags = 1 << 2;
/// "Special" elements: they stop the walk of "any other end tag" and the adoption
/// agency's search for a furthest block.
pub(super) const SPECIAL: Flags = 1 << 3;
/// Boundary of the default scope ("has an element in scope").
pub(super) const SCOPE: Flags = 1 << 4;
/// Extra boundaries of button scope and list item scope (merged: more boundaries
/// means fewer pops, the safe side).
pub(super) const NARROW: Flags = 1 << 5;
/// Boundary of table scope.
pub(super) const TABLE_SCOPE: Flags = 1 << 6;
/// Puts a marker on the list of active formatting elements.
pub(super) const MARKER: Flags = 1 << 7;
/// A start tag that closes an open `<p>` in button scope and does not reconstruct
/// the active formatting elements.
pub(super) const BLOCK: Flags = 1 << 8;
/// An end tag that closes the element if it is in the default scope.
pub(super) const BLOCK_END: Flags = 1 << 9;
pub(super) const HEADING: Flags = 1 << 10;
/// Breaks out of SVG/MathML content back to HTML.
pub(super) const BREAKOUT: Flags = 1 << 11;
/// An SVG/MathML element whose children are parsed as HTML.
pub(super) const INTEGRATION: Flags = 1 << 12;
/// Never pushed: `<html>`, `<head>`, `<body>`, `<frameset>` merge into the existing ones.
pub(super) const IGNORED: Flags = 1 << 13;
pub(super) const TABLE_PART: Flags = 1 << 14;

/// Interned tag names: the common ones have fixed ids (their index in [`KNOWN`]).
pub(super) type Id = u32;

/// Known tag names with their flags, sorted; an id is an index into this table. Names
/// with no flags are here only to be looked up fast.
pub(super) const KNOWN: &[(&str, Flags)] = &[
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
pub(super) fn known(name: &[u8]) -> Option<Id> {
    KNOWN
        .binary_search_by(|(known, _)| known.as_bytes().cmp(name))
        .ok()
        .map(|i| i as Id)
}

/// A name of up to 8 bytes, ASCII-lower-cased, packed into an integer (`None` for
/// longer names): the fast path for looking up the common tags.
pub(super) fn packed(name: &[u8]) -> Option<u64> {
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
pub(super) const PACKED_SLOTS: usize = 512;

/// [`KNOWN`]'s names of up to 8 bytes, packed, in an open-addressing hash table
/// (multiplicative hash, linear probing; empty slots hold key 0). The table is fixed,
/// so no page can make its probe sequences longer.
pub(super) fn packed_known() -> &'static [(u64, Id); PACKED_SLOTS] {
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

pub(super) fn packed_slot(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - PACKED_SLOTS.trailing_zeros())) as usize
}

/// Ids of the names that the rules below treat one by one.
pub(super) struct Ids {
    pub(super) a: Id,
    pub(super) body: Id,
    pub(super) br: Id,
    pub(super) button: Id,
    pub(super) caption: Id,
    pub(super) colgroup: Id,
    pub(super) dd: Id,
    pub(super) dt: Id,
    pub(super) font: Id,
    pub(super) form: Id,
    pub(super) li: Id,
    pub(super) math: Id,
    pub(super) nobr: Id,
    pub(super) optgroup: Id,
    pub(super) option: Id,
    pub(super) p: Id,
    pub(super) plaintext: Id,
    pub(super) select: Id,
    pub(super) svg: Id,
    pub(super) table: Id,
    pub(super) tbody: Id,
    pub(super) tfoot: Id,
    pub(super) thead: Id,
    pub(super) tr: Id,
    pub(super) address: Id,
    pub(super) div: Id,
}

impl Ids {
    pub(super) fn new() -> Ids {
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
