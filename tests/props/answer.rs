//! The model-reply parser on arbitrary text and on schema-shaped replies with odd
//! values: it never panics, and what it returns is trimmed and consistent.

use ground::answer::{ModelAnswer, parse_answer};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Value, json};

use crate::strategies::*;

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn model_reply_parser_takes_arbitrary_text(
        prefix in nasty_text(4),
        value in json_value(),
        suffix in nasty_text(4),
        raw in any::<String>(),
        use_raw in prop::bool::weighted(0.3),
        cut in any::<Index>(),
    ) {
        let mut content = if use_raw {
            raw
        } else {
            format!("{prefix}{value}{suffix}")
        };
        // Sometimes cut the reply short, as a token cap does.
        if cut.index(4) == 0 {
            let bounds: Vec<usize> = content.char_indices().map(|(i, _)| i).collect();
            if !bounds.is_empty() {
                content.truncate(bounds[cut.index(bounds.len())]);
            }
        }
        if let Ok(answer) = parse_answer(&content) {
            check_model_answer(&answer)?;
        }
    }

    #[test]
    fn model_reply_parser_reads_schema_shaped_replies(
        answerable in prop::option::of(prop_oneof![
            any::<bool>().prop_map(Value::Bool),
            prop::sample::select(vec!["true", "TRUE", "false", "yes", ""]).prop_map(|s| json!(s)),
            json_value(),
        ]),
        statements in prop::collection::vec(
            (nasty_text(8), prop::collection::vec((json_value(), nasty_text(8)), 0..4)),
            0..5,
        ),
        unknowns in prop::collection::vec(json_value(), 0..4),
        fence in any::<bool>(),
    ) {
        let mut object = serde_json::Map::new();
        if let Some(a) = answerable {
            object.insert("answerable".into(), a);
        }
        object.insert(
            "statements".into(),
            statements
                .iter()
                .map(|(text, cites)| json!({
                    "text": text,
                    "citations": cites.iter().map(|(s, q)| json!({"source": s, "quote": q})).collect::<Vec<_>>(),
                }))
                .collect(),
        );
        object.insert("unknowns".into(), Value::Array(unknowns));
        let body = Value::Object(object).to_string();
        let content = if fence { format!("Sure:\n```json\n{body}\n```\n") } else { body };
        let answer = parse_answer(&content);
        prop_assert!(answer.is_ok(), "{:?} for {}", answer, content);
        let answer = answer.unwrap();
        check_model_answer(&answer)?;
        // Non-empty statements in order, a repeated one (same normal form) said once.
        let mut seen = std::collections::HashSet::new();
        let kept: Vec<&str> = statements
            .iter()
            .map(|(t, _)| t.trim())
            .filter(|t| !t.is_empty())
            .filter(|t| seen.insert(ground::text::normalise(t)))
            .take(ground::answer::MAX_STATEMENTS)
            .collect();
        prop_assert_eq!(
            answer.statements.iter().map(|s| s.text.as_str()).collect::<Vec<_>>(),
            kept
        );
    }
}

fn check_model_answer(answer: &ModelAnswer) -> Result<(), TestCaseError> {
    if answer.answerable {
        prop_assert!(!answer.statements.is_empty());
    }
    for s in &answer.statements {
        prop_assert!(!s.text.is_empty());
        prop_assert_eq!(s.text.trim(), s.text.as_str());
        for c in &s.citations {
            prop_assert_eq!(c.quote.trim(), c.quote.as_str());
        }
    }
    for u in &answer.unknowns {
        prop_assert!(!u.is_empty() && u.trim() == u);
    }
    Ok(())
}
