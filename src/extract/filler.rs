//! Lines of page furniture the main-text printer drops: known filler lines
//! ("Advertisement", "Read more"), date stamps and bylines, and the appeals to
//! subscribe, follow or share that close many articles. Functions of a line's text
//! alone, apart from the DOM walk that finds the article ([`super::main_text`]).

/// Lines that are page furniture wherever they appear.
const FILLER_LINES: &[&str] = &[
    "advertisement",
    "advertisements",
    "advert",
    "comments",
    "comment",
    "this slideshow requires javascript",
    "loading",
    "continue reading the main story",
    "continue reading below",
    "story continues below advertisement",
    "article continues below advertisement",
    "skip advertisement",
    "supported by",
    "read more",
    "share this article",
    "share",
    "related",
];

/// Phrases of the appeals that close many articles ("Subscribe to our newsletter",
/// "Follow us on Twitter", "Click here to ..."), matched lower-cased.
const CALL_TO_ACTION: &[&str] = &[
    "subscribe",
    "sign up",
    "newsletter",
    "follow us",
    "follow him",
    "follow her",
    "follow them",
    "click here",
    "share this",
    "share it",
    "like this story",
    "join our",
    "have a tip",
    "got a tip",
    "all rights reserved",
];

/// The longest closing line taken for an appeal rather than a paragraph.
const MAX_CALL_TO_ACTION_CHARS: usize = 250;

/// Drops the appeals to subscribe / follow / share that end an article (at most
/// three lines, and only at the very end: the same words inside the story stay).
pub(super) fn trim_call_to_action_tail(lines: &mut Vec<String>) {
    for _ in 0..3 {
        let Some(last) = lines.last() else { return };
        if last.len() > MAX_CALL_TO_ACTION_CHARS {
            return;
        }
        let lower = last.to_lowercase();
        if !CALL_TO_ACTION.iter().any(|p| lower.contains(p)) {
            return;
        }
        lines.pop();
    }
}

/// Whether a printed line is page furniture: a known filler line, a tag list or a
/// date stamp (lines over 120 bytes never are).
pub(super) fn is_filler(line: &str) -> bool {
    if line.len() > 120 {
        return false;
    }
    let lower = line.trim_end_matches([':', '.', '!']).to_lowercase();
    FILLER_LINES.contains(&lower.as_str())
        || lower.starts_with("tags:")
        || lower.starts_with("tagged:")
        || is_dateline(&line.to_lowercase())
}

const MONTHS: &[&str] = &[
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// A short line that is a date stamp or a byline with a date ("Wednesday 20 November
/// 2019 9:22 am", "By A. Writer - 11/18/19 11:04 PM EST", "Updated: 2019-11-20"):
/// at most 10 words, no sentence end, and a date (a year next to a month name, a
/// numeric date or a clock time next to a year, a month or a word such as "by" or
/// "updated").
fn is_dateline(lower: &str) -> bool {
    let words: Vec<&str> = lower.split_whitespace().collect();
    if words.is_empty() || words.len() > 10 || lower.ends_with(['.', '?', '!', '"', '”']) {
        return false;
    }
    let has_year = words.iter().any(|w| {
        let digits = w.trim_matches(|c: char| !c.is_ascii_digit());
        digits.len() == 4 && (digits.starts_with("19") || digits.starts_with("20"))
    });
    let has_month = words.iter().any(|w| {
        let w = w.trim_matches(|c: char| !c.is_alphabetic());
        w.len() >= 3 && MONTHS.iter().any(|m| w.starts_with(m)) && w.len() <= 9
    });
    let numeric_date = words.iter().any(|w| {
        let parts: Vec<&str> = w.split(['/', '-', '.']).collect();
        parts.len() == 3
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.len() <= 4 && p.chars().all(|c| c.is_ascii_digit()))
    });
    let clock = words.iter().any(|w| {
        let (h, m) = w.split_once(':').unwrap_or(("", ""));
        !h.is_empty()
            && h.len() <= 2
            && h.chars().all(|c| c.is_ascii_digit())
            && m.len() >= 2
            && m.chars().take(2).all(|c| c.is_ascii_digit())
    });
    let marker = words.iter().any(|w| {
        matches!(
            w.trim_matches(|c: char| !c.is_alphabetic()),
            "by" | "updated" | "published" | "posted" | "am" | "pm" | "last" | "modified"
        )
    });
    (has_year && has_month) || ((numeric_date || clock) && (marker || has_year || has_month))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datelines_and_fillers() {
        assert!(is_filler("Wednesday 20 November 2019 9:22 am"));
        assert!(is_filler("By Justine Coleman - 11/18/19 11:04 PM EST"));
        assert!(is_filler("By admin - 2018-09-16"));
        assert!(is_filler("Advertisement"));
        assert!(is_filler("Tags: Alibaba"));
        assert!(!is_filler("ISO 8601 2024-03-01"));
        assert!(!is_filler("Construction starts in March 2024."));
        assert!(!is_filler(
            "Comments from readers were mostly positive about the plan"
        ));
    }

    #[test]
    fn closing_appeals_are_trimmed_only_at_the_end() {
        let mut lines: Vec<String> = [
            "Readers can subscribe to the council's agenda by post.",
            "The vote is on Monday.",
            "Follow us on Twitter for more.",
            "Subscribe to our newsletter.",
        ]
        .map(String::from)
        .to_vec();
        trim_call_to_action_tail(&mut lines);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1], "The vote is on Monday.");
    }
}
