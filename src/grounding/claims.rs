//! Judging a claim that ground did not write (`ground check`, MCP's `check_claims`):
//! the one matcher applied to a claim and every source read, then a verdict that
//! counts voices, not pages.
//!
//! There is no second matcher. [`Checker::judge`] asks the same questions the
//! cross-check asks of an answer's statement (`cross.rs`): which sources hold a window
//! saying the same thing (`matches.rs`: words, numbers, dates, negation, the page's
//! subject) and which hold a sentence saying otherwise in the claim's own slot
//! (`conflicts.rs`). A source that supports a claim never also contradicts it.
//!
//! The verdict is a pure function of two counts ([`verdict`]): the **voices** that
//! support and that contradict. A voice is a site ([`voice_of`]: the registrable
//! domain, so several pages of one site, or `www.` and `news.` of one domain, are one
//! voice); a server on this machine (reached only with `--allow-private-addresses`)
//! is told apart by its port. A voice that both supports (on one page) and
//! contradicts (on another) counts on both sides.

use std::collections::BTreeSet;

use serde::Serialize;

use super::anchors::Features;
use super::conflicts::{ConflictKind, slotted};
use super::{Checker, MatchKind, check_quote};
use crate::text::normalise;

/// What a claim is found to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimVerdict {
    /// More voices support it than contradict it.
    Supported,
    /// More voices contradict it than support it.
    Contradicted,
    /// As many voices contradict it as support it (at least one each).
    Disputed,
    /// No source read speaks to it (`ground check`).
    NotFound,
    /// None of the sources the answer cites for it speaks to it (`ground check
    /// --cited`); another source read may (`supported_elsewhere`).
    NotSupportedByCited,
}

impl ClaimVerdict {
    /// The name `--json` uses: supported, contradicted, disputed, not_found or
    /// not_supported_by_cited.
    pub fn name(self) -> &'static str {
        match self {
            ClaimVerdict::Supported => "supported",
            ClaimVerdict::Contradicted => "contradicted",
            ClaimVerdict::Disputed => "disputed",
            ClaimVerdict::NotFound => "not_found",
            ClaimVerdict::NotSupportedByCited => "not_supported_by_cited",
        }
    }
}

/// The verdict from the voices that support a claim and those that contradict it:
/// supported when more support, contradicted when more contradict, disputed on a tie
/// of at least one each, and `silent` (not found, or not supported by the cited
/// sources) when none speaks.
pub fn verdict(supporting: usize, contradicting: usize, silent: ClaimVerdict) -> ClaimVerdict {
    use std::cmp::Ordering::*;
    match supporting.cmp(&contradicting) {
        Greater => ClaimVerdict::Supported,
        Less => ClaimVerdict::Contradicted,
        Equal if supporting > 0 => ClaimVerdict::Disputed,
        Equal => silent,
    }
}

/// At least this many voices supporting a claim make it `corroborated`.
pub const CORROBORATING_VOICES: usize = 2;

/// The voice a source's URL speaks with (see the module's documentation): its site
/// ([`crate::http::site_of_host`]), and for a server on this machine the site with
/// its port. "" for a URL without a host.
pub fn voice_of(url: &str) -> String {
    let Ok(parsed) = url::Url::parse(url) else {
        return String::new();
    };
    let Some(host) = parsed.host_str() else {
        return String::new();
    };
    let site = crate::http::site_of_host(host);
    match parsed.port_or_known_default() {
        Some(port) if site == "localhost" => format!("localhost:{port}"),
        _ => site,
    }
}

/// How many voices the sources `numbers` are, given each source's URL by `url_of`.
pub fn voices<'a>(
    numbers: impl IntoIterator<Item = usize>,
    url_of: impl Fn(usize) -> Option<&'a str>,
) -> usize {
    numbers
        .into_iter()
        .filter_map(|n| url_of(n).map(voice_of))
        .collect::<BTreeSet<_>>()
        .len()
}

/// A source that supports a claim, with the window that says it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClaimSupport {
    /// The source's number.
    pub source: usize,
    /// The window (one sentence, or two adjacent ones), exactly as in the source's
    /// extracted text.
    pub quote: String,
    /// `quote` when the claim is in the window word for word (after normalising),
    /// else `match` (ground's match: the same words, numbers, dates and negation).
    pub support: &'static str,
}

/// A sentence of a source that says otherwise than a claim.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClaimConflict {
    /// The source's number.
    pub source: usize,
    /// The sentence, exactly as in the source's extracted text.
    pub quote: String,
    /// What it says otherwise: another number, date or name, or the negation.
    pub kind: ConflictKind,
    /// What it says instead; for a negation "negated" or "affirmed".
    pub value: String,
}

