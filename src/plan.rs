//! Deciding and planning before the search: the NeedSearch gate (`--auto`), the query
//! planner (`--queries N`), and the ungrounded answer used when no search is made.
//!
//! Each is one strict-JSON model call with a small bounded schema, like the answer
//! call (see [`crate::llm`]). A gate or planner reply that cannot be used does not
//! fail the run: the gate then searches (the safe default for a grounding tool) and
//! the planner falls back to the question itself; both are reported as warnings.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::Error;
use crate::llm::{ChatBackend, ModelReply, ModelRequest};

/// Why a question needs (or does not need) the web, as the gate reports it.
pub const REASON_CODES: [&str; 6] = [
    "TIME_SENSITIVE",
    "CULTURE_NORMS",
    "POLICY_LEGAL",
    "NICHE_ENTITY",
    "GENERAL_KNOWLEDGE",
    "OTHER",
];

/// The gate's verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    /// Whether to search.
    pub need_search: bool,
    /// Reason codes from [`REASON_CODES`].
    pub reason_codes: Vec<String>,
    /// How many queries the gate thinks are worth running (1-3).
    pub max_queries: usize,
}

const GATE_PROMPT: &str = "You decide whether a question needs a live web search to be answered reliably. \
Answer with JSON only. need_search is true when the answer may have changed recently (TIME_SENSITIVE), depends on place or culture (CULTURE_NORMS), on laws or policies (POLICY_LEGAL), or concerns a little-known person, product or thing (NICHE_ENTITY); it is false only for stable general knowledge (GENERAL_KNOWLEDGE) such as arithmetic, definitions or well-known history. When unsure, choose true. max_queries is how many different web searches would help (1 to 3).";

const PLAN_PROMPT: &str = "You turn a question into web search queries. Answer with JSON only: \"queries\" is a list of short keyword queries (not sentences) that together find pages answering the question. Use different wordings or aspects, not repeats.";

const OFFLINE_PROMPT: &str = "Answer the question briefly from your own knowledge. Answer with JSON only: \"answer\" is your answer in a few sentences. If you do not know, say so.";

fn gate_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "need_search": {"type": "boolean"},
            "reason_codes": {"type": "array", "maxItems": 3, "items": {"type": "string", "enum": REASON_CODES}},
            "max_queries": {"type": "integer", "minimum": 1, "maximum": 3}
        },
        "required": ["need_search", "reason_codes", "max_queries"]
    })
}

fn plan_schema(count: usize) -> Value {
    json!({
        "type": "object",
        "properties": {
            "queries": {"type": "array", "minItems": 1, "maxItems": count, "items": {"type": "string", "minLength": 1, "maxLength": 200}}
        },
        "required": ["queries"]
    })
}

fn offline_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"answer": {"type": "string", "minLength": 1, "maxLength": 1500}},
        "required": ["answer"]
    })
}

fn request(
    system: &str,
    user: String,
    schema: Value,
    context_tokens: u32,
    max_tokens: u32,
) -> ModelRequest {
    ModelRequest {
        system: system.into(),
        user,
        schema,
        context_tokens,
        max_answer_tokens: max_tokens,
    }
}

/// One short model call; the reply's JSON object, or why it could not be used.
async fn call(
    client: &impl ChatBackend,
    request: &ModelRequest,
) -> Result<(Value, ModelReply), Result<String, Error>> {
    let reply = client.chat(request).await.map_err(Err)?;
    if reply.done_reason.as_deref() == Some("length") {
        return Err(Ok("the reply was cut off".into()));
    }
    let json = crate::answer::json_object_slice(&reply.content)
        .ok_or_else(|| Ok("the reply is not JSON".to_string()))?;
    let value: Value =
        serde_json::from_str(json).map_err(|e| Ok(format!("the reply is not valid JSON ({e})")))?;
    Ok((value, reply))
}

/// Asks the gate whether `question` needs the web. A server failure is an error
/// (the model is needed for the answer anyway); an unusable reply means "search",
/// with the reason returned as a warning.
pub async fn decide(
    client: &impl ChatBackend,
    question: &str,
    context_tokens: u32,
) -> Result<(Decision, Option<String>), Error> {
    let req = request(
        GATE_PROMPT,
        format!("Question: {question}"),
        gate_schema(),
        context_tokens,
        128,
    );
    let fallback = Decision {
        need_search: true,
        reason_codes: vec!["OTHER".into()],
        max_queries: 3,
    };
    match call(client, &req).await {
        Ok((value, _)) => match parse_decision(&value) {
            Some(decision) => Ok((decision, None)),
            None => Ok((
                fallback,
                Some("the search gate's reply was unusable; searching anyway".into()),
            )),
        },
        Err(Ok(problem)) => Ok((
            fallback,
            Some(format!(
                "the search gate failed ({problem}); searching anyway"
            )),
        )),
        Err(Err(error)) => Err(error),
    }
}

