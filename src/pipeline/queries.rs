//! Which searches a run makes: the search gate (`--auto`: does the question need the
//! web at all?) and the query planner (`--queries`: which queries, what evidence they
//! must find, whether they run at once or in rounds), within `--max-searches`.

use std::time::Instant;

use serde_json::json;

use super::Run;
use crate::error::Error;
use crate::events::Stage;
use crate::fetch::elapsed_ms;
use crate::plan::{self, Decision, PlanRun};
use crate::settings::PlanMode;

/// The queries a run will make and how.
pub(super) struct Planned {
    /// The planner's reply (or the question as asked).
    pub plan: plan::Plan,
    /// The queries that may run, in order.
    pub queries: Vec<String>,
    /// Planned queries beyond the search budget; they never run.
    pub over_budget: Vec<String>,
    /// One query per round, the next only while evidence is missing.
    pub rounds: bool,
    /// Distinct hosts each must-have phrase needs (from the stop conditions).
    pub agree: usize,
    /// Queries allowed in all (`--queries`, `--max-searches`, the gate's maximum).
    pub budget: usize,
}

impl Planned {
    /// The plan's record for the report, once searching is over (`None` for a single
    /// query, which has nothing to plan).
    pub fn outcome(&self, searched: PlanRun) -> Option<PlanRun> {
        (self.budget > 1).then(|| PlanRun {
            mode: if self.rounds {
                PlanMode::Rounds
            } else {
                PlanMode::Concurrent
            },
            must_have_evidence: self.plan.must_have_evidence.clone(),
            stop_conditions: self.plan.stop_conditions.clone(),
            agree: self.agree,
            ..searched
        })
    }
}

impl Run<'_> {
    /// The search gate's verdict, asked only with `--auto`.
    pub(super) async fn decide(&mut self, question: &str) -> Result<Option<Decision>, Error> {
        if !self.settings.run.auto {
            return Ok(None);
        }
        self.events
            .stage(Stage::Deciding, "deciding whether to search");
        let t = Instant::now();
        let (verdict, warning) =
            plan::decide(&self.client, question, self.settings.llm.context_tokens).await?;
        self.calls += 1;
        self.so_far.timings.llm += elapsed_ms(t);
        self.warn_all(warning);
        self.events.emit(
            "decided",
            json!({"need_search": verdict.need_search, "reason_codes": verdict.reason_codes, "max_queries": verdict.max_queries}),
        );
        Ok(Some(verdict))
    }

    /// The queries to run: planned by the model when more than one may run, else the
    /// question as asked.
    pub(super) async fn plan(
        &mut self,
        question: &str,
        decision: Option<&Decision>,
    ) -> Result<Planned, Error> {
        let run = &self.settings.run;
        let gate = decision.map_or(usize::MAX, |d| d.max_queries);
        // Queries the planner is asked for, and how many of them may run.
        let asked_for = run.queries.min(gate);
        let budget = run.queries.min(run.max_searches).min(gate);
        let (plan, warning) = if budget > 1 {
            self.events.stage(Stage::Planning, "planning queries");
            let t = Instant::now();
            let planned = plan::plan_queries(
                &self.client,
                question,
                asked_for,
                self.settings.search.language.as_deref(),
                run.region.as_deref(),
                self.settings.llm.context_tokens,
            )
            .await?;
            self.calls += 1;
            self.so_far.timings.llm += elapsed_ms(t);
            planned
        } else {
            (plan::Plan::as_asked(question), None)
        };
        self.warn_all(warning);
        // --max-searches (with --queries and the gate's max_queries) is the hard cap.
        let queries: Vec<String> = plan.queries.iter().take(budget).cloned().collect();
        let over_budget: Vec<String> = plan.queries.iter().skip(budget).cloned().collect();
        // Rounds need something to check: without must-have evidence every query runs,
        // so they run at once.
        let rounds = run.plan_mode == PlanMode::Rounds
            && queries.len() > 1
            && !plan.must_have_evidence.is_empty();
        let agree = plan::agree_count(&plan.stop_conditions);
        self.so_far.queries = queries.clone();
        self.events.emit(
            "query_planned",
            json!({"queries": queries, "must_have_evidence": plan.must_have_evidence, "stop_conditions": plan.stop_conditions, "mode": if rounds { "rounds" } else { "concurrent" }}),
        );
        Ok(Planned {
            plan,
            queries,
            over_budget,
            rounds,
            agree,
            budget,
        })
    }
}
