//! The images search: a query in, [`ImageHit`]s out, from the two services that have
//! one. SearXNG's images category (`GET /search?q=..&format=json&categories=images`;
//! its image results carry `img_src`, `thumbnail_src`, the page `url`, `title`,
//! `resolution` such as "1920 x 1080", `img_format`, `engine`, template
//! `images.html`) and Brave's Image Search API (`GET {base}/res/v1/images/search`,
//! its results `{title, url, source, thumbnail{src, width, height},
//! properties{url, placeholder, width, height}}`), counted against the month's quota
//! like its web search (one query per reply, through [`super::client::send`]). The
//! other services have no images search: [`Error::ImagesUnsupported`].
//!
//! ground never downloads an image: only the search service is asked, and the
//! addresses it gives are passed on as links, http(s) only (see [`crate::image_hits`]).
//! A SearXNG instance with its JSON format off is not read through its HTML page here
//! (the web search does that): its error names the `formats` setting to change.

use serde_json::Value;
use url::Url;

use super::client::{display_url, http_client, send};
use super::hosted;
use crate::error::Error;
use crate::image_hits::{self, ImageHit, MAX_IMAGES};
use crate::settings::{SearchBackend, SearchSettings};
use crate::text::{sanitize_line, shorten};

/// Brave's image search returns at most this many results per request.
pub const BRAVE_MAX_COUNT: usize = 200;

/// What an images search found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImagesOutcome {
    /// The query that ran.
    pub query: String,
    /// The images in rank order, de-duplicated by image URL.
    pub images: Vec<ImageHit>,
    /// What the user should know about how they were got (an instance that failed
    /// over, a quota file that could not be used).
    pub warnings: Vec<String>,
    /// Images dropped for lying outside `--site` / `--exclude-site`.
    pub dropped: usize,
    /// The service that answered (SearXNG or Brave); `None` before one did.
    pub backend: Option<SearchBackend>,
}

impl ImagesOutcome {
    /// Drops the images whose page (else the image) lies outside `filter`; returns
    /// how many were dropped.
    pub fn keep_sites(&mut self, filter: &crate::sites::SiteFilter) -> usize {
        if filter.is_empty() {
            return 0;
        }
        let before = self.images.len();
        self.images.retain(|image| filter.allows(image.site_url()));
        let dropped = before - self.images.len();
        self.dropped += dropped;
        dropped
    }
}

/// Whether `backend` has an images search.
pub fn supported(backend: SearchBackend) -> bool {
    matches!(backend, SearchBackend::Searxng | SearchBackend::Brave)
}

/// Sends the images search for `query` (already with its `site:` terms) to the
/// service `settings` name, which must be SearXNG or Brave.
pub(super) async fn send_search(
    settings: &SearchSettings,
    query: &str,
    max: usize,
) -> Result<ImagesOutcome, Error> {
    match settings.backend {
        SearchBackend::Searxng => searxng(settings, query, max).await,
        SearchBackend::Brave => brave(settings, query, max).await,
        backend => Err(Error::ImagesUnsupported { backend }),
    }
}

/// SearXNG's images category, the configured instances tried in order like the web
/// search: the next one when one is unreachable, answers 5xx or 429, or has JSON off.
async fn searxng(
    settings: &SearchSettings,
    query: &str,
    max: usize,
) -> Result<ImagesOutcome, Error> {
    let instances: Vec<&Url> = settings.searxng_urls().collect();
    let mut warnings = Vec::new();
    let mut first_error = None;
    for (i, url) in instances.iter().enumerate() {
        let mut one = settings.clone();
        one.url = (*url).clone();
        let outcome = searxng_one(&one, query, max).await;
        match outcome {
            Err(error)
                if i + 1 < instances.len() && super::searxng::worth_the_next_instance(&error) =>
            {
                warnings.push(format!(
                    "SearXNG at {} failed ({}); trying the next instance, {}",
                    display_url(&one),
                    sanitize_line(&shorten(&error.to_string(), 400)),
                    crate::http::display_url(instances[i + 1])
                ));
                first_error.get_or_insert(error);
            }
            Err(error) => return Err(first_error.unwrap_or(error)),
            Ok(mut found) => {
                warnings.append(&mut found.warnings);
                found.warnings = warnings;
                return Ok(found);
            }
        }
    }
    unreachable!("the last instance always returns")
}

