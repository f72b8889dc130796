//! Finding and printing the main text of a parsed page.
//!
//! The page is flattened once into an array in document order ([`Dom`]), so every
//! later pass is a loop over indices: no recursion (a page nested 100,000 levels deep
//! cannot overflow the stack) and a subtree is the index range `i..end[i]`. At most
//! [`MAX_NODES`] nodes are taken; the rest of a larger page is ignored.
//!
//! Then, in the spirit of Readability's content scoring (our own weights and rules):
//! 1. every text block (an element with its inline text, nested blocks excluded) with
//!    enough text outside links scores `1 + commas + min(chars/100, 3)`; the score goes
//!    to the block's container and, decreasing, to five levels of ancestors. Blocks
//!    inside boilerplate (nav, footer, aside, hidden elements, class/id words such as
//!    "comment" or "related", see [`super::hints`]) score nothing;
//! 2. a container's final score is scaled by `1 - link density` and moved by its
//!    class/id words; the best one is the article. It is widened to its parent when
//!    the article was split into several scored parts;
//! 3. the article's siblings join when they score well or are text-heavy paragraphs;
//! 4. the chosen subtrees are printed one block per line, dropping boilerplate inside
//!    them: boilerplate tags and words, link lists, and known filler lines ([`super::filler`]).

use scraper::node::Element;
use scraper::{Html, Node};

use super::filler::{is_filler, trim_call_to_action_tail};
use super::hints::{self, Hint};
use crate::text::{clean_inline, is_invisible};

/// The most nodes (elements + text nodes) one page may contribute. Real article pages
/// have 2,000-60,000; past this the rest of the document is ignored, which bounds the
/// work of every pass.
pub const MAX_NODES: usize = 400_000;

/// Minimum characters (not counting whitespace) outside links for a block to score.
const MIN_BLOCK_CHARS: u32 = 22;

const NONE: u32 = u32::MAX;

/// What an element is for our purposes, decided once from its tag name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Never text: script, style, form controls, media.
    Skip,
    /// Page furniture by its tag: nav, aside, footer, header, menu, dialog, form,
    /// figcaption.
    Furniture,
    /// A block whose own text is a paragraph (p, li, td, headings, ...).
    Para,
    /// A quotation (a Para for scoring; its lines are quoted words, so they are never
    /// taken for filler or datelines: an embedded post ends "— Name (@x) May 1, 2019").
    Quote,
    /// A heading (also a Para for scoring purposes).
    Heading,
    Pre,
    /// A block that mainly holds other blocks (div, section, ul, table, ...).
    Container,
    /// A table row: its cells go on one line.
    Row,
    /// A table cell: separated from its neighbours by a space.
    Cell,
    Br,
    Link,
    Inline,
}

fn kind_of(name: &str) -> Kind {
    match name {
        "script" | "style" | "noscript" | "template" | "svg" | "canvas" | "iframe" | "object"
        | "embed" | "video" | "audio" | "select" | "textarea" | "button" | "input" | "head"
        | "math" | "map" | "option" | "datalist" | "picture" | "source" | "img" => Kind::Skip,
        "nav" | "aside" | "footer" | "header" | "menu" | "dialog" | "form" => Kind::Furniture,
        // Photo captions describe the page's pictures, not the story.
        "figcaption" => Kind::Furniture,
        "p" | "li" | "dd" | "dt" | "caption" | "address" | "summary" | "legend" => Kind::Para,
        "blockquote" => Kind::Quote,
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => Kind::Heading,
        "pre" => Kind::Pre,
        "tr" => Kind::Row,
        "td" | "th" => Kind::Cell,
        "br" | "hr" => Kind::Br,
        "a" => Kind::Link,
        "div" | "section" | "article" | "main" | "body" | "html" | "ul" | "ol" | "dl" | "table"
        | "tbody" | "thead" | "tfoot" | "figure" | "details" | "center" | "fieldset" | "hgroup"
        | "dir" => Kind::Container,
        _ => Kind::Inline,
    }
}

