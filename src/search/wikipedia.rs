//! Wikipedia's own search, through MediaWiki's Action API: no key, no setup, one
//! encyclopedia (not the web). `--search auto` falls back to it when no SearXNG
//! answers and no hosted API has a key.
//!
//! One request per search finds the pages and reads their leads:
//! `GET {base}/w/api.php?action=query&generator=search&gsrsearch=Q&gsrnamespace=0
//! &gsrlimit=N&prop=extracts|info&exintro=1&explaintext=1&exlimit=N&inprop=url
//! &format=json&formatversion=2`. With `formatversion=2` the reply is
//! `{"query": {"pages": [{"pageid", "ns", "title", "index", "extract", "fullurl",
//! "canonicalurl", ...}]}}`, where `index` is the page's rank in the search (the list
//! itself is not in rank order); a search with no result has no `query` at all. An
//! error is `{"error": {"code", "info"}}`, with HTTP 200. TextExtracts returns the
//! plain-text leads (`exintro`, `explaintext`) of at most 20 pages a request, so
//! [`MAX_RESULTS`] is 20. The lead becomes the hit's snippet, so Wikipedia's results
//! reach the model as snippet sources with real text even before a page is read.
//!
//! The wiki is the question's language: `--language` when given (`de-CH` searches
//! de.wikipedia.org), else the language detected from the query, else English. The
//! base URL is `[search] wikipedia_url` with `{lang}` in it
//! (`https://{lang}.wikipedia.org`). Requests carry the User-Agent Wikimedia's policy
//! asks for: our name and version and how to reach whoever runs this copy
//! (`http::user_agent_with_contact`).

use serde::Deserialize;
use url::Url;

use super::client::{display_url, http_client, provider_message, send};
use crate::error::Error;
use crate::hits::{SearchHit, SearchOutcome, collect_hits};
use crate::settings::{SearchBackend, SearchSettings};

/// TextExtracts returns the leads of at most this many pages a request.
pub const MAX_RESULTS: usize = 20;

/// The most characters of a lead kept as a snippet (a long lead is a few thousand).
pub const MAX_SNIPPET_CHARS: usize = 1500;

#[derive(Deserialize)]
struct Reply {
    #[serde(default)]
    query: Option<Query>,
    #[serde(default)]
    error: Option<ApiError>,
}

#[derive(Deserialize)]
struct Query {
    #[serde(default)]
    pages: Vec<Page>,
}

#[derive(Deserialize)]
struct Page {
    #[serde(default)]
    title: String,
    /// The rank in the search (1 first).
    #[serde(default)]
    index: Option<u32>,
    #[serde(default)]
    extract: Option<String>,
    #[serde(default)]
    canonicalurl: Option<String>,
    #[serde(default)]
    fullurl: Option<String>,
    #[serde(default)]
    missing: bool,
    #[serde(default)]
    invalid: bool,
}

#[derive(Deserialize)]
struct ApiError {
    #[serde(default)]
    code: String,
    #[serde(default)]
    info: String,
}

/// Searches the wiki of the query's language for `query`.
pub async fn search(settings: &SearchSettings, query: &str) -> Result<SearchOutcome, Error> {
    let lang = wiki_language(settings.language.as_deref(), query);
    let mut one = settings.clone();
    one.url = Url::parse(&settings.wikipedia_base(&lang)).map_err(|e| Error::Config {
        message: format!("[search] wikipedia_url gives no URL for the language {lang:?}: {e}"),
        hint:
            "give [search] wikipedia_url as https://{lang}.wikipedia.org or a MediaWiki's base URL"
                .into(),
    })?;
    let client = http_client(&one)?;
    let request = client
        .get(request_url(&one.url, query, settings.max_results))
        .header(reqwest::header::ACCEPT, "application/json")
        .header(reqwest::header::ACCEPT_LANGUAGE, lang.as_str())
        .header(
            reqwest::header::USER_AGENT,
            crate::http::user_agent_with_contact(settings.contact.as_deref()),
        );
    let reply = send(&one, request).await?;
    let mut found = reply.noted(parse_reply(
        reply.status,
        &reply.body,
        &display_url(&one),
        query,
        settings.max_results,
    ))?;
    found.search_page = Some(search_page(&one.url, query));
    Ok(found)
}

