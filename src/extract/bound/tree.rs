//! The tree-building half of [`super`]'s pass: a model of html5ever's stack of open
//! elements and list of active formatting elements (scopes, implied end tags, tables
//! and lists, foreign content, reconstruction, the adoption agency), charging each
//! step of the parser's list scans against the caps.

use super::tags::*;
use super::*;

impl<'a> Pass<'a> {
    /// Open elements as the parser counts them.
    pub(super) fn depth(&self) -> usize {
        self.stack.len() - self.dead
    }

    pub(super) fn top(&self) -> Option<&Open> {
        self.stack.last()
    }

    pub(super) fn top_ns(&self) -> Ns {
        self.top().map_or(Ns::Html, |o| o.ns)
    }

    /// The topmost open position of `id`.
    pub(super) fn topmost(&self, id: Id) -> Option<u32> {
        self.open.get(id as usize).and_then(|v| v.last().copied())
    }

    /// Whether the element at `pos` is in scope given the floor of the current node
    /// (`floor` picks which floor).
    pub(super) fn in_scope(&self, pos: u32, floor: fn(&Open) -> u32) -> bool {
        self.top().is_some_and(|top| floor(top) <= pos + 1)
    }

    /// Adds `steps` to the parser's work; false (and the page cut at `at`) past the cap.
    pub(super) fn charge(&mut self, steps: usize, at: usize) -> bool {
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

    pub(super) fn note_elements(&mut self, weight: usize, at: usize) -> bool {
        if self.elements + weight > MAX_ELEMENTS {
            self.cut = Some((at, TruncationReason::Elements));
            return false;
        }
        self.elements += weight;
        true
    }

    /// Pushes an element; false (nothing pushed) when the stack is full.
    pub(super) fn push(&mut self, id: Id, ns: Ns) -> bool {
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
    pub(super) fn pop_to(&mut self, pos: u32) {
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
    pub(super) fn bury(&mut self, pos: u32, counted: bool) {
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

    pub(super) fn clear_list_to_marker(&mut self) {
        while let Some(e) = self.list.pop() {
            match e {
                Entry::Marker => break,
                Entry::Element { .. } => self.list_elements -= 1,
            }
        }
    }

    pub(super) fn remove_entry(&mut self, index: usize) {
        if let Entry::Element { .. } = self.list.remove(index) {
            self.list_elements -= 1;
        }
    }

    /// Index of the last list entry of `id` after the last marker.
    pub(super) fn last_entry(&self, id: Id) -> Option<usize> {
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
    pub(super) fn reconstruct(&mut self, at: usize) {
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
    pub(super) fn text(&mut self, at: usize) {
        // The parser looks for the last formatting entry on the stack.
        if !self.list.is_empty() && !self.charge(self.depth(), at) {
            return;
        }
        if matches!(self.list.last(), Some(Entry::Element { pos: NONE, .. })) {
            self.reconstruct(at);
        }
    }

    /// Trims attributes past the cap from the output.
    pub(super) fn trim_attributes(&mut self, tag: &Tag) {
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
    pub(super) fn push_tag(&mut self, tag: &Tag, ns: Ns) -> bool {
        if self.push(tag.id, ns) {
            self.trim_attributes(tag);
            true
        } else {
            self.drop_start_tag(tag, TruncationReason::Nesting);
            false
        }
    }

    pub(super) fn start_tag(&mut self, tag: Tag) -> usize {
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

    pub(super) fn pop_if_top(&mut self, id: Id) {
        if self.top().is_some_and(|o| o.id == id) {
            self.pop_to(self.stack.len() as u32 - 1);
        }
    }

    /// "If the stack has a `p` element in button scope, close a `p` element."
    pub(super) fn close_p(&mut self) {
        if let Some(pos) = self.topmost(self.ids.p)
            && self.in_scope(pos, |o| o.narrow)
        {
            self.pop_to(pos);
        }
    }

    /// The `<li>` / `<dd>` / `<dt>` rule: walk down from the current node; an element
    /// of `names` is closed; a special element other than address, div and p stops
    /// the walk. The model looks at most 16 elements deep (stopping is the safe side).
    pub(super) fn close_list_item(&mut self, names: &[Id]) {
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
    pub(super) fn open_table(&self) -> Option<u32> {
        self.topmost(self.ids.table)
            .filter(|&pos| self.in_scope(pos, |o| o.table))
    }

    /// Table parts outside a table are ignored by the parser. Inside one, the parser
    /// clears the stack back to the right table context and adds an implied `tbody`
    /// and `tr` where they are missing.
    pub(super) fn table_part(&mut self, tag: &Tag) {
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
    pub(super) fn implied(&mut self, id: Id, at: usize) {
        if self.note_elements(1, at) {
            // With a full stack the model leaves it out; the parser's stack is then
            // shorter than the model's by the tags dropped so far, at least one.
            let _ = self.push(id, Ns::Html);
        }
    }

    pub(super) fn formatting_start(&mut self, tag: &Tag) {
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
    pub(super) fn noahs_ark(&mut self, tag: &Tag) {
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
    pub(super) fn adoption_agency(&mut self, id: Id, at: usize) -> bool {
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

    pub(super) fn end_tag(&mut self, tag: &Tag) {
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
    pub(super) fn any_other_end_tag(&mut self, id: Id) {
        if let Some(pos) = self.topmost(id)
            && self.in_scope(pos, |o| o.special)
        {
            self.pop_to(pos);
        }
    }
}
