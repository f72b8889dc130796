//! The model's answer with no sources: when the search gate (`--auto`) decides the
//! question needs no search, or search failed under `--fallback offline`. The answer
//! is labelled as not grounded, whatever it says.

use std::time::Instant;

use serde_json::json;

use super::Run;
use crate::context;
use crate::error::Error;
use crate::events::Stage;
use crate::fetch::elapsed_ms;
use crate::grounding::GroundedAnswer;
use crate::plan::{self, Decision};
use crate::report::{AnswerMode, Report};

impl Run<'_> {
    /// Asks the model to answer `question` alone and reports it as `mode`.
    pub(super) async fn offline(
        &mut self,
        question: &str,
        mode: AnswerMode,
        decision: Option<Decision>,
    ) -> Result<Report, Error> {
        let llm_settings = &self.settings.llm;
        self.events.stage(
            Stage::Asking,
            &format!("asking {} without sources", llm_settings.model),
        );
        let t = Instant::now();
        let (text, reply) = plan::answer_offline(
            &self.client,
            question,
            llm_settings.context_tokens,
            llm_settings.max_answer_tokens,
        )
        .await?;
        self.calls += 1;
        self.so_far.timings.llm += elapsed_ms(t);
        let answer = GroundedAnswer::ungrounded(text);
        self.events.emit(
            "answer_shown",
            json!({"grounded": false, "statements": 1, "supports": 0}),
        );
        self.so_far.timings.total = elapsed_ms(self.started);
        let model = self.model_info(&reply, 0);
        Ok(Report {
            question: question.to_string(),
            mode,
            decision,
            queries: Vec::new(),
            searches: Vec::new(),
            hits: Vec::new(),
            pages: Vec::new(),
            sources: Vec::new(),
            short_kinds: Vec::new(),
            extras: Default::default(),
            context: context::build(&[], 0),
            answer,
            model,
            timings: self.so_far.timings.clone(),
            warnings: std::mem::take(&mut self.so_far.warnings),
            ask_user: Vec::new(),
            answer_language: None,
            plan: None,
            pack_items: Vec::new(),
            followup: self.followup.take(),
            images: None,
        })
    }
}
