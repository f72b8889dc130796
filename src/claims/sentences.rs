//! Cutting a text into sentences, each with the `[n]` citation markers that belong to
//! it: the claims of `ground check --file` and `--cited`.
//!
//! AI tools put markers before a sentence's end ("was lit in 1911 [1].") or after it
//! ("was lit in 1911.[1][2] The next..."); both belong to the sentence they follow.
//! A line ends a sentence too (bullets, headings). Markdown is read lightly: list
//! bullets, emphasis and links (`[text](url)` keeps its text) are dropped, and an
//! inline `[n](https://...)` is a marker that also names source n's URL.
//!
//! One pass over the text, each character looked at a bounded number of times, and
//! the markers of one sentence capped ([`super::MAX_MARKERS_PER_SENTENCE`]): a hostile
//! text costs time linear in its (capped) size and nothing more.

use super::{ClaimsError, MAX_MARKERS_PER_SENTENCE};

/// One sentence of the text: its words without markers or markdown, and the source
/// numbers its markers name, in order, each once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    /// The sentence, whitespace folded.
    pub text: String,
    /// The source numbers its `[n]` markers name.
    pub markers: Vec<usize>,
}

/// Words that end with a full stop without ending a sentence.
const ABBREVIATIONS: [&str; 12] = [
    "e.g", "i.e", "dr", "mr", "mrs", "ms", "st", "vs", "etc", "no", "u.s", "approx",
];

/// The largest number a marker may carry (a bigger one is text, not a marker).
const MAX_MARKER_NUMBER: usize = 9999;

/// Sources named inline by `[n](url)`: (n, url), the first naming of each number.
pub type Named = Vec<(usize, String)>;

/// The sentences of `text`, and the sources named inline (`[n](url)`, the first
/// naming of each number), in order.
pub fn sentences(text: &str) -> Result<(Vec<Sentence>, Named), ClaimsError> {
    let mut out: Vec<Sentence> = Vec::new();
    let mut named: Vec<(usize, String)> = Vec::new();
    for line in text.lines() {
        let line = strip_bullet(line.trim());
        let mut cutter = Cutter::default();
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '[' {
                if let Some((numbers, url, next)) = marker(&chars, i) {
                    cutter.mark(&numbers, &mut out)?;
                    if let Some(url) = url {
                        for n in numbers {
                            if !named.iter().any(|(m, _)| *m == n) {
                                named.push((n, url.clone()));
                            }
                        }
                    }
                    i = next;
                    continue;
                }
                if let Some((words, next)) = link(&chars, i) {
                    cutter.text.push_str(&words);
                    i = next;
                    continue;
                }
            }
            cutter.text.push(c);
            i += 1;
            if matches!(c, '.' | '!' | '?') && ends_sentence(&chars, i, &cutter.text) {
                // Markers right after the end (spaces between allowed) are this
                // sentence's.
                loop {
                    let mut j = i;
                    while j < chars.len() && chars[j] == ' ' {
                        j += 1;
                    }
                    match marker(&chars, j) {
                        Some((numbers, url, next)) => {
                            cutter.mark(&numbers, &mut out)?;
                            if let Some(url) = url {
                                for n in numbers {
                                    if !named.iter().any(|(m, _)| *m == n) {
                                        named.push((n, url.clone()));
                                    }
                                }
                            }
                            i = next;
                        }
                        None => break,
                    }
                }
                cutter.flush(&mut out);
            }
        }
        cutter.flush(&mut out);
    }
    Ok((out, named))
}

/// The sentence being cut.
#[derive(Default)]
struct Cutter {
    text: String,
    markers: Vec<usize>,
    /// Markers read for this sentence, repeats included (what the cap counts).
    read: usize,
}

impl Cutter {
    fn mark(&mut self, numbers: &[usize], out: &mut [Sentence]) -> Result<(), ClaimsError> {
        self.read += numbers.len();
        if self.read > MAX_MARKERS_PER_SENTENCE {
            let sentence = out.len() + 1;
            return Err(ClaimsError::TooManyMarkers { sentence });
        }
        for &n in numbers {
            if !self.markers.contains(&n) {
                self.markers.push(n);
            }
        }
        Ok(())
    }

    /// Ends the sentence: kept when it holds a letter; markers on their own (a line
    /// of only `[3]`) go to the sentence before.
    fn flush(&mut self, out: &mut Vec<Sentence>) {
        let text = clean(&self.text);
        let markers = std::mem::take(&mut self.markers);
        self.text.clear();
        self.read = 0;
        if text.chars().any(char::is_alphabetic) {
            out.push(Sentence { text, markers });
        } else if let Some(last) = out.last_mut() {
            for n in markers {
                if !last.markers.contains(&n) {
                    last.markers.push(n);
                }
            }
        }
    }
}

/// Whether a `.`, `!` or `?` just before `at` ends the sentence: the line ends, or a
/// space, a marker or a closing quote follows, and the word before it is no
/// abbreviation ("e.g.", "Dr.") or single initial.
fn ends_sentence(chars: &[char], at: usize, so_far: &str) -> bool {
    let next = chars.get(at).copied();
    if !matches!(next, None | Some(' ' | '[' | '"' | '\'' | ')' | '\u{201d}')) {
        return false;
    }
    let word = so_far
        .trim_end_matches(['.', '!', '?'])
        .rsplit(|c: char| c.is_whitespace() || c == '(')
        .next()
        .unwrap_or("")
        .to_lowercase();
    let initial = word.chars().count() == 1 && word.chars().all(char::is_alphabetic);
    !(so_far.ends_with('.') && (initial || ABBREVIATIONS.contains(&word.as_str())))
}

