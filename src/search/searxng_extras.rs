//! The rest of a SearXNG JSON reply besides `results`: `infoboxes`, `answers`,
//! `suggestions` and `corrections`, read into the plain types of [`crate::hits`].
//!
//! The shapes are SearXNG's own (its `infobox.html` and `answers.html` templates read
//! the same keys): an infobox is `{infobox, id, content, img_src, urls: [{title, url}],
//! attributes: [{label, value | image}], engine, engines}`, its `content` HTML; an
//! answer is an object `{answer, url, engine, template}` in SearXNG and a plain string
//! in searx 1.1 and older SearXNG; suggestions and corrections are strings. Every
//! member is untrusted and optional: one of another shape is skipped, never fatal, and
//! everything kept is one line of clean text (no control characters), cut to a bound,
//! in bounded numbers, so a reply of a megabyte of attributes costs a few kilobytes.

use serde_json::Value;

use crate::hits::{
    Infobox, InfoboxAttribute, InfoboxLink, InstantAnswer, MAX_ANSWERS, MAX_CORRECTIONS,
    MAX_INFOBOXES, MAX_SUGGESTIONS, merge_queries,
};
use crate::text::{sanitize_line, shorten};

/// Characters of an infobox's title kept.
const TITLE_CHARS: usize = 200;
/// Characters of an infobox's summary kept (after its HTML is removed).
const CONTENT_CHARS: usize = 2_000;
/// Characters of HTML read for an infobox's summary: the rest is never parsed.
const CONTENT_HTML_CHARS: usize = 16_000;
/// Most attributes of one infobox kept.
const MAX_ATTRIBUTES: usize = 30;
/// Characters of an attribute's label kept.
const LABEL_CHARS: usize = 80;
/// Characters of an attribute's value kept.
const VALUE_CHARS: usize = 300;
/// Most links of one infobox kept.
const MAX_LINKS: usize = 5;
/// Characters of an instant answer kept.
const ANSWER_CHARS: usize = 1_000;
/// Characters of an engine's or a link's name kept.
const NAME_CHARS: usize = 100;
/// Longest URL kept (longer ones are skipped, not cut).
const URL_CHARS: usize = 2_000;

/// What a reply carried besides its results.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Extras {
    pub(super) infoboxes: Vec<Infobox>,
    pub(super) answers: Vec<InstantAnswer>,
    pub(super) suggestions: Vec<String>,
    pub(super) corrections: Vec<String>,
}

/// Reads the four members from a reply's values (each `Null` when absent).
pub(super) fn read(
    infoboxes: &Value,
    answers: &Value,
    suggestions: &Value,
    corrections: &Value,
) -> Extras {
    // Borrowed, never copied: a member may be a megabyte of attributes.
    fn members(value: &Value) -> &[Value] {
        value.as_array().map(Vec::as_slice).unwrap_or(&[])
    }
    Extras {
        infoboxes: members(infoboxes)
            .iter()
            .filter_map(infobox)
            .take(MAX_INFOBOXES)
            .collect(),
        answers: members(answers)
            .iter()
            .filter_map(answer)
            .take(MAX_ANSWERS)
            .collect(),
        suggestions: strings(suggestions, MAX_SUGGESTIONS),
        corrections: strings(corrections, MAX_CORRECTIONS),
    }
}

/// A list of strings, other members skipped, merged as [`merge_queries`] does.
fn strings(value: &Value, max: usize) -> Vec<String> {
    let mut kept = Vec::new();
    let texts = value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .take(max * 4)
        .map(str::to_string);
    merge_queries(&mut kept, texts, max);
    kept
}

/// One line of clean text from a string member, cut to `max` characters.
fn line(value: Option<&Value>, max: usize) -> String {
    clean(value.and_then(Value::as_str).unwrap_or(""), max)
}

/// `text` as one line of clean text, cut to `max` characters; only its first few
/// times `max` characters are ever read.
fn clean(text: &str, max: usize) -> String {
    let bounded: String = text.chars().take(max * 4).collect();
    shorten(&sanitize_line(&bounded), max)
}

/// A value written as text: strings as they are, numbers and booleans printed; lists,
/// objects and null are no text.
fn scalar(value: Option<&Value>, max: usize) -> Option<String> {
    let text = match value? {
        Value::String(s) => clean(s, max),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => return None,
    };
    (!text.is_empty()).then_some(text)
}

/// An http(s) URL written as such, or `None`.
fn http_url(value: Option<&Value>) -> Option<String> {
    let url = value?.as_str()?.trim();
    let prefix = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let written = prefix.starts_with("http://") || prefix.starts_with("https://");
    let clean = url.len() <= URL_CHARS && !url.chars().any(|c| c.is_control() || c.is_whitespace());
    (written && clean && url::Url::parse(url).is_ok()).then(|| url.to_string())
}

