//! The model's answer as data: statements with the citations the model gave, parsed
//! from its JSON reply, before anything is checked against the sources.
//!
//! Parsing is lenient where small models stumble harmlessly (a code fence around the
//! JSON, `"[1]"` for a source number) and strict about the JSON itself. These types
//! are shared by the llm stage (which produces them) and grounding (which checks
//! them), so they live at the bottom, importing neither.
//!
//! [`stream`] finds the statements of a reply that is still arriving, so that each
//! can be checked and shown the moment it is complete.

pub(crate) mod stream;

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use crate::text::{normalise, shorten};

/// The model's answer, parsed but not yet checked against the sources.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelAnswer {
    /// False when the model says the sources do not answer the question.
    pub answerable: bool,
    /// The answer, one statement per claim.
    pub statements: Vec<ModelStatement>,
    /// What the sources leave open or disagree on.
    pub unknowns: Vec<String>,
    /// Statements, citations and unknowns the reply had beyond the schema's bounds,
    /// dropped on parse (a warning says so).
    pub over_bounds: usize,
}

/// One claim of the answer with the citations the model gave for it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelStatement {
    /// The sentence.
    pub text: String,
    /// Claimed support.
    pub citations: Vec<ModelCitation>,
}

/// A citation as the model wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCitation {
    /// Which source it names.
    pub source: SourceRef,
    /// The supporting quote.
    pub quote: String,
}

/// How a citation names its source: small models write `1`, `"1"`, `"[1]"`, or a URL.
#[derive(Debug, Clone, PartialEq)]
pub enum SourceRef {
    /// A source number (may not exist).
    Number(i64),
    /// A URL (may not be one of ours).
    Url(String),
    /// Anything else, kept for the report.
    Other(String),
}

/// A question the model would ask the user, for a grounding pack.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AskUser {
    /// The question.
    pub q: String,
    /// Why it matters.
    pub why: String,
}

/// The `what_to_ask_user` entries of a reply (empty when absent or malformed).
pub fn parse_questions_for_user(content: &str) -> Vec<AskUser> {
    let Some(value) =
        json_object_slice(content).and_then(|j| serde_json::from_str::<Value>(j).ok())
    else {
        return Vec::new();
    };
    value["what_to_ask_user"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| {
                    let q = item["q"].as_str()?.trim();
                    let why = item["why"].as_str().unwrap_or("").trim();
                    (!q.is_empty()).then(|| AskUser {
                        q: q.to_string(),
                        why: why.to_string(),
                    })
                })
                .take(2)
                .collect()
        })
        .unwrap_or_default()
}

/// The grounding pack's evidence buckets beside `key_points`, in the order they are
/// shown: the keys of the model's reply ([`parse_pack_bucket`]) and of the pack.
pub const PACK_BUCKETS: [&str; 2] = ["norms_and_expectations", "constraints_and_rules"];

/// One item of a grounding pack's bucket (`norms_and_expectations`,
/// `constraints_and_rules`) as the model wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct PackItem {
    /// The item and the citations given for it.
    pub statement: ModelStatement,
    /// Whether the model called it a law, regulation or official policy.
    pub policy_or_legal: bool,
}

/// The items of the bucket `key` in a reply (empty when absent or malformed), at
/// most `max_items`, each with at most `max_citations` citations.
pub fn parse_pack_bucket(
    content: &str,
    key: &str,
    max_items: usize,
    max_citations: usize,
) -> Vec<PackItem> {
    let Some(value) =
        json_object_slice(content).and_then(|j| serde_json::from_str::<Value>(j).ok())
    else {
        return Vec::new();
    };
    let Some(items) = value[key].as_array() else {
        return Vec::new();
    };
    let mut out: Vec<PackItem> = Vec::new();
    for item in items {
        let policy_or_legal = item["policy_or_legal"].as_bool().unwrap_or(false);
        let Some(mut statement) = statement_from_value(item.clone()) else {
            continue;
        };
        if out
            .iter()
            .any(|o| normalise(&o.statement.text) == normalise(&statement.text))
        {
            continue;
        }
        statement.citations.truncate(max_citations);
        out.push(PackItem {
            statement,
            policy_or_legal,
        });
        if out.len() == max_items {
            break;
        }
    }
    out
}

#[derive(Deserialize)]
struct RawAnswer {
    #[serde(default)]
    answerable: Option<Value>,
    #[serde(default)]
    statements: Vec<RawStatement>,
    #[serde(default)]
    unknowns: Vec<Value>,
}

#[derive(Deserialize)]
struct RawStatement {
    #[serde(default)]
    text: String,
    #[serde(default)]
    citations: Vec<RawCitation>,
}

#[derive(Deserialize)]
struct RawCitation {
    #[serde(default)]
    source: Value,
    #[serde(default)]
    quote: String,
}

