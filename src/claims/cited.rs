//! Reading an answer from another AI tool (`ground check --cited`): its sentences
//! with `[n]` markers, and its numbered list of sources, in the forms Perplexity,
//! ChatGPT search and Gemini export: lines `[1] https://...` (also `[1]: https://...`
//! and `[^1]: https://...`), `1. https://...` (also `1. Title - https://...` and
//! `1. [Title](https://...)`), and markdown links `[1](https://...)` anywhere.
//!
//! Every limit is checked while reading, before anything is kept beyond it: the
//! input's bytes ([`super::MAX_INPUT_BYTES`]), the sources listed
//! ([`super::MAX_CITED_URLS`]), the markers of one sentence and the cited sentences
//! ([`super::MAX_CITED_CLAIMS`]). Only sentences with a marker are claims: an
//! answer's "Here is what I found:" cites nothing and is not checked.

use super::sentences::sentences;
use super::{ClaimsError, MAX_CITED_CLAIMS, MAX_CITED_URLS, MAX_INPUT_BYTES};

/// A sentence of the answer and the sources it cites.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CitedClaim {
    /// The sentence without its markers.
    pub text: String,
    /// The source numbers its markers name, in order, each once.
    pub cited: Vec<usize>,
}

/// An answer as read: its cited sentences and its numbered sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CitedAnswer {
    /// The sentences with at least one marker, in order.
    pub claims: Vec<CitedClaim>,
    /// The sources by the answer's own numbers, in the order listed (the first
    /// naming of a number wins), each an http(s) URL.
    pub sources: Vec<(usize, String)>,
}

