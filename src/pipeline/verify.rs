//! The last stage: every statement's quotes checked against the sources the model was
//! shown (and the pack's bucket items with the same check), then the run's [`Report`].

use serde_json::json;

use super::Run;
use super::ask::Answered;
use super::sources::Fitted;
use crate::answer::{ModelAnswer, parse_pack_bucket};
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
    /// Checks the answer's quotes (and, with `--pack`, the buckets' items).
    pub(super) fn verify(&self, answered: &Answered, checker: &grounding::Checker) -> Checked {
        self.events.stage(Stage::Checking, "checking citations");
        let answer = checker.verify(&answered.asked.answer);
        let pack_items = if self.settings.run.pack {
            pack_entries(&answered.asked.reply.content, checker)
        } else {
            Vec::new()
        };
        self.events.emit(
            "answer_shown",
            json!({"grounded": answer.grounded(), "statements": answer.statements.len(), "supports": answer.statements.iter().filter(|s| s.supported()).count()}),
        );
        Checked { answer, pack_items }
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
            snippets: fitted.snippets,
            model,
            context: fitted.context,
            answer: checked.answer,
            timings: self.so_far.timings.clone(),
            warnings: std::mem::take(&mut self.so_far.warnings),
            ask_user: answered.ask_user,
            answer_language: answered.language,
            plan: gathered.plan,
            pack_items: checked.pack_items,
        }
    }
}

/// The pack's bucket items of the reply `content`, each checked against the sources
/// with the same quote check as the answer's statements.
fn pack_entries(content: &str, checker: &grounding::Checker<'_>) -> Vec<PackEntry> {
    let mut entries = Vec::new();
    for bucket in llm::PACK_BUCKETS {
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