/// Most statements one answer may have: the schema's hard bound (a request's own
/// bounds may be lower). Statements beyond it are dropped on parse.
pub const MAX_STATEMENTS: usize = 8;
/// Most citations per statement (the schema's hard bound).
pub const MAX_CITATIONS_PER_STATEMENT: usize = 3;
/// Most unknowns kept (the schema asks for at most 2; a few more are tolerated).
pub const MAX_UNKNOWNS: usize = 4;

/// Parses the model's reply text into a [`ModelAnswer`]. Tolerates what models add
/// around JSON (code fences, a sentence before it) but nothing inside it.
///
/// Linear in the reply's size: repeated statements and unknowns are found through a
/// map of their normal forms, never by comparing every pair. What lies beyond the
/// schema's bounds ([`MAX_STATEMENTS`], [`MAX_CITATIONS_PER_STATEMENT`],
/// [`MAX_UNKNOWNS`]) is dropped and counted in [`ModelAnswer::over_bounds`].
pub fn parse_answer(content: &str) -> Result<ModelAnswer, String> {
    let json = json_object_slice(content)
        .ok_or_else(|| "the reply contains no JSON object".to_string())?;
    let raw: RawAnswer = serde_json::from_str(json).map_err(|e| format!("invalid JSON ({e})"))?;
    let mut over_bounds = 0usize;
    // Small models repeat themselves: a statement said twice is said once, with the
    // citations of its first saying. That is what a reader saw when the statement was
    // printed as it streamed, so streamed and whole output stay the same.
    let mut statements: Vec<ModelStatement> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for raw_statement in raw.statements {
        let ModelStatement { text, citations } = model_statement(raw_statement);
        if text.is_empty() {
            continue;
        }
        let key = normalise(&text);
        let index = match seen.get(&key) {
            Some(_) => continue,
            None if statements.len() < MAX_STATEMENTS => {
                seen.insert(key, statements.len());
                statements.push(ModelStatement {
                    text,
                    citations: Vec::new(),
                });
                statements.len() - 1
            }
            None => {
                over_bounds += 1;
                continue;
            }
        };
        let statement = &mut statements[index];
        for citation in citations {
            if statement.citations.contains(&citation) {
                continue;
            }
            if statement.citations.len() < MAX_CITATIONS_PER_STATEMENT {
                statement.citations.push(citation);
            } else {
                over_bounds += 1;
            }
        }
    }
    // A reply that says "not answerable" but still makes cited statements is judged
    // by its citations (small models get the flag wrong); verification decides.
    let cites = statements.iter().any(|s| !s.citations.is_empty());
    let answerable = match raw.answerable {
        Some(Value::Bool(b)) => b || cites,
        Some(Value::String(s)) => s.eq_ignore_ascii_case("true") || cites,
        _ => !statements.is_empty(),
    } && !statements.is_empty();
    // Unknowns that repeat each other or a statement say nothing new.
    let mut unknowns: Vec<String> = Vec::new();
    for unknown in raw.unknowns {
        let Value::String(text) = unknown else {
            continue;
        };
        let text = text.trim().to_string();
        let key = normalise(&text);
        if key.is_empty() || seen.contains_key(&key) {
            continue;
        }
        if unknowns.len() >= MAX_UNKNOWNS {
            over_bounds += 1;
            continue;
        }
        seen.insert(key, usize::MAX);
        unknowns.push(text);
    }
    Ok(ModelAnswer {
        answerable,
        statements,
        unknowns,
        over_bounds,
    })
}

/// One statement as [`parse_answer`] reads it (trimmed, sources resolved to
/// [`SourceRef`]s), from an element of the reply's `"statements"` array that arrived
/// on its own while the reply was still streaming. `None` when the element is not a
/// statement object or its text is empty (the whole-reply parse drops those too).
pub fn statement_from_value(value: Value) -> Option<ModelStatement> {
    let raw: RawStatement = serde_json::from_value(value).ok()?;
    Some(model_statement(raw)).filter(|s| !s.text.is_empty())
}

fn model_statement(raw: RawStatement) -> ModelStatement {
    ModelStatement {
        text: raw.text.trim().to_string(),
        citations: raw
            .citations
            .into_iter()
            .map(|c| ModelCitation {
                source: source_ref(&c.source),
                quote: c.quote.trim().to_string(),
            })
            .collect(),
    }
}

