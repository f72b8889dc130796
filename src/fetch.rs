//! The fetch stage: download one page, bounded in time and size, and say exactly what
//! happened (a [`RetrievalStatus`] like Gemini url_context's `urlRetrievalStatus`).
//!
//! Safety is enforced here, not by callers: unless private addresses are allowed, the
//! DNS resolver refuses names that resolve to loopback, private, link-local, unspecified
//! or multicast addresses, and IP-literal URLs (first request and every redirect) are
//! checked the same way. Checking the resolved address, not the name, is what stops a
//! public name that points at 127.0.0.1.
//!
//! A fetcher of a run with a site filter (`--site`, `--exclude-site`: see
//! [`crate::sites`]) holds it at the same places: the first URL, every redirect
//! target before it is requested, and the final URL. A result on an allowed site that
//! redirects off it is BLOCKED, never read or cited under the allowed address.
//!
//! A fetcher that obeys robots.txt (`FetchSettings::obey_robots`: fetches an agent
//! starts through `ground mcp`, or any fetch with `[fetch] robots = "always"`) reads
//! the host's `/robots.txt` first, through this same fetcher (the same address, size
//! and time rules), and refuses a disallowed page as BLOCKED without requesting it.
//! Such a fetcher follows redirects itself, one hop at a time, and checks each target
//! against its host's robots.txt before requesting it: a page that robots.txt allows
//! cannot redirect us into one it does not. The files are kept per origin for
//! [`ROBOTS_TTL`] in the process; a missing, unreadable or broken robots.txt allows
//! everything (see [`crate::robots`]). A file is parsed and matched on a blocking
//! thread within [`ROBOTS_BUDGET`] (it may be 512 KiB of rules); one that takes
//! longer refuses the page.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use url::Url;

use crate::http::describe_error as describe_reqwest;
use crate::http::is_public;
use crate::robots::{PRODUCT_TOKEN, Robots};
use crate::settings::FetchSettings;
use crate::sites::SiteFilter;

/// What happened to one page, as reported per source in `--json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RetrievalStatus {
    /// Fetched and readable text extracted.
    Success,
    /// Network failure or an HTTP error status.
    Error,
    /// No complete answer within the per-page time limit.
    Timeout,
    /// A content type we cannot read (images, binary data), or a PDF past its cap.
    Unsupported,
    /// Refused by policy: a non-public address, a non-http(s) URL, robots.txt, or an
    /// address outside the site filter (a redirect off it included).
    Blocked,
    /// Fetched, but no readable main text (e.g. a JavaScript-only page).
    Empty,
    /// Still loading when enough other pages were usable: the run went on without it
    /// (hedged fetching). Never counted as read.
    NotWaited,
}

impl RetrievalStatus {
    /// The name used in `--json` and messages (SUCCESS, ERROR, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            RetrievalStatus::Success => "SUCCESS",
            RetrievalStatus::Error => "ERROR",
            RetrievalStatus::Timeout => "TIMEOUT",
            RetrievalStatus::Unsupported => "UNSUPPORTED",
            RetrievalStatus::Blocked => "BLOCKED",
            RetrievalStatus::Empty => "EMPTY",
            RetrievalStatus::NotWaited => "NOT_WAITED",
        }
    }
}

/// A downloaded page, before extraction.
#[derive(Debug, Clone)]
pub struct FetchedPage {
    /// The address after redirects.
    pub final_url: String,
    /// The HTTP status of the final response.
    pub http_status: u16,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// What kind of text the body is.
    pub kind: BodyKind,
    /// The body bytes (decompressed), at most `max_bytes` of them.
    pub body: Vec<u8>,
    /// Whether the body was longer than `max_bytes` and cut there.
    pub truncated: bool,
}

/// How a page body is to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// HTML or XHTML.
    Html,
    /// Plain text.
    PlainText,
    /// A PDF document (read by [`crate::pdf`]).
    Pdf,
}

/// Why a page could not be fetched, with the status to report.
#[derive(Debug, Clone)]
pub struct FetchFailure {
    /// The status reported for the page.
    pub status: RetrievalStatus,
    /// The HTTP status, when a response arrived.
    pub http_status: Option<u16>,
    /// The final URL when known (after redirects).
    pub final_url: Option<String>,
    /// One line saying what went wrong.
    pub reason: String,
}