/// A node of the flattened page.
enum Item<'a> {
    Text(&'a str),
    Element { kind: Kind, el: &'a Element },
    Other,
}

/// The page flattened in document order, with per-node figures filled by [`Dom::measure`].
struct Dom<'a> {
    items: Vec<Item<'a>>,
    parent: Vec<u32>,
    /// One past the last descendant: the subtree of `i` is `i..end[i]`.
    end: Vec<u32>,
    /// Non-whitespace characters of visible text in the subtree.
    chars: Vec<u32>,
    /// ... of which inside links.
    link_chars: Vec<u32>,
    /// Number of `<a>` elements in the subtree.
    links: Vec<u32>,
    /// Own (inline) text of a block element: characters, link characters, commas.
    own_chars: Vec<u32>,
    own_link_chars: Vec<u32>,
    own_commas: Vec<u32>,
    /// Inside furniture, hidden or negatively hinted elements (this one included).
    boiler: Vec<bool>,
    /// This element itself is hinted as boilerplate or hidden (not inherited).
    self_boiler: Vec<bool>,
    hint: Vec<Hint>,
    score: Vec<f32>,
}

impl<'a> Dom<'a> {
    fn flatten(doc: &'a Html) -> Dom<'a> {
        let mut items = Vec::with_capacity(4096);
        let mut parent = Vec::with_capacity(4096);
        let mut stack = vec![(doc.tree.root(), NONE)];
        while let Some((node, up)) = stack.pop() {
            if items.len() >= MAX_NODES {
                break;
            }
            let me = items.len() as u32;
            let item = match node.value() {
                Node::Text(t) => Item::Text(t),
                Node::Element(el) => Item::Element {
                    kind: kind_of(el.name()),
                    el,
                },
                Node::Document | Node::Fragment => Item::Other,
                _ => continue,
            };
            let descend = !matches!(
                item,
                Item::Element {
                    kind: Kind::Skip,
                    ..
                }
            );
            items.push(item);
            parent.push(up);
            if descend {
                // Children pushed last-first so they pop in document order.
                let first = stack.len();
                stack.extend(node.children().map(|child| (child, me)));
                stack[first..].reverse();
            }
        }
        let n = items.len();
        let mut end: Vec<u32> = (1..=n as u32).collect();
        for i in (1..n).rev() {
            let p = parent[i] as usize;
            if p < n {
                end[p] = end[p].max(end[i]);
            }
        }
        Dom {
            items,
            parent,
            end,
            chars: vec![0; n],
            link_chars: vec![0; n],
            links: vec![0; n],
            own_chars: vec![0; n],
            own_link_chars: vec![0; n],
            own_commas: vec![0; n],
            boiler: vec![false; n],
            self_boiler: vec![false; n],
            hint: vec![Hint::Neutral; n],
            score: vec![0.0; n],
        }
    }

    fn len(&self) -> usize {
        self.items.len()
    }

    fn kind(&self, i: usize) -> Option<Kind> {
        match self.items[i] {
            Item::Element { kind, .. } => Some(kind),
            _ => None,
        }
    }

    fn parent_of(&self, i: usize) -> Option<usize> {
        let p = self.parent[i];
        (p != NONE).then_some(p as usize)
    }

    /// Fills the text figures, hints and boilerplate flags (one forward and one
    /// backward pass).
    fn measure(&mut self) {
        let n = self.len();
        let mut in_link = vec![false; n];
        // Nearest block ancestor (or self) of each node.
        let mut block = vec![0u32; n];
        for i in 0..n {
            let up = self.parent_of(i);
            let (p_link, p_block) = up.map_or((false, i as u32), |p| (in_link[p], block[p]));
            match &self.items[i] {
                Item::Element { kind, el } => {
                    self.hint[i] = match el.name() {
                        "html" | "body" | "main" | "article" => Hint::Neutral,
                        _ => hints::judge(el.attr("class"), el.attr("id")),
                    };
                    in_link[i] = p_link || *kind == Kind::Link;
                    self.links[i] = u32::from(*kind == Kind::Link);
                    block[i] = match kind {
                        Kind::Inline | Kind::Link | Kind::Br | Kind::Skip => p_block,
                        _ => i as u32,
                    };
                }
                Item::Text(t) => {
                    in_link[i] = p_link;
                    block[i] = p_block;
                    let (chars, commas) = count_chars(t);
                    self.chars[i] = chars;
                    if p_link {
                        self.link_chars[i] = chars;
                    }
                    let b = p_block as usize;
                    self.own_chars[b] += chars;
                    self.own_commas[b] += commas;
                    if p_link {
                        self.own_link_chars[b] += chars;
                    }
                }
                Item::Other => {
                    block[i] = i as u32;
                }
            }
        }
        for i in (1..n).rev() {
            if let Some(p) = self.parent_of(i) {
                self.chars[p] += self.chars[i];
                self.link_chars[p] += self.link_chars[i];
                self.links[p] += self.links[i];
            }
        }
        self.mark_boilerplate(true);
    }

    /// Boilerplate flags, once sizes are known: furniture tags, hidden elements and
    /// (with `use_hints`) negative class/id words. Neither a tag nor a class word can
    /// throw away the bulk of the page (`<div class="page has-share-bar">` around
    /// everything).
    fn mark_boilerplate(&mut self, use_hints: bool) {
        let total = self.chars.first().copied().unwrap_or(0);
        for i in 0..self.len() {
            let p_boiler = self.parent_of(i).is_some_and(|p| self.boiler[p]);
            let bad = match &self.items[i] {
                Item::Element { kind, el } => {
                    let minor = self.chars[i] * 2 < total;
                    (*kind == Kind::Furniture && minor)
                        || hidden(el)
                        || (use_hints && self.hint[i] == Hint::Negative && minor)
                }
                _ => false,
            };
            self.self_boiler[i] = bad;
            self.boiler[i] = p_boiler || bad;
        }
    }

    fn link_density(&self, i: usize) -> f32 {
        if self.chars[i] == 0 {
            0.0
        } else {
            self.link_chars[i] as f32 / self.chars[i] as f32
        }
    }

    /// Step 1 and 2: block scores propagated to ancestors, then scaled by link
    /// density and hints. Returns the candidates (elements that received a score).
    fn score(&mut self) -> Vec<usize> {
        let n = self.len();
        let mut candidates = Vec::new();
        let mut touched = vec![false; n];
        for i in 0..n {
            let Some(kind) = self.kind(i) else { continue };
            if self.boiler[i] || matches!(kind, Kind::Inline | Kind::Link | Kind::Br | Kind::Skip) {
                continue;
            }
            let text = self.own_chars[i].saturating_sub(self.own_link_chars[i]);
            if text < MIN_BLOCK_CHARS {
                continue;
            }
            let points = 1.0 + self.own_commas[i] as f32 + (text as f32 / 100.0).min(3.0);
            // A paragraph's score goes to its container; a container's own loose text
            // counts as a paragraph inside it.
            let first = match kind {
                Kind::Container => Some(i),
                _ => self.parent_of(i),
            };
            let mut at = first;
            for level in 0..5 {
                let Some(a) = at else { break };
                if !touched[a] {
                    touched[a] = true;
                    candidates.push(a);
                    self.score[a] += self.base_score(a);
                }
                let divisor = match level {
                    0 => 1.0,
                    1 => 2.0,
                    l => l as f32 * 3.0,
                };
                self.score[a] += points / divisor;
                at = self.parent_of(a);
            }
        }
        for &c in &candidates {
            self.score[c] *= 1.0 - self.link_density(c);
        }
        candidates
    }

    fn base_score(&self, i: usize) -> f32 {
        let Item::Element { kind, el } = &self.items[i] else {
            return 0.0;
        };
        let by_tag = match (kind, el.name()) {
            (_, "article") => 10.0,
            (_, "div" | "main") => 5.0,
            (_, "pre" | "td" | "blockquote") => 3.0,
            (_, "ol" | "ul" | "dl" | "dd" | "dt" | "li" | "address" | "form") => -3.0,
            (Kind::Heading, _) | (_, "th") => -5.0,
            _ => 0.0,
        };
        let by_hint = match self.hint[i] {
            Hint::Positive => 25.0,
            Hint::Negative => -25.0,
            Hint::Neutral => 0.0,
        };
        let by_attr = if el
            .attr("itemprop")
            .is_some_and(|v| v.contains("articleBody"))
        {
            50.0
        } else {
            0.0
        };
        by_tag + by_hint + by_attr
    }

    fn is_ancestor(&self, a: usize, d: usize) -> bool {
        a <= d && d < self.end[a] as usize
    }
}

/// Non-whitespace characters and commas of a text node.
fn count_chars(text: &str) -> (u32, u32) {
    let mut chars = 0u32;
    let mut commas = 0u32;
    for c in text.chars() {
        if !c.is_whitespace() {
            chars += 1;
            if matches!(c, ',' | '，' | '、') {
                commas += 1;
            }
        }
    }
    (chars, commas)
}

fn hidden(el: &Element) -> bool {
    if el.attr("hidden").is_some() || el.attr("aria-hidden") == Some("true") {
        return true;
    }
    if matches!(
        el.attr("role"),
        Some(
            "navigation"
                | "banner"
                | "contentinfo"
                | "complementary"
                | "menu"
                | "menubar"
                | "dialog"
                | "alert"
        )
    ) {
        return true;
    }
    el.attr("style").is_some_and(|style| {
        let style: String = style
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        style.contains("display:none") || style.contains("visibility:hidden")
    })
}

/// Extracts the main text of a parsed document.
pub fn main_text(doc: &Html) -> String {
    let mut dom = Dom::flatten(doc);
    dom.measure();
    let mut candidates = dom.score();
    if candidates.is_empty() {
        // Class words hid every paragraph (`<div class="article modal-enabled">`):
        // judge by tags and visibility alone.
        dom.mark_boilerplate(false);
        dom.score.iter_mut().for_each(|s| *s = 0.0);
        candidates = dom.score();
    }
    let body = (0..dom.len())
        .find(|&i| matches!(&dom.items[i], Item::Element { el, .. } if el.name() == "body"))
        .unwrap_or(0);
    let Some(&top) = candidates
        .iter()
        .max_by(|&&a, &&b| dom.score[a].total_cmp(&dom.score[b]).then(b.cmp(&a)))
    else {
        return Printer::new(&dom, None).print_ranges(&[(body, dom.end[body] as usize)]);
    };
    let top = widen(&dom, &candidates, top);
    let ranges = with_siblings(&dom, top);
    let text = Printer::new(&dom, Some(top)).print_ranges(&ranges);
    if text.is_empty() {
        Printer::new(&dom, None).print_ranges(&[(body, dom.end[body] as usize)])
    } else {
        text
    }
}

/// Step 2's widening: an article split into several scored parts (by ads or
/// "read more" boxes) is taken as a whole.
fn widen(dom: &Dom, candidates: &[usize], top: usize) -> usize {
    let top_score = dom.score[top];
    // Several near-best candidates under one ancestor: take the ancestor.
    let mut close: Vec<usize> = candidates
        .iter()
        .copied()
        .filter(|&c| c != top && dom.score[c] >= 0.75 * top_score)
        .collect();
    close.sort_by(|&a, &b| dom.score[b].total_cmp(&dom.score[a]));
    close.truncate(5);
    let mut best = top;
    if close.len() >= 2 {
        let mut at = dom.parent_of(top);
        while let Some(a) = at {
            if matches!(&dom.items[a], Item::Element { el, .. } if matches!(el.name(), "body" | "html"))
            {
                break;
            }
            let inside = close.iter().filter(|&&c| dom.is_ancestor(a, c)).count();
            if inside >= 2 {
                best = a;
                break;
            }
            at = dom.parent_of(a);
        }
    }
    // Climb while the parent keeps most of the score.
    let mut last = dom.score[best];
    let mut at = dom.parent_of(best);
    while let Some(a) = at {
        if matches!(&dom.items[a], Item::Element { el, .. } if matches!(el.name(), "body" | "html"))
        {
            break;
        }
        let s = dom.score[a];
        if s == 0.0 {
            at = dom.parent_of(a);
            continue;
        }
        if s < last / 3.0 {
            break;
        }
        if s > last {
            best = a;
            break;
        }
        last = s;
        at = dom.parent_of(a);
    }
    best
}

/// Step 3: the article and those of its siblings that belong to it, as index ranges
/// in document order.
fn with_siblings(dom: &Dom, top: usize) -> Vec<(usize, usize)> {
    let Some(parent) = dom.parent_of(top) else {
        return vec![(top, dom.end[top] as usize)];
    };
    let top_score = dom.score[top];
    let threshold = (top_score * 0.2).max(10.0);
    let top_class = match &dom.items[top] {
        Item::Element { el, .. } => el.attr("class"),
        _ => None,
    };
    let mut ranges = Vec::new();
    let mut i = parent + 1;
    while i < dom.end[parent] as usize {
        let next = dom.end[i] as usize;
        let keep = if i == top {
            true
        } else if dom.boiler[i] {
            false
        } else {
            match &dom.items[i] {
                Item::Element { kind, el } => {
                    let bonus = if top_class.is_some() && el.attr("class") == top_class {
                        top_score * 0.2
                    } else {
                        0.0
                    };
                    let text = dom.chars[i];
                    let density = dom.link_density(i);
                    dom.score[i] + bonus >= threshold
                        || (matches!(kind, Kind::Para | Kind::Quote) && text > 70 && density < 0.25)
                }
                _ => false,
            }
        };
        if keep {
            ranges.push((i, next));
        }
        i = next;
    }
    ranges
}

/// Step 4: prints chosen subtrees one block per line.
struct Printer<'d, 'a> {
    dom: &'d Dom<'a>,
    /// The article element: boilerplate hints are not trusted on its ancestors.
    top: Option<usize>,
    lines: Vec<String>,
    current: String,
    in_pre: usize,
    in_quote: usize,
}

impl<'d, 'a> Printer<'d, 'a> {
    fn new(dom: &'d Dom<'a>, top: Option<usize>) -> Self {
        Printer {
            dom,
            top,
            lines: Vec::new(),
            current: String::new(),
            in_pre: 0,
            in_quote: 0,
        }
    }