fn source_ref(value: &Value) -> SourceRef {
    match value {
        Value::Number(n) => n
            .as_i64()
            .map(SourceRef::Number)
            .unwrap_or_else(|| SourceRef::Other(n.to_string())),
        Value::String(s) => {
            let t = s.trim();
            if t.starts_with("http://") || t.starts_with("https://") {
                return SourceRef::Url(t.to_string());
            }
            let digits = t
                .trim_start_matches(|c: char| !c.is_ascii_digit())
                .trim_end_matches(|c: char| !c.is_ascii_digit());
            match digits.parse::<i64>() {
                Ok(n) if !digits.is_empty() && t.len() <= 12 => SourceRef::Number(n),
                _ => SourceRef::Other(t.to_string()),
            }
        }
        other => SourceRef::Other(shorten(&other.to_string(), 40)),
    }
}

/// The outermost `{...}` of `text`, matched with string awareness.
pub fn json_object_slice(text: &str) -> Option<&str> {
    let start = text.find('{')?;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text[start..].char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[start..start + i + 1]);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_clean_and_wrapped_json() {
        let clean = r#"{"answerable": true, "statements": [{"text": "A.", "citations": [{"source": 1, "quote": "a"}]}], "unknowns": []}"#;
        let a = parse_answer(clean).unwrap();
        assert!(a.answerable);
        assert_eq!(a.statements[0].citations[0].source, SourceRef::Number(1));
        let fenced = format!("Here you go:\n```json\n{clean}\n```");
        assert_eq!(parse_answer(&fenced).unwrap(), a);
    }

    #[test]
    fn lenient_source_forms() {
        assert_eq!(source_ref(&json!("2")), SourceRef::Number(2));
        assert_eq!(source_ref(&json!("[3]")), SourceRef::Number(3));
        assert_eq!(
            source_ref(&json!("https://x.org/a")),
            SourceRef::Url("https://x.org/a".into())
        );
        assert!(matches!(
            source_ref(&json!("the first one")),
            SourceRef::Other(_)
        ));
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(parse_answer("I think the answer is 42").is_err());
        assert!(parse_answer("{\"statements\": [ {\"text\": \"unterminated").is_err());
        assert!(parse_answer("{\"statements\": 5}").is_err());
    }

    #[test]
    fn cited_statements_outweigh_a_false_flag() {
        let a = parse_answer(r#"{"answerable": false, "statements": [{"text": "It is in September.", "citations": [{"source": 1, "quote": "third Saturday of September"}]}], "unknowns": []}"#).unwrap();
        assert!(a.answerable);
        let b = parse_answer(r#"{"answerable": false, "statements": [{"text": "Nothing found.", "citations": []}], "unknowns": []}"#).unwrap();
        assert!(!b.answerable);
    }

    #[test]
    fn repeated_statements_and_unknowns_are_said_once() {
        let a = parse_answer(r#"{"answerable": true, "statements": [
            {"text": "It is held in September.", "citations": [{"source": 1, "quote": "third Saturday of September"}]},
            {"text": "It is held  in September. ", "citations": [{"source": 1, "quote": "third Saturday of September"}, {"source": 2, "quote": "in the autumn"}]}
        ], "unknowns": ["It is held in September.", "Who started it", "who started it"]}"#).unwrap();
        assert_eq!(a.statements.len(), 1);
        // The first saying's citations: what was printed as the reply streamed.
        assert_eq!(a.statements[0].citations.len(), 1);
        assert_eq!(a.unknowns, vec!["Who started it".to_string()]);
    }

    #[test]
    fn no_statements_means_not_answerable() {
        let a = parse_answer(r#"{"answerable": true, "statements": [], "unknowns": ["when"]}"#)
            .unwrap();
        assert!(!a.answerable);
        assert_eq!(a.unknowns, vec!["when".to_string()]);
    }

    #[test]
    fn a_huge_reply_is_cut_to_the_bounds_in_linear_time() {
        let statement = |i: usize| {
            format!(
                r#"{{"text": "Statement number {i} is here.", "citations": [{{"source": 1, "quote": "q{i}"}}, {{"source": 1, "quote": "r{i}"}}, {{"source": 2, "quote": "s{i}"}}, {{"source": 3, "quote": "t{i}"}}]}}"#
            )
        };
        let body: Vec<String> = (0..8001).map(statement).collect();
        let reply = format!(
            r#"{{"answerable": true, "statements": [{}], "unknowns": ["a", "b", "c", "d", "e", "f"]}}"#,
            body.join(",")
        );
        assert!(reply.len() > 250_000);
        let a = parse_answer(&reply).unwrap();
        assert_eq!(a.statements.len(), MAX_STATEMENTS);
        assert!(
            a.statements
                .iter()
                .all(|s| s.citations.len() == MAX_CITATIONS_PER_STATEMENT)
        );
        assert_eq!(a.unknowns.len(), MAX_UNKNOWNS);
        // 7,993 statements beyond the bound, one citation too many on each of the 8
        // kept, and 2 unknowns too many.
        assert_eq!(a.over_bounds, 7993 + 8 + 2);
    }
}