/// Reads `text` (see the module's documentation).
pub fn parse(text: &str) -> Result<CitedAnswer, ClaimsError> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(ClaimsError::TooLarge { bytes: text.len() });
    }
    let mut sources: Vec<(usize, String)> = Vec::new();
    let mut body = String::with_capacity(text.len());
    let mut listed = 0usize;
    for line in text.lines() {
        match source_line(line.trim()) {
            Some((n, url)) => {
                listed += 1;
                if listed > MAX_CITED_URLS {
                    return Err(ClaimsError::TooManyUrls);
                }
                if !sources.iter().any(|(m, _)| *m == n) {
                    sources.push((n, url));
                }
            }
            None => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    let (found, named) = sentences(&body)?;
    for (n, url) in named {
        if !sources.iter().any(|(m, _)| *m == n) {
            listed += 1;
            if listed > MAX_CITED_URLS {
                return Err(ClaimsError::TooManyUrls);
            }
            sources.push((n, url));
        }
    }
    let mut claims = Vec::new();
    for sentence in found.into_iter().filter(|s| !s.markers.is_empty()) {
        if claims.len() == MAX_CITED_CLAIMS {
            return Err(ClaimsError::TooManyClaims {
                max: MAX_CITED_CLAIMS,
            });
        }
        claims.push(CitedClaim {
            text: sentence.text,
            cited: sentence.markers,
        });
    }
    if claims.is_empty() {
        return Err(ClaimsError::NothingCited);
    }
    Ok(CitedAnswer { claims, sources })
}

/// A line of the list of sources: its number and URL.
fn source_line(line: &str) -> Option<(usize, String)> {
    // `[1] https://...`, `[1]: https://...`, `[^1]: https://...`, and
    // `[1](https://...) Title` at the start of a line.
    if let Some(rest) = line.strip_prefix('[') {
        let rest = rest.strip_prefix('^').unwrap_or(rest);
        let (digits, rest) = leading_number(rest)?;
        let rest = rest.strip_prefix(']')?;
        if let Some(link) = rest.strip_prefix('(') {
            let url = first_url(link)?;
            return link.starts_with(url.as_str()).then_some((digits, url));
        }
        let rest = rest.strip_prefix(':').unwrap_or(rest);
        if !rest.starts_with(char::is_whitespace) {
            return None;
        }
        return first_url(rest).map(|url| (digits, url));
    }
    // `1. https://...`, `1) https://...`, `1. [Title](https://...)`, `1. Title -
    // https://...` (the URL last).
    let (digits, rest) = leading_number(line)?;
    let rest = rest
        .strip_prefix(". ")
        .or_else(|| rest.strip_prefix(") "))?
        .trim();
    let url = first_url(rest)?;
    let starts = rest.starts_with(url.as_str())
        || rest.starts_with(&format!("<{url}"))
        || (rest.starts_with('[') && rest.contains(&format!("]({url}")));
    let ends = rest
        .split_whitespace()
        .last()
        .is_some_and(|last| last.trim_matches(['<', '>', '(', ')']) == url);
    (starts || ends).then_some((digits, url))
}

/// A number of one to four digits at the start of `text`, and the rest.
fn leading_number(text: &str) -> Option<(usize, &str)> {
    let len = text.chars().take_while(char::is_ascii_digit).count();
    if !(1..=4).contains(&len) {
        return None;
    }
    let n: usize = text[..len].parse().ok().filter(|n| *n > 0)?;
    Some((n, &text[len..]))
}

/// The first http(s) URL in `text`, up to a space, `)`, `>`, `]` or a quote mark.
fn first_url(text: &str) -> Option<String> {
    let at = text.find("https://").or_else(|| text.find("http://"))?;
    let url: String = text[at..]
        .chars()
        .take_while(|c| !c.is_whitespace() && !matches!(c, ')' | '>' | ']' | '"' | '\''))
        .collect();
    let url = url.trim_end_matches(['.', ',', ';']).to_string();
    url::Url::parse(&url).ok().map(|_| url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_list_forms_are_read() {
        let answer = parse(
            "The lighthouse was first lit on 14 October 1911 [1][2]. It stands on the cape [3].\n\
             Its lens came from Paris [4](https://d.org/lens).\n\
             \n\
             Sources:\n\
             [1] https://a.org/one\n\
             2. Varnholm history - https://b.org/two\n\
             [3](https://c.org/three) Lighthouses of the north\n",
        )
        .unwrap();
        assert_eq!(
            answer.sources,
            [
                (1, "https://a.org/one".to_string()),
                (2, "https://b.org/two".to_string()),
                (3, "https://c.org/three".to_string()),
                (4, "https://d.org/lens".to_string()),
            ]
        );
        assert_eq!(
            answer.claims,
            [
                CitedClaim {
                    text: "The lighthouse was first lit on 14 October 1911.".into(),
                    cited: vec![1, 2]
                },
                CitedClaim {
                    text: "It stands on the cape.".into(),
                    cited: vec![3]
                },
                CitedClaim {
                    text: "Its lens came from Paris.".into(),
                    cited: vec![4]
                },
            ]
        );
    }

    #[test]
    fn other_list_spellings_and_what_is_not_a_list_line() {
        assert_eq!(
            source_line("[1]: https://a.org/x"),
            Some((1, "https://a.org/x".into()))
        );
        assert_eq!(
            source_line("[^2]: https://a.org/y"),
            Some((2, "https://a.org/y".into()))
        );
        assert_eq!(
            source_line("3) <https://a.org/z>"),
            Some((3, "https://a.org/z".into()))
        );
        assert_eq!(
            source_line("4. [A title](https://a.org/w)"),
            Some((4, "https://a.org/w".into()))
        );
        // A numbered sentence mentioning a URL in its middle is body text.
        assert_eq!(
            source_line("1. See https://a.org/ for the full story."),
            None
        );
        assert_eq!(source_line("[1] no address here"), None);
        assert_eq!(source_line("[12345] https://a.org/"), None);
    }

    #[test]
    fn hostile_input_is_refused_at_its_cap() {
        let huge = "a".repeat(MAX_INPUT_BYTES + 1);
        assert_eq!(
            parse(&huge),
            Err(ClaimsError::TooLarge { bytes: huge.len() })
        );
        let urls: String = (1..=MAX_CITED_URLS + 1)
            .map(|n| format!("[{n}] https://a.org/{n}\n"))
            .collect();
        assert_eq!(
            parse(&format!("A claim [1].\n{urls}")),
            Err(ClaimsError::TooManyUrls)
        );
        let many: String = (0..=MAX_CITED_CLAIMS).map(|_| "A claim [1]. ").collect();
        assert_eq!(
            parse(&many),
            Err(ClaimsError::TooManyClaims {
                max: MAX_CITED_CLAIMS
            })
        );
        assert_eq!(parse("Nothing cited here."), Err(ClaimsError::NothingCited));
    }
}
