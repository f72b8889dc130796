//! The sources the model is shown: the pages read, numbered in rank order, then the
//! short sources the search itself gave (infoboxes, instant answers, and the snippets
//! of results not read: cheap evidence, each a source of its own kind), fitted into
//! the token budget that the window, the answer's reserve and the calibrated token
//! ratio leave.

use std::collections::HashSet;

use serde_json::json;

use super::Run;
use super::gather::Gathered;
use crate::calibration::{self, Calibration, TokenRatio};
use crate::context::{self, Context, SourceKind, SourceText, search_sources};
use crate::error::Error;
use crate::events::Stage;
use crate::hits::normalise_url;
use crate::llm;
use crate::page::status_summary;

/// Most search-result snippets sent as sources of their own beside the pages read.
pub const MAX_SNIPPET_SOURCES: usize = 7;

/// What the model will be shown, with what it came from.
pub(super) struct Fitted {
    /// Searches, results and pages (their text moved into `sources`).
    pub gathered: Gathered,
    /// The sources sent: pages read, then short sources.
    pub sources: Vec<SourceText>,
    /// The kinds of the short sources at the end of `sources`, in order.
    pub short_kinds: Vec<SourceKind>,
    /// The sources fitted to the budget.
    pub context: Context,
    /// Estimated tokens of the prompt besides the sources.
    pub overhead: u32,
    /// Where the model's token counts are kept for the next run.
    pub calibration: Calibration,
    /// The token ratio earlier runs measured, if any.
    pub ratio: Option<TokenRatio>,
}

impl Fitted {
    /// Estimated tokens of the whole prompt.
    pub fn estimated_prompt_tokens(&self) -> u32 {
        self.overhead + self.context.estimated_tokens
    }
}

impl Run<'_> {
    /// Numbers the usable pages as sources (after a conversation's earlier sources,
    /// see [`Run::number_sources`]), adds the snippets of results not read (not in a
    /// conversation), and fits them all to the window. Fails when no page could be used.
    pub(super) fn fit_sources(
        &mut self,
        question: &str,
        mut gathered: Gathered,
    ) -> Result<Fitted, Error> {
        let mut sources = self.number_sources(&mut gathered.pages);
        self.so_far.pages = gathered.pages.clone();
        // With no page, an infobox or instant answer of the searches is still
        // evidence (outside a conversation, where short sources are not numbered).
        let shorts_only =
            sources.is_empty() && self.prior.is_none() && gathered.extras.has_sources();
        if sources.is_empty() && !shorts_only {
            return Err(Error::NoUsableSources {
                tried: gathered.pages.len(),
                summary: status_summary(&gathered.pages),
            });
        }
        let wanted = self.settings.fetch.pages;
        if shorts_only {
            self.warn(
                "no result page could be read: the answer rests on the search's infobox or instant answer"
                    .to_string(),
            );
        } else if self.prior.is_none() && !self.settings.docs.no_web && sources.len() < wanted {
            self.warn(format!(
                "only {} of the {} pages asked for could be used",
                sources.len(),
                wanted
            ));
        }

        self.events.stage(Stage::Building, "building the context");
        let llm_settings = &self.settings.llm;
        let mut overhead = llm::prompt_overhead_tokens(question);
        overhead += context::estimate_tokens(&self.history);
        if self.settings.run.pack {
            // The pack's instructions ride on the system prompt.
            overhead += context::estimate_tokens(llm::PACK_NOTE);
        }
        // The estimate scaled to the model's own tokens when earlier runs measured them.
        let calibration = Calibration::open(&self.settings.cache, llm_settings);
        let ratio = calibration.load_checked().unwrap_or_else(|problem| {
            self.warn(format!("the token calibration was not used: {problem}"));
            None
        });
        let budget = calibration::source_budget(
            llm_settings.context_tokens,
            llm_settings.max_answer_tokens,
            overhead,
            ratio.as_ref(),
        );
        let pages_read = sources.len();
        // A conversation numbers only pages read: a short source's number (a snippet,
        // an infobox, an instant answer) would not mean the same source in the next
        // answer.
        let (context, short_sent) = if self.prior.is_some() {
            context::build_with_snippets(&sources, &[], question, budget)
        } else {
            let shorts = short_sources(&gathered, pages_read, &HashSet::new());
            let (context, short_sent) =
                context::build_with_snippets(&sources, &shorts, question, budget);
            // A result whose page was read is not sent as a snippet too, unless its
            // snippet says what the passages sent of its page do not: then the context
            // is built again with that snippet among the others, in rank order.
            let more = pages_saying_less(&gathered, &sources, &context, question);
            if more.is_empty() {
                (context, short_sent)
            } else {
                let shorts = short_sources(&gathered, pages_read, &more);
                context::build_with_snippets(&sources, &shorts, question, budget)
            }
        };
        let short_kinds = short_sent.iter().map(|(_, kind)| *kind).collect();
        sources.extend(short_sent.into_iter().map(|(source, _)| source));
        // Pages of which some but not all was sent; a page none of whose passages was
        // chosen is read but unused (listed as such in the report), not shortened.
        let cut: Vec<usize> = context
            .sources
            .iter()
            .filter(|s| s.truncated && s.used() && s.number <= pages_read)
            .map(|s| s.number)
            .collect();
        let unused: Vec<usize> = context
            .sources
            .iter()
            .filter(|s| !s.used() && s.number <= pages_read)
            .map(|s| s.number)
            .collect();
        if !cut.is_empty() {
            let window = llm_settings.context_tokens;
            self.warn(format!(
                "{} of {} sources were shortened to fit the {}-token context window (raise --context-tokens to send more)",
                cut.len(),
                pages_read,
                window
            ));
        }
        self.events.emit(
            "context_built",
            json!({"tokens": context.estimated_tokens + overhead, "budget": budget, "sources": sources.len(), "dropped": cut, "unused": unused}),
        );
        Ok(Fitted {
            gathered,
            sources,
            short_kinds,
            context,
            overhead,
            calibration,
            ratio,
        })
    }
}

