//! The lexing half of [`super`]'s pass: what starts with `<` (tags, comments,
//! doctypes), raw text up to its end tag, and tag names interned, the way html5ever's
//! tokenizer reads them, so that the model sees the tags the parser will.

use super::tags::*;
use super::*;

impl<'a> Pass<'a> {
    /// Handles what starts with `<` at `lt`; returns where lexing goes on.
    pub(super) fn markup(&mut self, lt: usize) -> usize {
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
    pub(super) fn comment_end(&self, from: usize) -> usize {
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

    pub(super) fn to_gt(&self, from: usize) -> usize {
        self.html[from..]
            .find('>')
            .map_or(self.bytes.len(), |off| from + off + 1)
    }

    /// Lexes the tag at `lt` like the tokenizer's tag and attribute states. A tag cut
    /// off by the end of input comes back with `id == NONE`.
    pub(super) fn tag(&mut self, lt: usize, end_tag: bool) -> Tag {
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

    pub(super) fn flags_of(&self, id: Id) -> Flags {
        self.flags.get(id as usize).copied().unwrap_or(0)
    }

    /// The id of the tag name in `html[from..to]`, ASCII-lower-cased.
    pub(super) fn intern(&mut self, from: usize, to: usize) -> Id {
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
    pub(super) fn raw_text_end(&self, from: usize, name: &str) -> usize {
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
}