    fn print_ranges(mut self, ranges: &[(usize, usize)]) -> String {
        for &(start, stop) in ranges {
            self.print(start, stop);
        }
        trim_call_to_action_tail(&mut self.lines);
        let mut out = String::new();
        for line in &self.lines {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(line);
        }
        out
    }

    /// Whether the subtree at `i` is left out of the text.
    fn drop(&self, i: usize) -> bool {
        let dom = self.dom;
        let Item::Element { kind, .. } = &dom.items[i] else {
            return false;
        };
        if *kind == Kind::Skip {
            return true;
        }
        if self.top.is_some_and(|t| dom.is_ancestor(i, t)) {
            return false;
        }
        if dom.self_boiler[i] {
            return true;
        }
        // Link lists and link-heavy boxes inside the article ("Related", "More on").
        match kind {
            Kind::Container | Kind::Para => {
                let density = dom.link_density(i);
                let text = dom.chars[i];
                let is_list = matches!(&dom.items[i], Item::Element { el, .. } if matches!(el.name(), "ul" | "ol" | "dl"));
                (is_list && density > 0.5)
                    || (*kind == Kind::Container && density > 0.5 && text < 600)
                    || (*kind == Kind::Para && density > 0.8 && text < 200 && text > 0)
            }
            // A cluster of links inside a sentence: a hover card of related headlines.
            Kind::Inline => dom.links[i] >= 3 && dom.link_density(i) > 0.9,
            _ => false,
        }
    }