/// The images request to one instance: the web search's parameters with
/// `categories=images` and no `engines` (the configured ones are the web's).
pub fn searxng_url(settings: &SearchSettings, query: &str) -> Url {
    let mut images = settings.clone();
    images.categories = Some("images".into());
    images.engines = None;
    super::searxng::request_url(&images, query)
}

/// One SearXNG instance's images.
async fn searxng_one(
    settings: &SearchSettings,
    query: &str,
    max: usize,
) -> Result<ImagesOutcome, Error> {
    let language = settings.language.as_deref().unwrap_or("en");
    let request = http_client(settings)?
        .get(searxng_url(settings, query))
        .header(reqwest::header::ACCEPT, "application/json")
        .header(
            reqwest::header::ACCEPT_LANGUAGE,
            format!("{language}, en;q=0.5"),
        );
    let reply = send(settings, request).await?;
    if reply.status != 200 {
        // The web search's reading of SearXNG's statuses (403 JSON off, 429, 400).
        super::searxng::parse_reply(reply.status, &reply.body, &display_url(settings), 0)?;
    }
    let mut found = parse_searxng(&reply.body, &display_url(settings), max)?;
    found.query = query.to_string();
    Ok(found)
}

/// Reads SearXNG's JSON reply: its results with an http(s) `img_src` (the image
/// results; the rest of a mixed reply, general results with `img_src: ""`, are
/// skipped), at most `max`.
pub fn parse_searxng(body: &[u8], url: &str, max: usize) -> Result<ImagesOutcome, Error> {
    let reply: Value = serde_json::from_slice(body).map_err(|e| Error::SearchInvalidReply {
        backend: SearchBackend::Searxng,
        url: url.into(),
        detail: e.to_string(),
    })?;
    let Some(results) = reply.get("results").and_then(Value::as_array) else {
        return Err(Error::SearchInvalidReply {
            backend: SearchBackend::Searxng,
            url: url.into(),
            detail: "it has no `results` list".into(),
        });
    };
    let mut images = Vec::new();
    for result in results {
        if images.len() >= max.min(MAX_IMAGES) {
            break;
        }
        if let Some(image) = searxng_image(result) {
            image_hits::push_unique(&mut images, image, max.min(MAX_IMAGES));
        }
    }
    Ok(ImagesOutcome {
        query: reply
            .get("query")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        images,
        ..ImagesOutcome::default()
    })
}

/// One SearXNG result as an image, or `None` without an http(s) `img_src`.
fn searxng_image(result: &Value) -> Option<ImageHit> {
    let text = |key: &str| result.get(key).and_then(Value::as_str).unwrap_or("");
    let image_url = image_hits::http_url(text("img_src"))?;
    // SearXNG's own key is `thumbnail_src`; other templates (and searx) say `thumbnail`.
    let thumbnail_url = image_hits::http_url(text("thumbnail_src"))
        .or_else(|| image_hits::http_url(text("thumbnail")));
    let (width, height) = image_hits::resolution(text("resolution")).unzip();
    let engine = image_hits::name(text("engine")).or_else(|| {
        result
            .get("engines")
            .and_then(Value::as_array)
            .and_then(|list| list.first())
            .and_then(Value::as_str)
            .and_then(image_hits::name)
    });
    Some(ImageHit {
        image_url,
        thumbnail_url,
        origin_url: image_hits::http_url(text("url")),
        title: image_hits::title(text("title")),
        width,
        height,
        format: image_hits::name(text("img_format")),
        engine,
    })
}