/// A page downloader with the configured limits; cheap to share across tasks.
#[derive(Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    settings: FetchSettings,
    /// The run's site filter, held on every hop (empty: none).
    sites: Arc<SiteFilter>,
}

/// How long a host's robots.txt is trusted before it is read again.
pub const ROBOTS_TTL: Duration = Duration::from_secs(3600);

/// The longest parsing a robots.txt, or matching a URL against it, may take; past it
/// the page is refused (BLOCKED), as when a site's robots.txt cannot be read for a
/// server error.
pub const ROBOTS_BUDGET: Duration = Duration::from_secs(2);

/// robots.txt files by origin, with when they were read: shared by every fetcher of
/// the process (a `ground mcp` server lives long and makes many fetchers).
static ROBOTS_FILES: LazyLock<Mutex<HashMap<String, Arc<RobotsSlot>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// One origin's robots.txt and when it was read; `None` until first read.
type RobotsSlot = tokio::sync::Mutex<Option<(Instant, Arc<Robots>)>>;

/// The error our resolver gives for a name that only resolves to non-public
/// addresses; found again in reqwest's error chain to report BLOCKED.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Blocked(String);

impl Fetcher {
    /// Builds the HTTP client: our User-Agent, connect timeout, bounded redirects that
    /// are re-checked against the address policy, and the filtering DNS resolver. No
    /// site filter: for a page a person or an agent names (`ground fetch`, MCP's
    /// `web_fetch`); a run's fetcher is [`Fetcher::with_sites`].
    pub fn new(settings: &FetchSettings) -> Result<Self, crate::error::Error> {
        Self::with_sites(settings, &SiteFilter::default())
    }

    /// [`Fetcher::new`] that also keeps every fetch to `sites`: the first URL, each
    /// redirect target before it is requested and the final URL outside the filter
    /// are BLOCKED, as non-public addresses are.
    pub fn with_sites(
        settings: &FetchSettings,
        sites: &SiteFilter,
    ) -> Result<Self, crate::error::Error> {
        let sites = Arc::new(sites.clone());
        let allow_private = settings.allow_private_addresses;
        let max_redirects = settings.max_redirects;
        // A fetcher that obeys robots.txt follows redirects itself (`send`): the
        // target's robots.txt must be read, which a policy cannot wait for.
        let redirect = if settings.obey_robots {
            reqwest::redirect::Policy::none()
        } else {
            let sites = Arc::clone(&sites);
            reqwest::redirect::Policy::custom(move |attempt| {
                if attempt.previous().len() > max_redirects {
                    return attempt.error(format!("more than {max_redirects} redirects"));
                }
                if let Err(reason) = check_url(attempt.url(), allow_private)
                    .and_then(|()| check_site(&sites, attempt.url(), true))
                {
                    return attempt.error(Blocked(reason));
                }
                attempt.follow()
            })
        };
        // Never through the system proxy (HTTP_PROXY and friends): a proxy resolves
        // host names itself, so our resolver's address check would never run and
        // `localhost` or a private name would be fetched. Search and model calls, to
        // servers the user configured, still honour the proxy.
        let mut builder = crate::http::client_builder(settings.connect_timeout, None)
            .redirect(redirect)
            .no_proxy();
        if !allow_private {
            builder = builder.dns_resolver(Arc::new(PublicOnlyResolver));
        }
        let client = builder.build().map_err(|e| crate::error::Error::Internal {
            message: format!("cannot build the HTTP client: {}", describe_reqwest(&e)),
        })?;
        Ok(Self {
            client,
            settings: settings.clone(),
            sites,
        })
    }

    /// Whether `url` is inside this fetcher's site filter (always, without one): a
    /// cached page is used only when its final URL is.
    pub fn allows_site(&self, url: &str) -> bool {
        self.sites.allows(url)
    }

    /// Whether this fetcher may reach private addresses (`--allow-private-addresses`).
    pub fn allows_private(&self) -> bool {
        self.settings.allow_private_addresses
    }

