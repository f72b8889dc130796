//! The images beside an answer (`--images`, `[search] images`, the servers' image
//! options): one images search for the planner's first query, run at the same time
//! as the web search and reading. Its images are listed beside the sources and never
//! shown to the model, so the answer and its citations are the same with or without
//! them; a failed images search is a warning, never a failed answer. No image is
//! downloaded (see [`crate::image_hits`]).

use crate::image_hits::ImageHit;
use crate::search::{self, Pace};
use crate::settings::Settings;

/// Most images listed beside an answer.
pub const ANSWER_IMAGES: usize = 10;

/// What the images search beside a run gave: the images, and warnings for the
/// report (the search's own, or why it failed).
#[derive(Debug, Default)]
pub(super) struct Beside {
    pub images: Vec<ImageHit>,
    pub warnings: Vec<String>,
}

/// Runs the images search for `query` when `settings` ask for one (nothing
/// otherwise), within `deadline` for its wait on the rate limit.
pub(super) async fn beside(
    settings: &Settings,
    query: Option<&str>,
    deadline: tokio::time::Instant,
) -> Beside {
    let Some(query) = query.filter(|_| settings.search.images) else {
        return Beside::default();
    };
    let pace = Pace::until(deadline);
    match search::images(&settings.search, query, ANSWER_IMAGES, &pace).await {
        Ok(found) => Beside {
            images: found.images,
            warnings: found.warnings,
        },
        Err(error) => {
            let hint = error.hint().map(|h| format!("; {h}")).unwrap_or_default();
            Beside {
                images: Vec::new(),
                warnings: vec![format!(
                    "the images search failed, so no images are listed (the answer is unaffected): {error}{hint}"
                )],
            }
        }
    }
}