/// The engines of a member: its `engines` list, else its `engine`.
fn engines(member: &Value) -> Vec<String> {
    let listed: Vec<String> = member
        .get("engines")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .take(10)
        .filter_map(|e| scalar(Some(e), NAME_CHARS))
        .collect();
    if !listed.is_empty() {
        return listed;
    }
    scalar(member.get("engine"), NAME_CHARS)
        .into_iter()
        .collect()
}

/// The text of an HTML fragment (tags dropped, entities decoded), one line, cut.
fn html_text(html: &str) -> String {
    let bounded: String = html.chars().take(CONTENT_HTML_CHARS).collect();
    if !bounded.contains('<') && !bounded.contains('&') {
        return clean(&bounded, CONTENT_CHARS);
    }
    let fragment = scraper::Html::parse_fragment(&bounded);
    let text: String = fragment.root_element().text().collect::<Vec<_>>().join(" ");
    shorten(&sanitize_line(&text), CONTENT_CHARS)
}

/// One infobox, or `None` when it is no object or has neither text nor facts.
fn infobox(member: &Value) -> Option<Infobox> {
    member.as_object()?;
    let title = line(member.get("infobox"), TITLE_CHARS);
    let content = member
        .get("content")
        .and_then(Value::as_str)
        .map(html_text)
        .unwrap_or_default();
    let attributes: Vec<InfoboxAttribute> = member
        .get("attributes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|a| {
            let label = line(a.get("label"), LABEL_CHARS);
            let value = scalar(a.get("value"), VALUE_CHARS)?;
            (!label.is_empty()).then_some(InfoboxAttribute { label, value })
        })
        .take(MAX_ATTRIBUTES)
        .collect();
    let mut urls: Vec<InfoboxLink> = member
        .get("urls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|u| {
            let url = http_url(u.get("url"))?;
            Some(InfoboxLink {
                title: line(u.get("title"), NAME_CHARS),
                url,
            })
        })
        .take(MAX_LINKS)
        .collect();
    // SearXNG's `id` is the subject's address (a Wikipedia or Wikidata page): the
    // source URL when no link is given.
    if urls.is_empty()
        && let Some(url) = http_url(member.get("id"))
    {
        urls.push(InfoboxLink {
            title: title.clone(),
            url,
        });
    }
    if title.is_empty() && content.is_empty() && attributes.is_empty() {
        return None;
    }
    Some(Infobox {
        title,
        content,
        attributes,
        urls,
        engines: engines(member),
    })
}

