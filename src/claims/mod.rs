//! The claims `ground check` is given, read and bounded before any work is done:
//! claims one by one ([`plain`]), each sentence of a text (`--file`, [`of_text`]),
//! or another AI tool's cited answer (`--cited`, [`cited::parse`]).
//!
//! Pure functions of text (no client, no terminal, no flags), so every face (the
//! command line, MCP's `check_claims`) reads claims the same way and refuses the same
//! hostile input with the same one-line message ([`ClaimsError`]: what cap was hit,
//! and in its hint how to split the work).

pub mod cited;
mod sentences;

pub use cited::{CitedAnswer, CitedClaim};
pub use sentences::{Sentence, sentences};

/// Most bytes of text read as claims (a file, stdin, MCP's `cited_text`).
pub const MAX_INPUT_BYTES: usize = 256 * 1024;
/// Most claims searched in one run (`ground check "CLAIM"...`, `--file`): each costs a
/// search and the reading of its pages.
pub const MAX_CLAIMS: usize = 20;
/// Most cited sentences checked in one run (`--cited`): they cost no search.
pub const MAX_CITED_CLAIMS: usize = 100;
/// Most sources an answer may list (`--cited`): each is fetched.
pub const MAX_CITED_URLS: usize = 30;
/// Most `[n]` markers in one sentence.
pub const MAX_MARKERS_PER_SENTENCE: usize = 16;
/// Most characters of one claim.
pub const MAX_CLAIM_CHARS: usize = 1000;

/// Why the claims cannot be checked as given: each a usage error whose message names
/// the cap and whose [`ClaimsError::hint`] says how to split the work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimsError {
    /// No claim at all (empty text, or only whitespace).
    #[error("there is no claim to check")]
    Empty,
    /// A cited answer with no sentence carrying a `[n]` marker.
    #[error("the answer has no sentence with a [n] citation marker")]
    NothingCited,
    /// The text is over [`MAX_INPUT_BYTES`].
    #[error("the text is larger than {max} bytes, the most checked in one run", max = MAX_INPUT_BYTES)]
    TooLarge {
        /// Its size (at least; a reader stops just past the cap).
        bytes: usize,
    },
    /// More claims than one run checks.
    #[error("more than {max} claims in one run")]
    TooManyClaims {
        /// The cap: [`MAX_CLAIMS`] or [`MAX_CITED_CLAIMS`].
        max: usize,
    },
    /// A sentence with more than [`MAX_MARKERS_PER_SENTENCE`] markers.
    #[error("sentence {sentence} has more than {max} [n] citation markers", max = MAX_MARKERS_PER_SENTENCE)]
    TooManyMarkers {
        /// The sentence's place (1-based).
        sentence: usize,
    },
    /// More listed sources than [`MAX_CITED_URLS`].
    #[error("the answer lists more than {max} source URLs", max = MAX_CITED_URLS)]
    TooManyUrls,
    /// One claim over [`MAX_CLAIM_CHARS`].
    #[error("claim {claim} is longer than {max} characters", max = MAX_CLAIM_CHARS)]
    TooLong {
        /// The claim's place (1-based).
        claim: usize,
    },
}

impl ClaimsError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            ClaimsError::Empty => "give the claim as an argument, or a file with --file".into(),
            ClaimsError::NothingCited => {
                "--cited checks sentences with [n] markers against a numbered list of URLs; use --file to check every sentence by searching".into()
            }
            ClaimsError::TooLarge { .. } => {
                "split the text into parts and check each part on its own".into()
            }
            ClaimsError::TooManyClaims { max } => {
                format!("split the claims into runs of at most {max}")
            }
            ClaimsError::TooManyMarkers { .. } => {
                "a sentence cites a few sources; remove the extra markers or check the sentence on its own".into()
            }
            ClaimsError::TooManyUrls => format!(
                "split the answer into parts whose sources number at most {MAX_CITED_URLS}"
            ),
            ClaimsError::TooLong { .. } => {
                "a claim is one sentence; split it into shorter claims".into()
            }
        }
    }
}

/// Claims given one by one (arguments, MCP's `claims`): trimmed, the empty ones
/// dropped, at most [`MAX_CLAIMS`] of at most [`MAX_CLAIM_CHARS`] characters.
pub fn plain(claims: &[String]) -> Result<Vec<String>, ClaimsError> {
    let claims: Vec<String> = claims
        .iter()
        .map(|c| c.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|c| !c.is_empty())
        .collect();
    checked(claims)
}

/// Each sentence of `text` as a claim (`--file`), markers dropped; bounded as
/// [`plain`] and by [`MAX_INPUT_BYTES`].
pub fn of_text(text: &str) -> Result<Vec<String>, ClaimsError> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(ClaimsError::TooLarge { bytes: text.len() });
    }
    let (found, _) = sentences(text)?;
    checked(found.into_iter().map(|s| s.text).collect())
}

fn checked(claims: Vec<String>) -> Result<Vec<String>, ClaimsError> {
    if claims.is_empty() {
        return Err(ClaimsError::Empty);
    }
    if claims.len() > MAX_CLAIMS {
        return Err(ClaimsError::TooManyClaims { max: MAX_CLAIMS });
    }
    if let Some(at) = claims
        .iter()
        .position(|c| c.chars().count() > MAX_CLAIM_CHARS)
    {
        return Err(ClaimsError::TooLong { claim: at + 1 });
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_cut_into_one_claim_a_sentence() {
        assert_eq!(
            of_text(
                "The tower is 30 m tall. It was lit in 1911 [2]!\n\n- Its keeper was Ada Brannock\n"
            )
            .unwrap(),
            [
                "The tower is 30 m tall.",
                "It was lit in 1911!",
                "Its keeper was Ada Brannock"
            ]
        );
        assert_eq!(of_text(" \n\n"), Err(ClaimsError::Empty));
        let many = "A claim. ".repeat(MAX_CLAIMS + 1);
        assert_eq!(
            of_text(&many),
            Err(ClaimsError::TooManyClaims { max: MAX_CLAIMS })
        );
        assert_eq!(
            plain(&["ok".into(), "x".repeat(MAX_CLAIM_CHARS + 1)]),
            Err(ClaimsError::TooLong { claim: 2 })
        );
        assert_eq!(
            ClaimsError::TooManyClaims { max: 20 }.to_string(),
            "more than 20 claims in one run"
        );
    }
}
