//! The last stage: every statement checked against the sources the model was shown
//! (its quotes, then ground's own match; the pack's bucket items with the same
//! check), then cross-checked against every source read (what else supports or
//! contradicts it), off the async runtime, then the run's [`Report`].

use serde_json::json;

use super::Run;
use super::ask::Answered;
use super::sources::Fitted;
use crate::answer::{ModelAnswer, PACK_BUCKETS, parse_pack_bucket};
use crate::error::Error;
use crate::events::Stage;
use crate::fetch::elapsed_ms;
use crate::grounding::{self, GroundedAnswer};
use crate::llm;
use crate::plan::Decision;
use crate::report::{AnswerMode, PackEntry, Report};

/// The checked answer and the pack's checked items.
pub(super) struct Checked {
    /// The answer, each statement with its verified citations.
    pub answer: GroundedAnswer,
    /// The pack's bucket items (`--pack` only).
    pub pack_items: Vec<PackEntry>,
}

impl Run<'_> {
    /// Prepares the checker for `fitted`'s sources, with what the context sent of each
    /// as the only text ground's match may use; off the runtime, as it normalises
    /// every page and indexes every sentence sent.
    pub(super) async fn checker(&self, fitted: &Fitted) -> Result<grounding::Checker, Error> {
        let (sources, cuts) = (fitted.sources.clone(), fitted.context.sources.clone());
        off_runtime(move || grounding::Checker::for_context(sources, &cuts)).await
    }

    /// Checks the answer's statements (and, with `--pack`, the buckets' items), off the
    /// runtime: each statement's work is bounded, but an answer has many.
    pub(super) async fn verify(
        &self,
        answered: &Answered,
        checker: &grounding::Checker,
    ) -> Result<Checked, Error> {
        self.events.stage(Stage::Checking, "checking citations");
        let checker = checker.clone();
        let model_answer = answered.asked.answer.clone();
        let content = self
            .settings
            .run
            .pack
            .then(|| answered.asked.reply.content.clone());
        let (answer, pack_items) = off_runtime(move || {
            let mut answer = checker.verify(&model_answer);
            checker.cross_reference(&mut answer);
            let pack_items = content
                .map(|content| pack_entries(&content, &checker))
                .unwrap_or_default();
            (answer, pack_items)
        })
        .await?;
        self.events.emit(
            "answer_shown",
            json!({"grounded": answer.grounded(), "statements": answer.statements.len(), "supports": answer.statements.iter().filter(|s| s.supported()).count()}),
        );
        Ok(Checked { answer, pack_items })
    }

    /// The report of a grounded run.
    pub(super) fn report(
        &mut self,
        question: &str,
        decision: Option<Decision>,
        fitted: Fitted,
        answered: Answered,
        checked: Checked,
    ) -> Report {
        self.so_far.timings.total = elapsed_ms(self.started);
        let mut model = self.model_info(&answered.asked.reply, fitted.estimated_prompt_tokens());
        if let Some(r) = fitted.ratio {
            (model.token_ratio, model.token_ratio_calibrated) = (r.ratio, true);
        }
        let gathered = fitted.gathered;
        Report {
            question: question.to_string(),
            mode: AnswerMode::Grounded,
            decision,
            queries: gathered.queries,
            searches: gathered.searches,
            hits: gathered.hits,
            pages: gathered.pages,
            sources: fitted.sources,
            short_kinds: fitted.short_kinds,
            extras: gathered.extras,
            model,
            context: fitted.context,
            answer: checked.answer,
            timings: self.so_far.timings.clone(),
            warnings: std::mem::take(&mut self.so_far.warnings),
            ask_user: answered.ask_user,
            answer_language: answered.language,
            plan: gathered.plan,
            pack_items: checked.pack_items,
            followup: self.followup.take(),
            images: None,
        }
    }
}

/// Runs `work` on the blocking pool.
async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Error> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Error::Internal {
            message: format!("the grounding check failed: {e}"),
        })
}

/// The pack's bucket items of the reply `content`, each checked against the sources
/// with the same check as the answer's statements.
fn pack_entries(content: &str, checker: &grounding::Checker) -> Vec<PackEntry> {
    let mut entries = Vec::new();
    for bucket in PACK_BUCKETS {
        let items = parse_pack_bucket(
            content,
            bucket,
            llm::MAX_BUCKET_ITEMS as usize,
            llm::MAX_BUCKET_CITATIONS as usize,
        );
        let flags: Vec<bool> = items.iter().map(|i| i.policy_or_legal).collect();
        let checked = checker.verify(&ModelAnswer {
            answerable: true,
            statements: items.into_iter().map(|i| i.statement).collect(),
            unknowns: Vec::new(),
            over_bounds: 0,
        });
        for (statement, flagged) in checked.statements.into_iter().zip(flags) {
            let policy_or_legal = flagged || grounding::reads_like_policy(&statement.text);
            entries.push(PackEntry {
                bucket,
                statement,
                policy_or_legal,
            });
        }
    }
    entries
}