/// The short sources, numbered after the `pages_read` pages: the searches' infoboxes
/// and instant answers first ([`search_sources`]), the most direct evidence a search
/// gives, then the snippets of results ([`snippet_sources`]; `also` as there).
fn short_sources(
    gathered: &Gathered,
    pages_read: usize,
    also: &HashSet<String>,
) -> Vec<(SourceText, SourceKind)> {
    search_sources(&gathered.extras)
        .into_iter()
        .chain(snippet_sources(gathered, 0, also))
        .filter(|(s, _)| !s.text.trim().is_empty())
        .enumerate()
        .map(|(i, (mut source, kind))| {
            source.number = pages_read + 1 + i;
            (source, kind)
        })
        .collect()
}

/// Results that were not read still carry their engine's title and snippet: each
/// becomes a short source of kind snippet, numbered after the `pages_read` pages, at
/// most [`MAX_SNIPPET_SOURCES`] (the context sends a title-only line for those whose
/// snippet no longer fits). A result whose page was read is not one (its passages
/// compete in the pages' pool), unless its normalised URL is in `also`: its snippet
/// says what the passages sent of its page do not ([`pages_saying_less`]); those come
/// after the results not read, which keep their share first.
fn snippet_sources(
    gathered: &Gathered,
    pages_read: usize,
    also: &HashSet<String>,
) -> Vec<(SourceText, SourceKind)> {
    let read: HashSet<String> = gathered
        .pages
        .iter()
        .filter(|p| p.index.is_some())
        .map(|p| normalise_url(&p.url))
        .collect();
    gathered
        .hits
        .iter()
        .filter(|hit| !hit.snippet.trim().is_empty())
        .filter(|hit| !read.contains(&normalise_url(&hit.url)))
        .chain(
            gathered
                .hits
                .iter()
                .filter(|hit| !hit.snippet.trim().is_empty())
                .filter(|hit| also.contains(&normalise_url(&hit.url))),
        )
        .take(MAX_SNIPPET_SOURCES)
        .enumerate()
        .map(|(i, hit)| {
            let source = SourceText {
                number: pages_read + 1 + i,
                url: hit.url.clone(),
                title: hit.title.clone(),
                text: hit.snippet.clone(),
            };
            (source, SourceKind::Snippet)
        })
        .collect()
}

/// The pages read but not sent whole (as normalised URLs) whose result's snippet says
/// something about the question that the passages sent of the page do not
/// ([`context::says_more`]): a page none of whose passages was chosen, or whose chosen
/// ones miss the snippet's words.
fn pages_saying_less(
    gathered: &Gathered,
    sources: &[SourceText],
    context: &Context,
    question: &str,
) -> HashSet<String> {
    let snippets: std::collections::HashMap<String, &str> = gathered
        .hits
        .iter()
        .map(|hit| (normalise_url(&hit.url), hit.snippet.as_str()))
        .collect();
    gathered
        .pages
        .iter()
        .filter_map(|page| {
            let number = page.index?;
            let url = normalise_url(&page.url);
            let snippet = snippets.get(&url)?;
            let source = sources.get(number - 1)?;
            let cut = context
                .sources
                .iter()
                .find(|c| c.number == number && c.truncated)?;
            let shown: Vec<&str> = cut
                .sent
                .iter()
                .filter_map(|range| source.text.get(range.clone()))
                .collect();
            context::says_more(snippet, &shown.join("\n"), question).then_some(url)
        })
        .collect()
}