/// What the sources read say of one claim: who supports it and who says otherwise,
/// each source once, in the order of the sources.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Findings {
    /// The sources that support it.
    pub supports: Vec<ClaimSupport>,
    /// The sources that say otherwise (never one that supports it).
    pub contradictions: Vec<ClaimConflict>,
}

impl Checker {
    /// What every source (their whole texts) says of `claim`: the matcher's best
    /// window of each source that supports it, and the first sentence of each other
    /// source that contradicts it. CPU work, bounded like the cross-check (at most
    /// [`super::MAX_CROSS_CANDIDATES`] sentences tried each way): callers on an async
    /// runtime run it on the blocking pool.
    pub fn judge(&self, claim: &str) -> Findings {
        let p = &*self.inner;
        let number = |i: usize| p.sources[i].number;
        let features = Features::of_statement(claim);
        let said = claim.trim().trim_end_matches(['.', '!', '?']);
        let mut supports: Vec<ClaimSupport> = p
            .shown
            .find_everywhere(&features, number)
            .into_iter()
            .filter_map(|w| {
                let source = p.sources.iter().find(|s| s.number == w.source)?;
                let quote = source.text.get(w.start..w.end)?.to_string();
                let (matched, _) = check_quote(said, &quote, &normalise(&quote));
                let support = if matched == MatchKind::None {
                    "match"
                } else {
                    "quote"
                };
                Some(ClaimSupport {
                    source: w.source,
                    quote,
                    support,
                })
            })
            .collect();
        supports.sort_by_key(|s| s.source);
        let supporters: BTreeSet<usize> = supports.iter().map(|s| s.source).collect();
        let contradictions = p
            .shown
            .conflicts(&features, &slotted(claim), number, |n| {
                supporters.contains(&n)
            })
            .into_iter()
            .filter_map(|c| {
                let source = p.sources.iter().find(|s| s.number == c.source)?;
                Some(ClaimConflict {
                    quote: source.text.get(c.start..c.end)?.to_string(),
                    source: c.source,
                    kind: c.kind,
                    value: c.value,
                })
            })
            .collect();
        Findings {
            supports,
            contradictions,
        }
    }
}

/// A claim's verdict from what the sources read say of it ([`Findings`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Judged {
    /// The verdict.
    pub verdict: ClaimVerdict,
    /// At least [`CORROBORATING_VOICES`] voices support it (any source read).
    pub corroborated: bool,
    /// With cited sources: the sources read that support it besides them.
    pub supported_elsewhere: Vec<usize>,
}