    /// Refuses `url` as BLOCKED when this fetcher obeys robots.txt and the host's
    /// robots.txt disallows it for `ground` (or for `*` where no group names
    /// `ground`). Fetches the robots.txt when it is not known or older than
    /// [`ROBOTS_TTL`]; any failure to read it allows the page.
    pub async fn robots_check(&self, url: &str) -> Result<(), FetchFailure> {
        self.robots_verdict(url)
            .await
            .map_err(|refusal| failure(RetrievalStatus::Blocked, None, refusal.saying("this page")))
    }

    /// [`Fetcher::robots_check`]'s decision.
    async fn robots_verdict(&self, url: &str) -> Result<(), RobotsRefusal> {
        if !self.settings.obey_robots {
            return Ok(());
        }
        let Ok(parsed) = Url::parse(url) else {
            return Ok(()); // the fetch itself reports the bad URL
        };
        if !matches!(parsed.scheme(), "http" | "https") {
            return Ok(());
        }
        let origin = parsed.origin().ascii_serialization();
        // One slot per origin: concurrent pages of one host wait for one read.
        let slot = match ROBOTS_FILES.lock() {
            Ok(mut files) => Arc::clone(files.entry(origin.clone()).or_default()),
            Err(_) => Arc::default(),
        };
        let mut known = slot.lock().await;
        let fresh = known
            .as_ref()
            .filter(|(read, _)| read.elapsed() < ROBOTS_TTL)
            .map(|(_, robots)| Arc::clone(robots));
        let robots = match fresh {
            Some(robots) => robots,
            None => {
                let robots_url = format!("{origin}/robots.txt");
                let limit = self.settings.timeout;
                // Boxed: reading robots.txt is a fetch, whose redirects are checked
                // against robots.txt in turn (never for robots.txt itself).
                let read = Box::pin(self.fetch_unbounded(&robots_url, false));
                let body = match tokio::time::timeout(limit, read).await {
                    Ok(Ok(page)) if page.http_status == 200 => Some(page.body),
                    _ => None,
                };
                let robots = match body {
                    Some(body) => off_runtime(move || Robots::parse(&body))
                        .await
                        .ok_or_else(|| RobotsRefusal::TooSlow(origin.clone()))?,
                    None => Robots::default(),
                };
                let robots = Arc::new(robots);
                *known = Some((Instant::now(), Arc::clone(&robots)));
                robots
            }
        };
        drop(known);
        let mut path = parsed.path().to_string();
        if let Some(query) = parsed.query() {
            path.push('?');
            path.push_str(query);
        }
        match off_runtime(move || robots.allows(PRODUCT_TOKEN, &path)).await {
            Some(true) => Ok(()),
            Some(false) => Err(RobotsRefusal::Disallowed(origin)),
            None => Err(RobotsRefusal::TooSlow(origin)),
        }
    }

    /// Fetches one page within the per-page time limit (after the robots.txt check,
    /// when this fetcher obeys robots.txt).
    pub async fn fetch(&self, url: &str) -> Result<FetchedPage, FetchFailure> {
        self.robots_check(url).await?;
        let limit = self.settings.timeout;
        match tokio::time::timeout(limit, self.fetch_unbounded(url, true)).await {
            Ok(result) => result,
            Err(_) => Err(failure(
                RetrievalStatus::Timeout,
                None,
                format!("no complete response within {} s", limit.as_secs()),
            )),
        }
    }

