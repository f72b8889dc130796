//! The sanitisers and the prompt builder on nasty text: sanitised text and lines keep
//! no control or bidi characters, `neutralise` leaves no source delimiter, and the
//! context has one block per source it uses, and never exceeds its budget, whatever
//! the pages hold.

use ground::context::{self, SourceText};
use ground::text::{sanitize_line, sanitize_text};
use proptest::prelude::*;

use crate::strategies::*;

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn sanitizers_leave_no_control_or_bidi_chars(s in nasty_text(30)) {
        let text = sanitize_text(&s);
        assert_clean(&text)?;
        prop_assert_eq!(sanitize_text(&text), text.clone(), "idempotent");
        let line = sanitize_line(&s);
        assert_clean(&line)?;
        prop_assert!(!line.contains(['\n', '\t']), "{:?}", line);
        prop_assert!(!line.contains("  ") && line.trim() == line, "{:?}", line);
    }

    #[test]
    fn neutralise_leaves_no_source_delimiter(s in nasty_text(30)) {
        let out = context::neutralise(&s);
        let lower = out.to_ascii_lowercase();
        prop_assert!(!lower.contains("<source") && !lower.contains("</source"), "{:?}", out);
        if !s.contains('<') {
            prop_assert_eq!(out, s);
        }
    }

    #[test]
    fn context_has_one_block_per_source_used_and_never_exceeds_its_budget(
        pages in prop::collection::vec((nasty_text(6), nasty_text(6), nasty_text(40)), 0..11),
        question in nasty_text(4),
        budget in 0u32..3000,
    ) {
        let sources: Vec<SourceText> = pages
            .into_iter()
            .enumerate()
            .map(|(i, (url, title, text))| SourceText { number: i + 1, url, title, text })
            .collect();
        for ctx in [context::build(&sources, budget), context::build_for_question(&sources, &question, budget)] {
            let used = ctx.sources.iter().filter(|c| c.used()).count();
            let lower = ctx.text.to_ascii_lowercase();
            prop_assert_eq!(lower.matches("<source").count(), used, "{}", ctx.text);
            prop_assert_eq!(lower.matches("</source").count(), used, "{}", ctx.text);
            prop_assert_eq!(ctx.text.matches("<source id=\"").count(), used);
            prop_assert_eq!(ctx.sources.len(), sources.len());
            prop_assert!(ctx.estimated_tokens <= budget, "{} > {}", ctx.estimated_tokens, budget);
            for (cut, source) in ctx.sources.iter().zip(&sources) {
                prop_assert!(cut.chars_sent <= cut.chars_extracted || !cut.truncated);
                prop_assert_eq!(cut.chars_extracted, source.text.chars().count());
            }
        }
    }
}