    fn print(&mut self, start: usize, stop: usize) {
        let dom = self.dom;
        // Open elements: (end index, kind).
        let mut open: Vec<(usize, Kind)> = Vec::new();
        let mut i = start;
        while i < stop {
            while let Some(&(end, kind)) = open.last() {
                if end > i {
                    break;
                }
                open.pop();
                self.close(kind);
            }
            match &dom.items[i] {
                Item::Text(t) => {
                    self.current.push_str(t);
                    i += 1;
                }
                Item::Element { kind, .. } => {
                    if self.drop(i) {
                        i = dom.end[i] as usize;
                        continue;
                    }
                    match kind {
                        Kind::Br => self.flush(),
                        Kind::Cell => self.current.push(' '),
                        Kind::Inline | Kind::Link | Kind::Skip => {}
                        Kind::Pre => {
                            self.flush();
                            self.in_pre += 1;
                        }
                        Kind::Quote => {
                            self.flush();
                            self.in_quote += 1;
                        }
                        _ => self.flush(),
                    }
                    open.push((dom.end[i] as usize, *kind));
                    i += 1;
                }
                Item::Other => i += 1,
            }
        }
        while let Some((_, kind)) = open.pop() {
            self.close(kind);
        }
        self.flush();
    }

    fn close(&mut self, kind: Kind) {
        match kind {
            Kind::Inline | Kind::Link | Kind::Br | Kind::Skip => {}
            Kind::Cell => self.current.push(' '),
            Kind::Pre => {
                self.flush();
                self.in_pre = self.in_pre.saturating_sub(1);
            }
            Kind::Quote => {
                self.flush();
                self.in_quote = self.in_quote.saturating_sub(1);
            }
            _ => self.flush(),
        }
    }

    fn flush(&mut self) {
        if self.current.is_empty() {
            return;
        }
        if self.in_pre > 0 {
            for line in self.current.lines() {
                let line: String = line
                    .trim_end()
                    .chars()
                    .filter(|&c| c == '\t' || !(c.is_control() || is_invisible(c)))
                    .collect();
                if !line.trim().is_empty() {
                    self.lines.push(line);
                }
            }
        } else {
            let line = clean_inline(&self.current);
            if !line.is_empty() && (self.in_quote > 0 || !is_filler(&line)) {
                self.lines.push(line);
            }
        }
        self.current.clear();
    }
}