/// Brave's Image Search API. Its `safesearch` knows `off` and `strict` only.
async fn brave(settings: &SearchSettings, query: &str, max: usize) -> Result<ImagesOutcome, Error> {
    let request = http_client(settings)?
        .get(brave_url(settings, query, max))
        .header(reqwest::header::ACCEPT, "application/json")
        .header("X-Subscription-Token", hosted::key(settings));
    let reply = send(settings, request).await?;
    let shown = display_url(settings);
    let mut found = if reply.status == 200 {
        parse_brave(&reply.body, &shown, max)
    } else {
        Err(hosted::refused(
            SearchBackend::Brave,
            &shown,
            reply.status,
            &reply.body,
            super::brave::refusal,
        ))
    }
    // The service may quote our key back in its error text.
    .map_err(|e| e.redact(settings.api_key.as_ref()))?;
    found.query = query.to_string();
    found.warnings.extend(reply.note);
    Ok(found)
}

/// The Brave images request: `q`, `count`, `search_lang`, `safesearch`.
pub fn brave_url(settings: &SearchSettings, query: &str, max: usize) -> Url {
    let mut url = hosted::endpoint(settings, "/res/v1/images/search");
    {
        let mut pairs = url.query_pairs_mut();
        pairs
            .append_pair("q", query)
            .append_pair("count", &max.clamp(1, BRAVE_MAX_COUNT).to_string());
        if let Some(language) = &settings.language {
            pairs.append_pair("search_lang", language);
        }
        if let Some(level) = settings.safesearch {
            pairs.append_pair("safesearch", if level == 0 { "off" } else { "strict" });
        }
    }
    url
}

/// Reads Brave's image search reply: `results[]` with `properties.url` (the image),
/// `thumbnail.src`, `url` (the page), `title`, and `properties.width/height` (else the
/// thumbnail's) when given.
pub fn parse_brave(body: &[u8], url: &str, max: usize) -> Result<ImagesOutcome, Error> {
    let reply: Value = hosted::json(SearchBackend::Brave, url, body)?;
    let mut images = Vec::new();
    let results = reply.get("results").and_then(Value::as_array);
    for result in results.into_iter().flatten() {
        if images.len() >= max.min(MAX_IMAGES) {
            break;
        }
        let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
        let properties = result.get("properties");
        let Some(image_url) = image_hits::http_url(&text(properties.and_then(|p| p.get("url"))))
        else {
            continue;
        };
        let thumbnail = result.get("thumbnail");
        let width = image_hits::side(properties.and_then(|p| p.get("width")));
        let height = image_hits::side(properties.and_then(|p| p.get("height")));
        let image = ImageHit {
            thumbnail_url: image_hits::http_url(&text(thumbnail.and_then(|t| t.get("src")))),
            origin_url: image_hits::http_url(&text(result.get("url"))),
            title: image_hits::title(&text(result.get("title"))),
            width,
            height,
            format: image_hits::name(&text(properties.and_then(|p| p.get("format"))))
                .or_else(|| format_of(&image_url)),
            engine: Some("brave".into()),
            image_url,
        };
        image_hits::push_unique(&mut images, image, max.min(MAX_IMAGES));
    }
    Ok(ImagesOutcome {
        images,
        ..ImagesOutcome::default()
    })
}