    /// Fetches `url` without the time limit; `robots_on_redirect`: redirect targets
    /// are checked against robots.txt (when this fetcher obeys it) before they are
    /// requested.
    async fn fetch_unbounded(
        &self,
        url: &str,
        robots_on_redirect: bool,
    ) -> Result<FetchedPage, FetchFailure> {
        let parsed = Url::parse(url).map_err(|e| {
            failure(
                RetrievalStatus::Error,
                None,
                format!("not a valid URL: {e}"),
            )
        })?;
        check_url(&parsed, self.settings.allow_private_addresses)
            .and_then(|()| check_site(&self.sites, &parsed, false))
            .map_err(|reason| failure(RetrievalStatus::Blocked, None, reason))?;
        let response = self.send(parsed, robots_on_redirect).await?;
        let http_status = response.status().as_u16();
        // Every hop was checked; the final URL once more, whatever followed them.
        check_site(&self.sites, response.url(), true)
            .map_err(|reason| failure(RetrievalStatus::Blocked, None, reason))?;
        let final_url = response.url().to_string();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let fail = |status, reason: String| FetchFailure {
            status,
            http_status: Some(http_status),
            final_url: Some(final_url.clone()),
            reason,
        };
        if !response.status().is_success() {
            return Err(fail(RetrievalStatus::Error, format!("HTTP {http_status}")));
        }
        let declared = match content_type.as_deref().map(declared_kind) {
            Some(Err(mime)) => {
                return Err(fail(
                    RetrievalStatus::Unsupported,
                    format!("content type {mime} is not HTML, text or PDF"),
                ));
            }
            Some(Ok(kind)) => kind,
            None => None,
        };

        // PDFs run larger than HTML pages: they get a cap of their own.
        let max_bytes = match declared {
            Some(BodyKind::Pdf) => crate::pdf::MAX_PDF_BYTES.max(self.settings.max_bytes),
            _ => self.settings.max_bytes,
        };
        let crate::http::Bounded {
            bytes: body,
            truncated,
        } = crate::http::read_bounded(response, max_bytes)
            .await
            .map_err(|e| {
                let mut f = transport_failure(&e);
                f.http_status = Some(http_status);
                f
            })?;

        let kind = match declared {
            Some(kind) => kind,
            None => sniff_kind(&body).ok_or_else(|| {
                fail(
                    RetrievalStatus::Unsupported,
                    "no content type and the body is not text".into(),
                )
            })?,
        };
        if kind == BodyKind::Pdf && truncated {
            return Err(fail(
                RetrievalStatus::Unsupported,
                format!(
                    "the PDF is larger than {} MiB, the most read; it was not read",
                    max_bytes / 1024 / 1024
                ),
            ));
        }
        if kind != BodyKind::Pdf && looks_binary(&body) {
            return Err(fail(
                RetrievalStatus::Unsupported,
                "the body is binary data, not text".into(),
            ));
        }
        Ok(FetchedPage {
            final_url,
            http_status,
            content_type,
            kind,
            body,
            truncated,
        })
    }
}

impl Fetcher {
    /// Sends the GET for `url`. A fetcher that obeys robots.txt follows redirects
    /// here, one hop at a time: each target is checked like the first URL (scheme,
    /// address, site filter), counted against `max_redirects` and, with
    /// `robots_on_redirect`, against its host's robots.txt before it is requested.
    /// Other fetchers leave redirects to the client's policy (the same checks but
    /// robots.txt).
    async fn send(
        &self,
        mut url: Url,
        robots_on_redirect: bool,
    ) -> Result<reqwest::Response, FetchFailure> {
        let mut hops = 0;
        loop {
            let response = self
                .client
                .get(url.clone())
                .header(
                    reqwest::header::ACCEPT,
                    "text/html,application/xhtml+xml,text/plain;q=0.9,application/pdf;q=0.8,*/*;q=0.1",
                )
                .header(reqwest::header::ACCEPT_LANGUAGE, "en;q=0.9, *;q=0.5")
                .send()
                .await
                .map_err(|e| transport_failure(&e))?;
            if !self.settings.obey_robots || !response.status().is_redirection() {
                return Ok(response);
            }
            let Some(location) = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
            else {
                return Ok(response);
            };
            let status = response.status().as_u16();
            let next = url.join(location).map_err(|e| {
                failure(
                    RetrievalStatus::Error,
                    Some(status),
                    format!("a redirect to an invalid URL: {e}"),
                )
            })?;
            hops += 1;
            if hops > self.settings.max_redirects {
                return Err(failure(
                    RetrievalStatus::Error,
                    Some(status),
                    format!("more than {} redirects", self.settings.max_redirects),
                ));
            }
            check_url(&next, self.settings.allow_private_addresses)
                .and_then(|()| check_site(&self.sites, &next, true))
                .map_err(|reason| failure(RetrievalStatus::Blocked, None, reason))?;
            if robots_on_redirect && let Err(refusal) = self.robots_verdict(next.as_str()).await {
                return Err(FetchFailure {
                    status: RetrievalStatus::Blocked,
                    http_status: Some(status),
                    final_url: Some(next.to_string()),
                    reason: refusal.saying(&format!("the page it redirects to, {next},")),
                });
            }
            url = next;
        }
    }
}