/// The verdict on a claim (see the module's documentation). Without `cited`
/// (`ground check`), every source read is a voice and silence is
/// [`ClaimVerdict::NotFound`]; with `cited` (`--cited`), only the sources the answer
/// cites for the claim count towards the verdict and silence is
/// [`ClaimVerdict::NotSupportedByCited`], and the other sources that support it are
/// `supported_elsewhere`. `url_of` gives a source's URL by its number.
pub fn judged<'a>(
    findings: &Findings,
    cited: Option<&[usize]>,
    url_of: impl Fn(usize) -> Option<&'a str> + Copy,
) -> Judged {
    let counts = |n: &usize| cited.is_none_or(|c| c.contains(n));
    let supporting = voices(
        findings.supports.iter().map(|s| s.source).filter(counts),
        url_of,
    );
    let contradicting = voices(
        findings
            .contradictions
            .iter()
            .map(|c| c.source)
            .filter(counts),
        url_of,
    );
    let silent = if cited.is_some() {
        ClaimVerdict::NotSupportedByCited
    } else {
        ClaimVerdict::NotFound
    };
    Judged {
        verdict: verdict(supporting, contradicting, silent),
        corroborated: voices(findings.supports.iter().map(|s| s.source), url_of)
            >= CORROBORATING_VOICES,
        supported_elsewhere: match cited {
            Some(cited) => findings
                .supports
                .iter()
                .map(|s| s.source)
                .filter(|n| !cited.contains(n))
                .collect(),
            None => Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::SourceText;

    fn source(number: usize, url: &str, text: &str) -> SourceText {
        SourceText {
            number,
            url: url.into(),
            title: "Quillfeather Lighthouse".into(),
            text: text.into(),
        }
    }

    fn findings(supports: &[usize], contradictions: &[usize]) -> Findings {
        Findings {
            supports: supports
                .iter()
                .map(|&source| ClaimSupport {
                    source,
                    quote: String::new(),
                    support: "match",
                })
                .collect(),
            contradictions: contradictions
                .iter()
                .map(|&source| ClaimConflict {
                    source,
                    quote: String::new(),
                    kind: ConflictKind::Date,
                    value: String::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn judged_counts_hosts_and_with_citations_only_the_cited() {
        let urls = [
            "https://a.org/1",
            "https://a.org/2",
            "https://b.org/3",
            "https://c.org/4",
        ];
        let url_of = |n: usize| urls.get(n - 1).copied();
        // Two pages of one site against one other site: a tie.
        let j = judged(&findings(&[1, 2], &[3]), None, url_of);
        assert_eq!(j.verdict, ClaimVerdict::Disputed);
        assert!(!j.corroborated);
        let j = judged(&findings(&[1, 3], &[4]), None, url_of);
        assert_eq!((j.verdict, j.corroborated), (ClaimVerdict::Supported, true));
        // Cited 4 says otherwise; 1 and 3 (not cited) support it elsewhere.
        let j = judged(&findings(&[1, 3], &[4]), Some(&[4]), url_of);
        assert_eq!(j.verdict, ClaimVerdict::Contradicted);
        assert_eq!(j.supported_elsewhere, [1, 3]);
        let j = judged(&findings(&[1], &[]), Some(&[2]), url_of);
        assert_eq!(j.verdict, ClaimVerdict::NotSupportedByCited);
        assert_eq!(j.supported_elsewhere, [1]);
    }

    #[test]
    fn the_verdict_counts_voices_on_each_side() {
        use ClaimVerdict::*;
        assert_eq!(verdict(2, 0, NotFound), Supported);
        assert_eq!(verdict(2, 1, NotFound), Supported);
        assert_eq!(verdict(1, 2, NotFound), Contradicted);
        assert_eq!(verdict(0, 1, NotFound), Contradicted);
        assert_eq!(verdict(1, 1, NotFound), Disputed);
        assert_eq!(verdict(0, 0, NotFound), NotFound);
        assert_eq!(verdict(0, 0, NotSupportedByCited), NotSupportedByCited);
        assert_eq!(Disputed.name(), "disputed");
        assert_eq!(NotSupportedByCited.name(), "not_supported_by_cited");
    }

    #[test]
    fn pages_of_one_site_are_one_voice_and_local_servers_are_told_by_port() {
        assert_eq!(voice_of("https://www.example.co.uk/a"), "example.co.uk");
        assert_eq!(voice_of("https://news.example.co.uk/b"), "example.co.uk");
        assert_eq!(voice_of("http://127.0.0.1:8080/a"), "localhost:8080");
        assert_eq!(voice_of("not a url"), "");
        let urls = [
            "https://www.example.org/a",
            "https://example.org/b",
            "https://other.org/c",
            "http://127.0.0.1:1/x",
            "http://127.0.0.1:2/y",
        ];
        let url_of = |n: usize| urls.get(n - 1).copied();
        assert_eq!(voices([1, 2], url_of), 1);
        assert_eq!(voices([1, 2, 3], url_of), 2);
        assert_eq!(voices([4, 5], url_of), 2);
        assert_eq!(voices([9], url_of), 0);
    }

    #[test]
    fn a_claim_is_judged_against_every_source_by_the_one_matcher() {
        let sources = vec![
            source(
                1,
                "https://a.org/",
                "The Quillfeather Lighthouse was first lit on 14 October 1911.",
            ),
            source(
                2,
                "https://b.org/",
                "After four years of building, the Quillfeather Lighthouse was first lit on October 14, 1911.",
            ),
            source(
                3,
                "https://c.org/",
                "The Quillfeather Lighthouse was first lit on 9 June 1936.",
            ),
            source(
                4,
                "https://d.org/",
                "The harbour wall was finished in 1909. The new pier was first opened on 9 June 1936.",
            ),
        ];
        let checker = Checker::new(&sources);
        let found = checker.judge("The Quillfeather Lighthouse was first lit on 14 October 1911.");
        let supports: Vec<(usize, &str)> = found
            .supports
            .iter()
            .map(|s| (s.source, s.support))
            .collect();
        // Word for word on 1; the same date written otherwise on 2.
        assert_eq!(supports, [(1, "quote"), (2, "match")]);
        assert_eq!(
            found.contradictions,
            [ClaimConflict {
                source: 3,
                quote: "The Quillfeather Lighthouse was first lit on 9 June 1936.".into(),
                kind: ConflictKind::Date,
                value: "9 June 1936".into(),
            }]
        );
        // An unrelated claim: nobody speaks to it.
        assert_eq!(
            checker.judge("The Varnholm ferry carries forty cars across the bay."),
            Findings::default()
        );
    }
}
