//! A document cut into passages, each with the lines it spans (1-based, inclusive),
//! the unit that is indexed, found and cited as `path:line`.
//!
//! A passage ends at a blank line once it holds [`TARGET_CHARS`], before a heading,
//! or at any line once it holds [`MAX_CHARS`]; so passages follow paragraphs and
//! sections, and a search hit points at a few lines, not at a whole file.

/// A passage ends at the next blank line after this many characters.
pub const TARGET_CHARS: usize = 600;
/// A passage ends at the next line after this many characters, blank or not.
pub const MAX_CHARS: usize = 1500;
/// Most characters of one passage indexed (a minified line is one long line).
pub const MAX_INDEXED_CHARS: usize = 8000;

/// One passage of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    /// First line, 1-based.
    pub line_start: u64,
    /// Last line, inclusive.
    pub line_end: u64,
    /// The lines' text, joined by newlines (at most [`MAX_INDEXED_CHARS`]).
    pub text: String,
}

/// Cuts `text` into passages; blank-only stretches belong to none.
pub fn split(text: &str) -> Vec<Passage> {
    let mut passages = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut start = 0u64;
    let mut chars = 0usize;
    let flush = |current: &mut Vec<&str>, start: u64, passages: &mut Vec<Passage>| {
        while current.last().is_some_and(|l| l.trim().is_empty()) {
            current.pop();
        }
        if current.is_empty() {
            return;
        }
        let end = start + current.len() as u64 - 1;
        let joined = current.join("\n");
        let text = crate::text::cut_bytes(&joined, MAX_INDEXED_CHARS).to_string();
        passages.push(Passage {
            line_start: start,
            line_end: end,
            text,
        });
        current.clear();
    };
    for (i, line) in text.lines().enumerate() {
        let number = i as u64 + 1;
        let blank = line.trim().is_empty();
        if current.is_empty() {
            if blank {
                continue;
            }
            start = number;
            chars = 0;
        } else if (blank && chars >= TARGET_CHARS) || (is_heading(line) && chars > 0) {
            flush(&mut current, start, &mut passages);
            chars = 0;
            if blank {
                continue;
            }
            start = number;
        }
        current.push(line);
        chars += line.len() + 1;
        if chars >= MAX_CHARS {
            flush(&mut current, start, &mut passages);
            chars = 0;
        }
    }
    flush(&mut current, start, &mut passages);
    passages
}

/// A Markdown heading (`# ...`): a new section starts a new passage.
fn is_heading(line: &str) -> bool {
    let rest = line.trim_start_matches('#');
    rest.len() < line.len() && line.len() - rest.len() <= 6 && rest.starts_with(' ')
}

/// Lines `start..=end` (1-based) of `text`, joined by newlines; empty when out of range.
pub fn lines(text: &str, start: u64, end: u64) -> String {
    let skip = start.saturating_sub(1) as usize;
    let take = (end.saturating_sub(start) as usize).saturating_add(1);
    text.lines()
        .skip(skip)
        .take(take)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text of the passage of `text` that spans lines `start..=end`, as [`split`]
/// cut it (its lines, at most [`MAX_INDEXED_CHARS`]): how a hit's text is read from
/// its file, since the index does not keep it.
pub fn passage_text(text: &str, start: u64, end: u64) -> String {
    crate::text::cut_bytes(&lines(text, start, end), MAX_INDEXED_CHARS).to_string()
}

/// The 1-based line of byte offset `at` in `text`.
pub fn line_of(text: &str, at: usize) -> u64 {
    let at = at.min(text.len());
    text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u64
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passages_keep_their_lines() {
        let text = "# Title\n\nfirst para\nstill first\n\n# Next\nsecond\n";
        let got = split(text);
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].line_start, got[0].line_end), (1, 4));
        assert_eq!(got[0].text, "# Title\n\nfirst para\nstill first");
        assert_eq!((got[1].line_start, got[1].line_end), (6, 7));
        assert_eq!(lines(text, 6, 7), "# Next\nsecond");
        assert_eq!(line_of(text, text.find("second").unwrap()), 7);
    }

    #[test]
    fn a_passage_reads_back_whole_from_its_lines() {
        let long_line = "x".repeat(MAX_INDEXED_CHARS + 500);
        let texts = [
            "# Title\n\nfirst para\nstill first\n\n# Next\nsecond\n".to_string(),
            "windows\r\nline ends\r\n\r\n# Heading\r\nbody\r\n".to_string(),
            format!("{}\n\n{}", "word ".repeat(200), "abcdefghij\n".repeat(300)),
            format!("short\n{long_line}\nafter\n"),
            "  \n\n  indented  \n\n\n".to_string(),
        ];
        for text in &texts {
            let cut = split(text);
            assert!(!cut.is_empty(), "{text:?}");
            for p in cut {
                assert_eq!(
                    passage_text(text, p.line_start, p.line_end),
                    p.text,
                    "{text:?}"
                );
            }
        }
    }

    #[test]
    fn long_text_is_cut_at_blank_lines() {
        let para = "word ".repeat(150); // 750 chars
        let text = format!("{para}\n\n{para}\n\n{para}\n");
        let got = split(&text);
        assert_eq!(got.len(), 3);
        assert_eq!((got[1].line_start, got[1].line_end), (3, 3));
        assert_eq!((got[2].line_start, got[2].line_end), (5, 5));
    }

    #[test]
    fn a_wall_of_lines_is_cut_at_the_maximum() {
        let text = "abcdefghij\n".repeat(400); // 4400 chars, no blank line
        let got = split(&text);
        assert!(got.len() >= 3);
        assert!(got.iter().all(|p| p.text.len() <= MAX_CHARS + 11));
        assert_eq!(got.last().unwrap().line_end, 400);
    }
}