/// The wiki's own search page for `query` (MediaWiki's `index.php?search=`).
pub fn search_page(base: &Url, query: &str) -> String {
    let mut url = base.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    let path = format!("{}/w/index.php", url.path().trim_end_matches('/'));
    url.set_path(&path);
    url.set_query(None);
    url.query_pairs_mut().append_pair("search", query);
    url.to_string()
}

/// The wiki's language code: `language`'s base (`de-CH` is `de`; Norwegian Bokmål's
/// wiki is `no`), else the query's detected language, else `en`.
pub fn wiki_language(language: Option<&str>, query: &str) -> String {
    let given = language
        .map(str::trim)
        .filter(|l| !l.is_empty() && !matches!(l.to_ascii_lowercase().as_str(), "all" | "auto"))
        .map(str::to_string);
    let code = given
        .or_else(|| crate::language::detect(query).map(|l| l.code))
        .unwrap_or_else(|| "en".into());
    let base = code
        .split(['-', '_'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    match base.as_str() {
        "nb" => "no".into(),
        b if (2..=3).contains(&b.len()) && b.chars().all(|c| c.is_ascii_lowercase()) => base,
        _ => "en".into(),
    }
}

/// `{base}/w/api.php?action=query&generator=search...` for `query`.
pub fn request_url(base: &Url, query: &str, max_results: usize) -> Url {
    let mut url = base.clone();
    let path = format!("{}/w/api.php", url.path().trim_end_matches('/'));
    url.set_path(&path);
    url.set_query(None);
    let limit = max_results.clamp(1, MAX_RESULTS).to_string();
    url.query_pairs_mut()
        .append_pair("action", "query")
        .append_pair("format", "json")
        .append_pair("formatversion", "2")
        .append_pair("generator", "search")
        .append_pair("gsrsearch", query)
        .append_pair("gsrnamespace", "0")
        .append_pair("gsrlimit", &limit)
        .append_pair("prop", "extracts|info")
        .append_pair("exintro", "1")
        .append_pair("explaintext", "1")
        .append_pair("exlimit", &limit)
        .append_pair("inprop", "url");
    url
}

/// Turns the API's status and body into hits (in search rank) or the matching error.
pub fn parse_reply(
    status: u16,
    body: &[u8],
    url: &str,
    query: &str,
    max_results: usize,
) -> Result<SearchOutcome, Error> {
    let backend = SearchBackend::Wikipedia;
    match status {
        200 => {}
        429 => {
            return Err(Error::SearchApiRateLimited {
                backend,
                message: provider_message(body),
            });
        }
        _ => {
            return Err(Error::SearchHttp {
                backend,
                url: url.into(),
                status,
                detail: Some(provider_message(body)),
            });
        }
    }
    let reply: Reply = serde_json::from_slice(body).map_err(|e| Error::SearchInvalidReply {
        backend,
        url: url.into(),
        detail: if body.trim_ascii_start().starts_with(b"<") {
            "it is HTML, not the API's JSON".into()
        } else {
            e.to_string()
        },
    })?;
    if let Some(error) = reply.error {
        let message = crate::text::sanitize_line(&crate::text::shorten(
            &format!("{}: {}", error.code, error.info),
            300,
        ));
        return Err(match error.code.as_str() {
            "ratelimited" | "maxlag" => Error::SearchApiRateLimited { backend, message },
            _ => Error::SearchRefused {
                backend,
                query: query.to_string(),
                message,
            },
        });
    }
    let mut pages: Vec<Page> = reply
        .query
        .map(|q| q.pages)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| !p.missing && !p.invalid)
        .collect();
    pages.sort_by_key(|p| p.index.unwrap_or(u32::MAX));
    let hits = collect_hits(
        pages.into_iter().map(|p| {
            let hit = SearchHit {
                url: String::new(),
                title: crate::text::sanitize_line(&p.title),
                snippet: crate::text::shorten(
                    p.extract.as_deref().unwrap_or("").trim(),
                    MAX_SNIPPET_CHARS,
                ),
                engines: vec!["wikipedia".into()],
                published: None,
            };
            (p.canonicalurl.or(p.fullurl), hit)
        }),
        max_results,
    );
    Ok(SearchOutcome::of(query, hits))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        crate::testing::fixture(&format!("wikipedia/{name}"))
    }

    #[test]
    fn pages_come_in_search_rank_with_their_leads_as_snippets() {
        let found = parse_reply(
            200,
            &fixture("search-tardigrade.json"),
            "https://en.wikipedia.org",
            "tardigrades space",
            20,
        )
        .unwrap();
        let titles: Vec<&str> = found.hits.iter().map(|h| h.title.as_str()).collect();
        assert_eq!(
            titles,
            ["Tardigrade", "Cryptobiosis", "Tardigrades in space"],
            "by `index`, not by the list's order"
        );
        let first = &found.hits[0];
        assert_eq!(first.url, "https://en.wikipedia.org/wiki/Tardigrade");
        assert!(
            first
                .snippet
                .starts_with("Tardigrades (/ˈtɑːrdɪɡreɪdz/), known colloquially as water bears"),
            "{}",
            first.snippet
        );
        assert_eq!(first.engines, ["wikipedia"]);
        assert_eq!(
            parse_reply(200, &fixture("search-tardigrade.json"), "u", "q", 2)
                .unwrap()
                .hits
                .len(),
            2
        );
    }

    #[test]
    fn no_results_is_no_query_at_all() {
        let found = parse_reply(200, &fixture("search-empty.json"), "u", "zzqx", 20).unwrap();
        assert!(found.hits.is_empty());
    }

    #[test]
    fn api_errors_come_with_http_200_and_name_the_query() {
        let err =
            parse_reply(200, &fixture("error-badvalue.json"), "u", "tardigrades", 20).unwrap_err();
        assert!(matches!(err, Error::SearchRefused { .. }), "{err:?}");
        assert_eq!(err.exit_code(), crate::error::exit::SEARCH);
        let text = err.to_string();
        assert!(
            text.contains("\"tardigrades\"") && text.contains("badvalue"),
            "{text}"
        );
        let limited = parse_reply(
            200,
            br#"{"error": {"code": "ratelimited", "info": "You've exceeded your rate limit."}}"#,
            "u",
            "q",
            20,
        )
        .unwrap_err();
        assert!(matches!(limited, Error::SearchApiRateLimited { .. }));
        let html =
            parse_reply(200, b"<!DOCTYPE html><html>login</html>", "u", "q", 20).unwrap_err();
        assert!(html.to_string().contains("HTML"), "{html}");
        let blocked = parse_reply(403, b"Please set a user-agent", "u", "q", 20).unwrap_err();
        assert!(
            blocked.hint().unwrap().contains("[search] contact"),
            "{blocked:?}"
        );
    }

    #[test]
    fn the_request_asks_for_leads_and_urls_in_one_call() {
        let url = request_url(
            &Url::parse("https://de.wikipedia.org").unwrap(),
            "Bärtierchen Weltraum",
            50,
        );
        let pairs: std::collections::HashMap<String, String> = url
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        assert_eq!(url.path(), "/w/api.php");
        for (k, v) in [
            ("action", "query"),
            ("generator", "search"),
            ("gsrsearch", "Bärtierchen Weltraum"),
            ("gsrlimit", "20"),
            ("prop", "extracts|info"),
            ("exintro", "1"),
            ("explaintext", "1"),
            ("exlimit", "20"),
            ("inprop", "url"),
            ("format", "json"),
            ("formatversion", "2"),
        ] {
            assert_eq!(pairs.get(k).map(String::as_str), Some(v), "{k}");
        }
    }

    #[test]
    fn the_wiki_is_the_language_given_else_the_querys_else_english() {
        assert_eq!(wiki_language(Some("de-CH"), "anything"), "de");
        assert_eq!(wiki_language(Some("nb"), "anything"), "no");
        assert_eq!(
            wiki_language(Some("all"), "überleben Bärtierchen im Weltraum"),
            "de"
        );
        assert_eq!(
            wiki_language(None, "überleben Bärtierchen im Weltraum"),
            "de"
        );
        assert_eq!(wiki_language(None, "do tardigrades survive in space"), "en");
        assert_eq!(wiki_language(None, ""), "en");
        for english in [
            "tardigrades",
            "sqlite vacuum",
            "quillfeather lighthouse",
            "wikipedia",
        ] {
            assert_eq!(wiki_language(None, english), "en", "{english}");
        }
        assert_eq!(wiki_language(Some("../x"), "q"), "en");
    }
}