fn parse_decision(value: &Value) -> Option<Decision> {
    #[derive(Deserialize)]
    struct Raw {
        need_search: bool,
        #[serde(default)]
        reason_codes: Vec<String>,
        #[serde(default)]
        max_queries: Option<u64>,
    }
    let raw: Raw = serde_json::from_value(value.clone()).ok()?;
    let reason_codes = raw
        .reason_codes
        .into_iter()
        .filter(|c| REASON_CODES.contains(&c.as_str()))
        .take(3)
        .collect();
    let max_queries = raw.max_queries.unwrap_or(1).clamp(1, 3) as usize;
    Some(Decision {
        need_search: raw.need_search,
        reason_codes,
        max_queries,
    })
}

/// Plans up to `count` search queries for `question`. Returns the queries (the
/// question itself when planning fails or `count` is 1) and a warning if it failed.
pub async fn plan_queries(
    client: &impl ChatBackend,
    question: &str,
    count: usize,
    language: Option<&str>,
    region: Option<&str>,
    context_tokens: u32,
) -> Result<(Vec<String>, Option<String>), Error> {
    if count <= 1 {
        return Ok((vec![question.to_string()], None));
    }
    let mut user = format!("Question: {question}\nAt most {count} queries.");
    if let Some(language) = language {
        user.push_str(&format!(
            "\nWrite the queries in the language with code {language:?}."
        ));
    }
    if let Some(region) = region {
        user.push_str(&format!("\nThe user is in the region {region:?}: prefer queries that find sources for that region."));
    }
    let req = request(PLAN_PROMPT, user, plan_schema(count), context_tokens, 256);
    let queries = match call(client, &req).await {
        Ok((value, _)) => value["queries"]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default(),
        Err(Ok(problem)) => {
            return Ok((
                vec![question.to_string()],
                Some(format!(
                    "the query planner failed ({problem}); searching the question as asked"
                )),
            ));
        }
        Err(Err(error)) => return Err(error),
    };
    let cleaned = dedupe_queries(queries, count);
    if cleaned.is_empty() {
        return Ok((
            vec![question.to_string()],
            Some("the query planner gave no queries; searching the question as asked".into()),
        ));
    }
    Ok((cleaned, None))
}

/// Trims, drops empty and repeated (case-insensitively) queries, caps length and
/// count.
pub fn dedupe_queries(queries: Vec<String>, count: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for q in queries {
        let q: String = crate::text::sanitize_line(&q).chars().take(200).collect();
        if q.is_empty() || out.iter().any(|o| o.eq_ignore_ascii_case(&q)) {
            continue;
        }
        out.push(q);
        if out.len() == count {
            break;
        }
    }
    out
}

/// The model's own answer, with no sources: for `--auto` when no search is needed
/// and for `--fallback offline`.
pub async fn answer_offline(
    client: &impl ChatBackend,
    question: &str,
    context_tokens: u32,
    max_tokens: u32,
) -> Result<(String, ModelReply), Error> {
    let req = request(
        OFFLINE_PROMPT,
        format!("Question: {question}"),
        offline_schema(),
        context_tokens,
        max_tokens,
    );
    let mut last = String::new();
    for _ in 0..2 {
        match call(client, &req).await {
            Ok((value, reply)) => {
                if let Some(answer) = value["answer"]
                    .as_str()
                    .map(str::trim)
                    .filter(|a| !a.is_empty())
                {
                    return Ok((answer.to_string(), reply));
                }
                last = "the reply has no answer".into();
            }
            Err(Ok(problem)) => last = problem,
            Err(Err(error)) => return Err(error),
        }
    }
    Err(Error::ModelBadReply {
        attempts: 2,
        detail: last,
        raw_start: String::new(),
        problem: crate::error::ReplyProblem::Invalid,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_are_parsed_and_bounded() {
        let d = parse_decision(&json!({"need_search": false, "reason_codes": ["GENERAL_KNOWLEDGE", "MADE_UP"], "max_queries": 9})).unwrap();
        assert!(!d.need_search);
        assert_eq!(d.reason_codes, vec!["GENERAL_KNOWLEDGE"]);
        assert_eq!(d.max_queries, 3);
        assert!(parse_decision(&json!({"reason_codes": []})).is_none());
    }

    #[test]
    fn planned_queries_are_cleaned() {
        let q = dedupe_queries(
            vec![
                " tardigrades space ".into(),
                "Tardigrades Space".into(),
                "".into(),
                "water bears\u{1b}[31m vacuum".into(),
                "x".into(),
            ],
            2,
        );
        assert_eq!(q, vec!["tardigrades space", "water bears[31m vacuum"]);
    }
}
