//! The answer call: the request (system prompt, the fitted sources, the bounded answer
//! schema, the answer's language, the pack's buckets), streamed so each statement is
//! checked and shown as it arrives, and what the server's token count says of the
//! budget (recorded for calibration, and a warning when the prompt was probably cut).

use std::time::Instant;

use super::Run;
use super::sources::Fitted;
use crate::answer::{AskUser, ModelAnswer, parse_questions_for_user};
use crate::error::Error;
use crate::events::Stage;
use crate::fetch::elapsed_ms;
use crate::grounding;
use crate::language::{self, AnswerLanguage};
use crate::llm::{self, Asked, ChatBackend, ModelReply, ModelRequest};
use crate::report::ModelInfo;

/// The model's reply to the answer call, with what the request asked of it.
pub(super) struct Answered {
    /// The parsed reply, its last raw reply and the calls made.
    pub asked: Asked,
    /// The pack's questions for the user (`--pack` only).
    pub ask_user: Vec<AskUser>,
    /// The language the answer was asked in, when not left to the model.
    pub language: Option<AnswerLanguage>,
}

impl Run<'_> {
    /// Asks the model to answer `question` from `fitted`, telling the watch about each
    /// attempt, the text as it arrives and every statement once `checker` has checked it.
    pub(super) async fn ask(
        &mut self,
        question: &str,
        fitted: &Fitted,
        checker: &grounding::Checker,
    ) -> Result<Answered, Error> {
        let llm_settings = &self.settings.llm;
        let estimated = fitted.estimated_prompt_tokens();
        self.events.stage(
            Stage::Asking,
            &format!(
                "asking {} ({} sources, ~{} tokens)",
                llm_settings.model,
                fitted.sources.len(),
                estimated
            ),
        );
        let t = Instant::now();
        let (request, language) = self.request(question, fitted);
        let watch = self.watch;
        let events = self.events;
        let sources = fitted.sources.len();
        let mut pieces = 0u64;
        let asked = llm::ask_streaming(&self.client, &request, &mut |event| match event {
            llm::AskEvent::Attempt(n) => {
                pieces = 0;
                watch.attempt(n);
            }
            llm::AskEvent::Prefill(prefill) => {
                events.emit(
                    "prefill",
                    serde_json::json!({
                        "done": prefill.done,
                        "total": prefill.total,
                        "cached": prefill.cached,
                    }),
                );
                watch.reading(sources, prefill);
            }
            llm::AskEvent::Text(_) => {
                pieces += 1;
                watch.writing(pieces);
            }
            llm::AskEvent::Statement {
                attempt,
                index,
                statement,
            } => {
                let one = ModelAnswer {
                    answerable: true,
                    statements: vec![statement],
                    unknowns: Vec::new(),
                    over_bounds: 0,
                };
                if let Some(checked) = checker.verify(&one).statements.first() {
                    watch.statement(attempt, index, checked);
                }
            }
        })
        .await?;
        let ask_user = if self.settings.run.pack {
            parse_questions_for_user(&asked.reply.content)
        } else {
            Vec::new()
        };
        self.calls += asked.attempts;
        self.so_far.timings.llm += elapsed_ms(t);
        let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        if let Some(prefill) = asked.prefill {
            *self.so_far.timings.llm_prefill.get_or_insert(0) += ms(prefill);
        }
        if let Some(generation) = asked.generation {
            *self.so_far.timings.llm_generation.get_or_insert(0) += ms(generation);
        }
        if asked.answer.over_bounds > 0 {
            self.warn(format!(
                "the model's reply went past the answer schema's bounds: {} statements, citations or unknowns beyond them were dropped",
                asked.answer.over_bounds
            ));
        }
        if let Some(counted) = asked.reply.prompt_tokens {
            self.check_prompt_count(fitted, counted);
        }
        // The embedded model times its reading and writing: kept for `ground doctor`'s
        // and the first-run line's "about N s an answer".
        let reply = &asked.reply;
        if let (Some(reading), Some(writing)) = (reply.prefill, reply.generation) {
            let read = reply
                .prompt_tokens
                .unwrap_or(0)
                .saturating_sub(reply.cached_prompt_tokens.unwrap_or(0));
            let written = reply.completion_tokens.unwrap_or(0);
            fitted
                .calibration
                .record_speed(read, reading, written, writing);
        }
        Ok(Answered {
            asked,
            ask_user,
            language,
        })
    }

    /// The answer request for `question` from `fitted`, and the answer's language.
    fn request(&self, question: &str, fitted: &Fitted) -> (ModelRequest, Option<AnswerLanguage>) {
        let llm_settings = &self.settings.llm;
        let mut request = ModelRequest {
            system: llm::SYSTEM_PROMPT.to_string(),
            // Stable first (the sources, then the conversation's last turns, bounded:
            // see `followup.rs`, then the question), so a model that keeps its context
            // reads a follow-up's sources only once.
            user: llm::user_message_with_history(&fitted.context.text, &self.history, question),
            schema: llm::answer_schema(
                fitted.sources.len(),
                llm::AnswerBounds::for_tokens(llm_settings.max_answer_tokens),
            ),
            context_tokens: llm_settings.context_tokens,
            max_answer_tokens: llm_settings.max_answer_tokens,
        };
        let language = language::choose(llm_settings.answer_language.as_deref(), question);
        if let Some(language) = &language {
            request.system.push_str(&language::instruction(language));
        }
        if self.settings.run.pack {
            request.system.push_str(llm::PACK_NOTE);
            request.schema = llm::with_pack_buckets(llm::with_questions_for_user(request.schema));
        }
        (request, language)
    }

    /// Records the server's prompt count for calibration and warns when it shows the
    /// prompt was probably cut.
    fn check_prompt_count(&mut self, fitted: &Fitted, counted: u32) {
        let llm_settings = &self.settings.llm;
        let estimated = fitted.estimated_prompt_tokens();
        // Ollama keeps the end of an over-long prompt; a count at the window's edge
        // (less the output reserve) means the front, where sources start, was lost.
        let usable = llm_settings
            .context_tokens
            .saturating_sub(llm_settings.max_answer_tokens);
        // A count below the whole window is exact; one at it is only a lower bound.
        let cut = counted >= llm_settings.context_tokens;
        fitted.calibration.record(estimated, counted, cut);
        // A calibrated budget aims below the edge, so reaching it means a cut prompt.
        if counted >= usable && (estimated > counted || fitted.ratio.is_some() || cut) {
            self.warn(format!(
                "the model server counted {counted} prompt tokens against an estimate of {estimated}: the prompt was probably cut; lower --pages or raise --context-tokens"
            ));
        }
    }

    /// The model's part of the report: backend, name, token counts and calls.
    pub(super) fn model_info(&self, reply: &ModelReply, estimated: u32) -> ModelInfo {
        ModelInfo {
            backend: self.client.backend(),
            name: self.client.model().to_string(),
            file: self.client.model_file().map(|p| p.display().to_string()),
            prompt_tokens: reply.prompt_tokens,
            completion_tokens: reply.completion_tokens,
            estimated_prompt_tokens: estimated,
            context_window: self.settings.llm.context_tokens,
            max_answer_tokens: self.settings.llm.max_answer_tokens,
            attempts: self.calls,
            done_reason: reply.done_reason.clone(),
            cached_prompt_tokens: reply.cached_prompt_tokens,
            token_ratio: 1.0,
            token_ratio_calibrated: false,
        }
    }
}