/// The format an image's address names by its extension, as SearXNG guesses it when
/// an engine gives none ("JPG", "PNG"); `None` for an unknown one.
fn format_of(image_url: &str) -> Option<String> {
    let path = Url::parse(image_url).ok()?.path().to_ascii_lowercase();
    let extension = path.rsplit_once('.')?.1;
    let format = match extension {
        "jpg" | "jpeg" => "JPG",
        "png" => "PNG",
        "gif" => "GIF",
        "webp" => "WEBP",
        "svg" => "SVG",
        "bmp" => "BMP",
        "avif" => "AVIF",
        "tif" | "tiff" => "TIF",
        _ => return None,
    };
    Some(format.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Image results shaped as SearXNG's engines write them (bing images,
    /// duckduckgo images, wikicommons), with a general result mixed in and bad ones.
    fn searxng_reply() -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "query": "lighthouse",
            "results": [
                {"template": "images.html", "url": "https://example.org/lighthouse",
                 "title": "A lighthouse", "img_src": "https://img.example.org/l.jpg",
                 "thumbnail_src": "https://tse.example.net/th?id=1", "resolution": "1920 x 1080",
                 "img_format": "jpeg", "engine": "bing images", "engines": ["bing images"]},
                {"template": "default.html", "url": "https://example.org/page", "title": "Web",
                 "img_src": "", "thumbnail": ""},
                {"template": "images.html", "url": "https://example.org/x", "title": "Script",
                 "img_src": "javascript:alert(1)", "resolution": "1x1"},
                {"template": "images.html", "url": "https://example.org/d", "title": "Data",
                 "img_src": "data:image/png;base64,AAAA"},
                {"template": "images.html", "url": "https://example.org/lighthouse2",
                 "title": "Again", "img_src": "https://img.example.org/l.jpg"},
                {"template": "images.html", "url": "javascript:void(0)", "title": "No page",
                 "img_src": "https://img.example.org/m.png", "thumbnail_src": "data:x",
                 "resolution": "NonexNone", "engines": ["wikicommons.images"]}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn searxng_image_results_are_read_and_bad_ones_dropped() {
        let found = parse_searxng(&searxng_reply(), "http://searx.test", 10).unwrap();
        assert_eq!(found.images.len(), 2, "{found:?}");
        let first = &found.images[0];
        assert_eq!(first.image_url, "https://img.example.org/l.jpg");
        assert_eq!(
            first.thumbnail_url.as_deref(),
            Some("https://tse.example.net/th?id=1")
        );
        assert_eq!(
            first.origin_url.as_deref(),
            Some("https://example.org/lighthouse")
        );
        assert_eq!((first.width, first.height), (Some(1920), Some(1080)));
        assert_eq!(first.format.as_deref(), Some("jpeg"));
        assert_eq!(first.engine.as_deref(), Some("bing images"));
        let second = &found.images[1];
        assert_eq!(second.origin_url, None, "a javascript: page is no link");
        assert_eq!(second.thumbnail_url, None);
        assert_eq!((second.width, second.height), (None, None));
        assert_eq!(second.engine.as_deref(), Some("wikicommons.images"));
        let capped = parse_searxng(&searxng_reply(), "http://searx.test", 1).unwrap();
        assert_eq!(capped.images.len(), 1);
    }

    #[test]
    fn brave_image_results_are_read() {
        let body = serde_json::to_vec(&serde_json::json!({
            "type": "images",
            "query": {"original": "lighthouse", "spellcheck_off": false},
            "results": [
                {"type": "image_result", "title": "Lighthouse at dusk",
                 "url": "https://photos.example.org/dusk", "source": "photos.example.org",
                 "page_fetched": "2025-01-02T03:04:05Z",
                 "thumbnail": {"src": "https://imgs.search.brave.com/abc", "width": 500, "height": 281},
                 "properties": {"url": "https://photos.example.org/dusk.png",
                                "placeholder": "https://imgs.search.brave.com/p", "width": 1600, "height": 900},
                 "meta_url": {"scheme": "https", "netloc": "photos.example.org"},
                 "confidence": "high"},
                {"type": "image_result", "title": "Broken",
                 "url": "https://photos.example.org/broken",
                 "properties": {"url": "javascript:alert(1)"}}
            ]
        }))
        .unwrap();
        let found = parse_brave(&body, "https://api.search.brave.com", 10).unwrap();
        assert_eq!(found.images.len(), 1);
        let image = &found.images[0];
        assert_eq!(image.image_url, "https://photos.example.org/dusk.png");
        assert_eq!(
            image.thumbnail_url.as_deref(),
            Some("https://imgs.search.brave.com/abc")
        );
        assert_eq!((image.width, image.height), (Some(1600), Some(900)));
        assert_eq!(image.format.as_deref(), Some("PNG"));
        assert_eq!(image.engine.as_deref(), Some("brave"));
    }

    #[test]
    fn the_searxng_request_asks_the_images_category_without_the_web_engines() {
        let mut settings = crate::config::resolve(&Default::default(), &|_| None)
            .unwrap()
            .search;
        settings.engines = Some("wikipedia".into());
        settings.categories = Some("general".into());
        let url = searxng_url(&settings, "lighthouse");
        let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        assert!(
            pairs.contains(&("categories".into(), "images".into())),
            "{url}"
        );
        assert!(!pairs.iter().any(|(k, _)| k == "engines"), "{url}");
    }
}