/// A citation marker at `at`: `[n]`, `[n, m]`, `[n][m]` is two; an inline markdown
/// link `[n](https://...)` is marker n naming its URL. Returns the numbers, the URL
/// and where the marker ends.
fn marker(chars: &[char], at: usize) -> Option<(Vec<usize>, Option<String>, usize)> {
    if chars.get(at) != Some(&'[') {
        return None;
    }
    let mut numbers = Vec::new();
    let mut j = at + 1;
    let mut digits = String::new();
    loop {
        let c = *chars.get(j)?;
        match c {
            '0'..='9' if digits.len() < 4 => digits.push(c),
            ',' | ' ' | ']' => {
                if !digits.is_empty() {
                    let n: usize = digits.parse().ok()?;
                    if n == 0 || n > MAX_MARKER_NUMBER {
                        return None;
                    }
                    numbers.push(n);
                    digits.clear();
                } else if c != ' ' {
                    return None;
                }
                if c == ']' {
                    break;
                }
            }
            _ => return None,
        }
        j += 1;
        // A marker is short: a long bracket is text.
        if j - at > 40 {
            return None;
        }
    }
    if numbers.is_empty() {
        return None;
    }
    j += 1;
    // `[n](url)`: the marker names its source.
    if numbers.len() == 1
        && chars.get(j) == Some(&'(')
        && let Some(close) = target_end(chars, j + 1)
    {
        let url: String = chars[j + 1..close].iter().collect();
        if url.starts_with("http://") || url.starts_with("https://") {
            return Some((numbers, Some(url), close + 1));
        }
    }
    Some((numbers, None, j))
}

/// Most characters of a link's target.
const MAX_TARGET_CHARS: usize = 2048;

/// Where a link's target starting at `from` ends: its `)`, before any space or `[`
/// (which no target holds) and within [`MAX_TARGET_CHARS`]. Stopping at the next `[`
/// keeps the reading linear: a text of `[a](` repeated is never scanned twice.
fn target_end(chars: &[char], from: usize) -> Option<usize> {
    (from..chars.len().min(from + MAX_TARGET_CHARS))
        .take_while(|&k| !chars[k].is_whitespace() && chars[k] != '[')
        .find(|&k| chars[k] == ')')
}

/// A markdown link `[text](target)` at `at`: its text and where it ends.
/// The text is looked for up to the next `[` (and within 512 characters), so each
/// character is scanned a bounded number of times however many `[` a text holds.
fn link(chars: &[char], at: usize) -> Option<(String, usize)> {
    let close = (at + 1..chars.len().min(at + 512))
        .take_while(|&k| chars[k] != '[')
        .find(|&k| chars[k] == ']')?;
    if chars.get(close + 1) != Some(&'(') {
        return None;
    }
    let end = target_end(chars, close + 2)?;
    Some((chars[at + 1..close].iter().collect(), end + 1))
}

/// A line without its list bullet, heading or quote mark ("- ", "* ", "## ", "> ",
/// "3. ").
fn strip_bullet(line: &str) -> &str {
    let line = line.trim_start_matches(['#', '>']).trim_start();
    for bullet in ["- ", "* ", "+ ", "\u{2022} "] {
        if let Some(rest) = line.strip_prefix(bullet) {
            return rest.trim_start();
        }
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if (1..=3).contains(&digits) {
        let rest = &line[digits..];
        if let Some(rest) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return rest.trim_start();
        }
    }
    line
}

/// A sentence's text without emphasis marks, whitespace folded, and no space left
/// before a punctuation mark where a marker was taken out ("1911 [2]." is "1911.").
fn clean(text: &str) -> String {
    let folded = text
        .replace("**", "")
        .replace("__", "")
        .replace('`', "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut out = String::with_capacity(folded.len());
    let mut chars = folded.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ' '
            && chars
                .peek()
                .is_some_and(|n| matches!(n, '.' | ',' | ';' | '!' | '?'))
        {
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str) -> Vec<(String, Vec<usize>)> {
        sentences(text)
            .unwrap()
            .0
            .into_iter()
            .map(|s| (s.text, s.markers))
            .collect()
    }

    #[test]
    fn markers_before_or_after_the_end_belong_to_the_sentence() {
        assert_eq!(
            cut(
                "It was first lit in 1911 [1]. It stands on the cape.[2][3] It is 3.5 m tall [2, 4]"
            ),
            [
                ("It was first lit in 1911.".to_string(), vec![1]),
                ("It stands on the cape.".to_string(), vec![2, 3]),
                ("It is 3.5 m tall".to_string(), vec![2, 4]),
            ]
        );
    }

    #[test]
    fn lines_bullets_links_and_abbreviations() {
        let (found, named) = sentences(
            "## Answer\n- **The tower** was designed by Dr. Mara Lindqvist, e.g. her [notes](https://x.org/n) say so. [1](https://a.org/one)\n[2]\n",
        )
        .unwrap();
        assert_eq!(
            found,
            [
                Sentence {
                    text: "Answer".into(),
                    markers: vec![]
                },
                Sentence {
                    text: "The tower was designed by Dr. Mara Lindqvist, e.g. her notes say so."
                        .into(),
                    markers: vec![1, 2]
                },
            ]
        );
        assert_eq!(named, [(1, "https://a.org/one".to_string())]);
    }

    #[test]
    fn too_many_markers_in_one_sentence_is_an_error_naming_it() {
        let text = format!("First one [1]. Second {}.", "[1]".repeat(5000));
        assert_eq!(
            sentences(&text),
            Err(ClaimsError::TooManyMarkers { sentence: 2 })
        );
        // A bracket that is no marker is text.
        assert_eq!(
            cut("Values [a, b] and [123456]."),
            [("Values [a, b] and [123456].".to_string(), vec![])]
        );
    }
}
