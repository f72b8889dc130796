//! HTTP plumbing shared by every client: our User-Agent, the one client builder, the
//! one size-bounded body reader, transport errors as one line, and URLs as shown to
//! people (never with a password in them).
//!
//! Each stage (search, fetch, llm, doctor) adds its own settings on top of
//! [`client_builder`] and reads every body through [`read_bounded`], so no reply of
//! any server is ever read without a size limit.

use std::time::Duration;

use url::Url;

use crate::text::shorten;

/// The User-Agent sent to every server: honest, with our version.
pub const USER_AGENT: &str = concat!("ground/", env!("CARGO_PKG_VERSION"));

/// Renders a transport error as one line with its causes, e.g.
/// "error sending request: connection refused".
pub fn describe_error(err: &reqwest::Error) -> String {
    if err.is_timeout() {
        return "timed out".into();
    }
    if err.is_connect() {
        // The innermost cause says it plainly ("Connection refused (os error 111)").
        let mut root: &dyn std::error::Error = err;
        while let Some(next) = root.source() {
            root = next;
        }
        return format!("connection failed: {}", shorten(&root.to_string(), 160));
    }
    let mut parts: Vec<String> = Vec::new();
    let mut source: Option<&dyn std::error::Error> = Some(err);
    while let Some(e) = source {
        let text = e.to_string();
        // reqwest repeats the URL in its top-level message; keep it short.
        let text = match text.split_once(" for url (") {
            Some((head, _)) => head.to_string(),
            None => text,
        };
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = e.source();
    }
    shorten(&parts.join(": "), 200)
}

/// A client builder with our User-Agent and the given time limits. Callers add what
/// is theirs (redirect policy, resolver) and call `build()`.
pub fn client_builder(
    connect_timeout: Duration,
    timeout: Option<Duration>,
) -> reqwest::ClientBuilder {
    let builder = reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .connect_timeout(connect_timeout);
    match timeout {
        Some(limit) => builder.timeout(limit),
        None => builder,
    }
}

/// A body read up to a limit.
#[derive(Debug)]
pub struct Bounded {
    /// The bytes read: all of the body, or its first `max` bytes.
    pub bytes: Vec<u8>,
    /// Whether the body was longer than the limit (the rest was not read).
    pub truncated: bool,
}

/// Reads `response`'s body, at most `max` bytes of it (after decompression). A longer
/// body stops at the limit with `truncated` set: the caller decides whether that is an
/// error (search and model replies) or a page cut short (fetch).
pub async fn read_bounded(
    mut response: reqwest::Response,
    max: usize,
) -> Result<Bounded, reqwest::Error> {
    let mut bytes: Vec<u8> = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = max - bytes.len();
        if chunk.len() > room {
            bytes.extend_from_slice(&chunk[..room]);
            return Ok(Bounded {
                bytes,
                truncated: true,
            });
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Bounded {
        bytes,
        truncated: false,
    })
}

/// The host of `url` without a leading `www.` ("" when it has none): the domain shown
/// for a source. (Sources are counted by [`site_of_host`].)
pub fn host_of(url: &str) -> String {
    Url::parse(url)
        .ok()
        .and_then(|u| {
            u.host_str()
                .map(|h| h.trim_start_matches("www.").to_string())
        })
        .unwrap_or_default()
}

/// The site a host belongs to, for counting independent sources: its registrable
/// domain (the public suffix plus one label, from the Public Suffix List compiled into
/// the `psl` crate: `news.example.co.uk` and `www.example.co.uk` are both
/// `example.co.uk`, while `alice.github.io` and `bob.github.io` are two sites).
/// Every name and address of this machine (`localhost`, `*.localhost`, 127.0.0.0/8,
/// `::1`, the unspecified address) is one site, `localhost`. Other IP addresses are
/// their own site; a name without a known suffix is itself.
pub fn site_of_host(host: &str) -> String {
    let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<std::net::IpAddr>() {
        let ip = match ip {
            std::net::IpAddr::V6(v6) => v6
                .to_ipv4_mapped()
                .map_or(std::net::IpAddr::V6(v6), std::net::IpAddr::V4),
            v4 => v4,
        };
        return if ip.is_loopback() || ip.is_unspecified() {
            "localhost".into()
        } else {
            ip.to_string()
        };
    }
    if host == "localhost" || host.ends_with(".localhost") {
        return "localhost".into();
    }
    match psl::domain_str(&host) {
        Some(domain) => domain.to_string(),
        None => host.trim_start_matches("www.").to_string(),
    }
}

/// [`site_of_host`] of `url`'s host ("" when it has none); the tests' view of it.
#[cfg(test)]
pub fn site_of(url: &str) -> String {
    Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(site_of_host))
        .unwrap_or_default()
}

/// A configured server's URL for messages: no trailing slash, and any password
/// replaced by `redacted` (a URL like `http://user:secret@host` must never be printed
/// as it was typed).
pub fn display_url(url: &Url) -> String {
    let mut url = url.clone();
    if url.password().is_some() {
        let _ = url.set_password(Some("redacted"));
    }
    url.as_str().trim_end_matches('/').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_are_registrable_domains_and_this_machine_is_one() {
        // Issue 24, finding 16: 127.0.0.1 and localhost were two sources, and so were
        // two subdomains of one site.
        for (url, site) in [
            ("http://127.0.0.1:8080/a", "localhost"),
            ("http://localhost:8080/b", "localhost"),
            ("http://LOCALHOST./b", "localhost"),
            ("http://api.localhost/c", "localhost"),
            ("http://127.1.2.3/", "localhost"),
            ("http://[::1]:9/", "localhost"),
            ("http://[::ffff:127.0.0.1]/", "localhost"),
            ("http://0.0.0.0/", "localhost"),
            ("https://www.example.org/x", "example.org"),
            ("https://news.example.org/y", "example.org"),
            ("https://a.b.example.co.uk/", "example.co.uk"),
            ("https://alice.github.io/", "alice.github.io"),
            ("https://bob.github.io/", "bob.github.io"),
            ("http://93.184.216.34/", "93.184.216.34"),
            ("http://intranet/", "intranet"),
            ("not a url", ""),
        ] {
            assert_eq!(site_of(url), site, "{url}");
        }
    }
}