/// Why robots.txt refuses a URL, with the origin whose file it is.
enum RobotsRefusal {
    /// The file disallows it for us.
    Disallowed(String),
    /// The file could not be parsed or matched within [`ROBOTS_BUDGET`].
    TooSlow(String),
}

impl RobotsRefusal {
    /// The reason, about `what` ("this page").
    fn saying(&self, what: &str) -> String {
        match self {
            RobotsRefusal::Disallowed(origin) => format!(
                "robots.txt of {origin} disallows {what} for the `{PRODUCT_TOKEN}` user agent"
            ),
            RobotsRefusal::TooSlow(origin) => format!(
                "robots.txt of {origin} could not be checked for {what} within {} s",
                ROBOTS_BUDGET.as_secs()
            ),
        }
    }
}

/// Runs `work` (parsing or matching a robots.txt) on a blocking thread within
/// [`ROBOTS_BUDGET`]; `None` when it takes longer (it finishes on its thread and is
/// dropped) or panics.
async fn off_runtime<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    match tokio::time::timeout(ROBOTS_BUDGET, tokio::task::spawn_blocking(work)).await {
        Ok(Ok(value)) => Some(value),
        _ => None,
    }
}

fn failure(status: RetrievalStatus, http_status: Option<u16>, reason: String) -> FetchFailure {
    FetchFailure {
        status,
        http_status,
        final_url: None,
        reason,
    }
}

fn transport_failure(err: &reqwest::Error) -> FetchFailure {
    let mut source: Option<&dyn std::error::Error> = Some(err);
    while let Some(e) = source {
        if let Some(blocked) = e.downcast_ref::<Blocked>() {
            return failure(RetrievalStatus::Blocked, None, blocked.0.clone());
        }
        source = e.source();
    }
    let status = if err.is_timeout() {
        RetrievalStatus::Timeout
    } else {
        RetrievalStatus::Error
    };
    failure(status, None, describe_reqwest(err))
}

/// Maps a Content-Type to the body kind we read (`Ok(None)`: decide from the bytes),
/// or the MIME type we refuse.
fn declared_kind(content_type: &str) -> Result<Option<BodyKind>, String> {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match mime.as_str() {
        "text/html" | "application/xhtml+xml" => Ok(Some(BodyKind::Html)),
        "text/plain" | "text/markdown" => Ok(Some(BodyKind::PlainText)),
        "application/pdf" | "application/x-pdf" => Ok(Some(BodyKind::Pdf)),
        // Servers often send no useful type; decide from the bytes.
        "" | "application/octet-stream" | "binary/octet-stream" => Ok(None),
        _ => Err(mime),
    }
}

fn sniff_kind(body: &[u8]) -> Option<BodyKind> {
    if crate::pdf::looks_like_pdf(body) {
        return Some(BodyKind::Pdf);
    }
    if looks_binary(body) {
        return None;
    }
    let start = String::from_utf8_lossy(&body[..body.len().min(512)])
        .trim_start()
        .to_ascii_lowercase();
    if start.starts_with('<') {
        Some(BodyKind::Html)
    } else {
        Some(BodyKind::PlainText)
    }
}

/// A NUL byte near the start means binary data (text never has one).
fn looks_binary(body: &[u8]) -> bool {
    body[..body.len().min(1024)].contains(&0)
}

/// Refuses non-http(s) URLs and, unless allowed, IP-literal hosts that are not public.
/// (Also the rule for where a model hub may redirect a download.)
pub(crate) fn check_url(url: &Url, allow_private: bool) -> Result<(), String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("scheme {:?} is not http or https", url.scheme()));
    }
    if allow_private {
        return Ok(());
    }
    let ip = match url.host() {
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
        Some(url::Host::Domain(_)) => return Ok(()), // checked by the resolver
        None => return Err("the URL has no host".into()),
    };
    if is_public(ip) {
        Ok(())
    } else {
        Err(blocked_reason(ip))
    }
}