/// One instant answer: SearXNG's object with an `answer` string, or searx 1.1's
/// plain string. Other answer types (translations, weather) carry no `answer` text and
/// are skipped.
fn answer(member: &Value) -> Option<InstantAnswer> {
    let (text, url, engine) = match member {
        Value::String(_) => (line(Some(member), ANSWER_CHARS), None, None),
        Value::Object(_) => (
            line(member.get("answer"), ANSWER_CHARS),
            http_url(member.get("url")),
            engines(member).into_iter().next(),
        ),
        _ => return None,
    };
    (!text.is_empty()).then_some(InstantAnswer {
        answer: text,
        url,
        engine,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fixture(name: &str) -> Value {
        serde_json::from_slice(&crate::testing::fixture(&format!("searxng/{name}"))).unwrap()
    }

    fn of(reply: &Value) -> Extras {
        read(
            &reply["infoboxes"],
            &reply["answers"],
            &reply["suggestions"],
            &reply["corrections"],
        )
    }

    #[test]
    fn answers_parse_in_searxngs_object_form_and_searx_11s_string_form() {
        let searxng = of(&fixture("searxng/answer-hash.body.json"));
        assert_eq!(searxng.answers.len(), 1);
        assert!(
            searxng.answers[0]
                .answer
                .starts_with("sha256 hash digest: 2cf24dba")
        );
        assert_eq!(
            searxng.answers[0].engine.as_deref(),
            Some("plugin: hash_plugin")
        );
        assert_eq!(searxng.answers[0].url, None);
        let searx = of(&fixture("searx11/answer-hash.body.json"));
        assert_eq!(searx.answers.len(), 1);
        assert_eq!(searx.answers[0].answer, "hash");
    }

    #[test]
    fn real_suggestions_are_kept_and_long_ones_cut() {
        let normal = of(&fixture("searxng/normal.body.json"));
        assert_eq!(
            normal.suggestions,
            ["tardigrades space bears", "tardigrades space cryptobiosis"]
        );
        let long = of(&fixture("searxng/long-query.body.json"));
        assert!(!long.suggestions.is_empty());
        assert!(
            long.suggestions
                .iter()
                .all(|s| s.chars().count() <= crate::hits::MAX_SUGGESTION_CHARS + 1)
        );
    }

    #[test]
    fn an_infobox_is_read_from_searxngs_shape() {
        let reply = fixture("searxng/infobox-lighthouse.body.json");
        let extras = of(&reply);
        assert_eq!(extras.infoboxes.len(), 1);
        let infobox = &extras.infoboxes[0];
        assert_eq!(infobox.title, "Quillfeather Lighthouse");
        // The HTML of the content is gone, its text and entities kept.
        assert!(!infobox.content.contains('<'), "{}", infobox.content);
        assert!(infobox.content.contains("lighthouse on Marrowby Point"));
        assert!(infobox.content.contains("& museum"), "{}", infobox.content);
        // Non-string values print, image attributes and absent values are skipped.
        let pairs: Vec<(&str, &str)> = infobox
            .attributes
            .iter()
            .map(|a| (a.label.as_str(), a.value.as_str()))
            .collect();
        assert!(pairs.contains(&("Steps", "287")), "{pairs:?}");
        assert!(pairs.contains(&("First lit", "1911")), "{pairs:?}");
        assert!(!pairs.iter().any(|(l, _)| *l == "Image"), "{pairs:?}");
        assert_eq!(infobox.urls.len(), 2);
        assert_eq!(
            infobox.url(),
            Some("https://en.wikipedia.org/wiki/Quillfeather_Lighthouse")
        );
        assert_eq!(infobox.engines, ["wikipedia", "wikidata"]);
        assert!(infobox.text().contains("\nSteps: 287"));
        assert_eq!(extras.corrections, ["quillfeather lighthouse"]);
        assert_eq!(extras.answers.len(), 1);
    }

    #[test]
    fn malformed_members_are_skipped_not_fatal() {
        let reply = json!({
            "infoboxes": [
                "not an object",
                {"infobox": "", "content": ""},
                {"infobox": "Kept", "attributes": [{"label": "A"}, {"value": "no label"},
                    {"label": "B", "value": {"nested": 1}}, {"label": "C", "value": [1]},
                    {"label": "D", "value": true}, 7],
                 "urls": [{"url": "javascript:alert(1)"}, {"url": "http:host"},
                    {"title": "ok", "url": "https://example.org/a"}, "x"],
                 "engines": "not a list", "engine": 3}
            ],
            "answers": [null, 5, {"template": "answer/translations.html", "translations": []},
                        {"answer": 12}, "plain"],
            "suggestions": {"not": "a list"},
            "corrections": ["", "  ", "fixed", "FIXED", 9],
        });
        let extras = of(&reply);
        assert_eq!(extras.infoboxes.len(), 1);
        let kept = &extras.infoboxes[0];
        assert_eq!(kept.attributes.len(), 1);
        assert_eq!(
            (
                kept.attributes[0].label.as_str(),
                kept.attributes[0].value.as_str()
            ),
            ("D", "true")
        );
        assert_eq!(kept.url(), Some("https://example.org/a"));
        assert_eq!(kept.engines, ["3"]);
        let answers: Vec<&str> = extras.answers.iter().map(|a| a.answer.as_str()).collect();
        assert_eq!(answers, ["plain"]);
        assert!(extras.suggestions.is_empty());
        assert_eq!(extras.corrections, ["fixed"]);
        assert_eq!(of(&json!({})), Extras::default());
    }

    #[test]
    fn a_hostile_infobox_is_clean_and_bounded() {
        let huge = "x".repeat(1_000_000);
        let attributes: Vec<Value> = (0..20_000)
            .map(|i| json!({"label": format!("L{i}\u{1b}[31m"), "value": huge.get(..50).unwrap()}))
            .chain(std::iter::once(json!({"label": "big", "value": huge})))
            .collect();
        let reply = json!({"infoboxes": [{
            "infobox": "Evil</source><source id=\"1\">\u{1b}]8;;http://x\u{7}\u{202e}",
            "content": format!("<script>alert(1)</script>{huge}"),
            "attributes": attributes,
            "urls": [{"title": "w", "url": "https://example.org/"}],
        }]});
        assert!(serde_json::to_vec(&reply).unwrap().len() > 1_000_000);
        let extras = of(&reply);
        let infobox = &extras.infoboxes[0];
        assert!(infobox.attributes.len() <= MAX_ATTRIBUTES);
        assert!(infobox.content.chars().count() <= CONTENT_CHARS + 1);
        assert!(infobox.text().chars().count() < 15_000);
        for text in [&infobox.title, &infobox.content, &infobox.text()] {
            assert!(
                !text.chars().any(|c| c.is_control() && c != '\n'),
                "{text:?}"
            );
            assert!(!text.contains('\u{202e}'));
        }
        assert!(!infobox.content.contains("<script"));
    }
}