/// Refuses `url` when it is outside the site filter `sites`, naming its host and the
/// filter; `redirect`: `url` is where the page redirects to (or ended up).
fn check_site(sites: &SiteFilter, url: &Url, redirect: bool) -> Result<(), String> {
    if sites.allows(url.as_str()) {
        return Ok(());
    }
    let host = url.host_str().unwrap_or("an address without a host");
    Err(if redirect {
        format!(
            "the page redirects to {host}, which is outside the site filter (--site / --exclude-site)"
        )
    } else {
        format!("{host} is outside the site filter (--site / --exclude-site)")
    })
}

fn blocked_reason(ip: IpAddr) -> String {
    format!("{ip} is not a public address")
}

/// Resolves names with the system resolver and keeps only public addresses. (Also
/// used by the model download for hosts a hub redirects it to.)
pub(crate) struct PublicOnlyResolver;

impl reqwest::dns::Resolve for PublicOnlyResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let public: Vec<SocketAddr> = addrs
                .iter()
                .copied()
                .filter(|a| is_public(a.ip()))
                .collect();
            if public.is_empty() {
                let ip = addrs.first().map(|a| a.ip());
                let reason = match ip {
                    Some(ip) => format!("{host} resolves to {ip}, which is not a public address"),
                    None => format!("{host} did not resolve to any address"),
                };
                return Err(Box::new(Blocked(reason)) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(public.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Milliseconds since `start`, for timings.
pub fn elapsed_ms(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_and_private_addresses() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "224.0.0.1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn ipv6_forms_that_carry_a_private_ipv4_are_private() {
        for private in [
            "::127.0.0.1",                          // IPv4-compatible
            "::ffff:10.0.0.1",                      // mapped
            "64:ff9b::127.0.0.1",                   // NAT64
            "64:ff9b:1::a9fe:a9fe",                 // local-use NAT64 of 169.254.169.254
            "2002:7f00:1::",                        // 6to4 of 127.0.0.1
            "2002:c0a8:101::1",                     // 6to4 of 192.168.1.1
            "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo client 127.0.0.1
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in [
            "64:ff9b::5db8:d822", // NAT64 of 93.184.216.34
            "2002:5db8:d822::1",  // 6to4 of 93.184.216.34
        ] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
        let blocked = Url::parse("http://[64:ff9b::127.0.0.1]/secret").unwrap();
        assert!(check_url(&blocked, false).is_err());
        assert!(check_url(&blocked, true).is_ok());
    }

    #[test]
    fn redirect_and_first_hop_checks() {
        // The redirect policy calls check_url on every hop: IP literals are judged
        // here, names by the resolver.
        let check = |u: &str| check_url(&Url::parse(u).unwrap(), false);
        assert!(check("http://169.254.169.254/latest/meta-data/").is_err());
        assert!(check("http://[::1]:8080/").is_err());
        assert!(check("http://10.0.0.1/").is_err());
        assert!(check("file:///etc/passwd").is_err());
        assert!(check("http://93.184.216.34/").is_ok());
        assert!(check("https://example.org/").is_ok());
        assert!(check_url(&Url::parse("http://127.0.0.1/").unwrap(), true).is_ok());
    }

    #[test]
    fn content_types() {
        assert_eq!(
            declared_kind("text/html; charset=utf-8"),
            Ok(Some(BodyKind::Html))
        );
        assert_eq!(declared_kind("text/plain"), Ok(Some(BodyKind::PlainText)));
        assert_eq!(declared_kind("application/octet-stream"), Ok(None));
        assert_eq!(declared_kind("application/pdf"), Ok(Some(BodyKind::Pdf)));
        assert!(declared_kind("image/png").is_err());
        assert_eq!(sniff_kind(b"%PDF-1.4\n%\xe2\xe3\x00"), Some(BodyKind::Pdf));
        assert_eq!(sniff_kind(b"  <!doctype html><p>x"), Some(BodyKind::Html));
        assert_eq!(sniff_kind(b"\x00\x01PNG"), None);
    }
}
