//! HTTP plumbing shared by every client: our User-Agent, the one client builder, the
//! one size-bounded body reader, transport errors as one line, and URLs as shown to
//! people (never with a password in them).
//!
//! Each stage (search, fetch, llm, doctor) adds its own settings on top of
//! [`client_builder`] and reads every body through [`read_bounded`], so no reply of
//! any server is ever read without a size limit.

use std::net::IpAddr;
use std::time::Duration;

use url::Url;

use crate::text::shorten;

/// The User-Agent sent to every server: honest, with our version.
pub const USER_AGENT: &str = concat!("ground/", env!("CARGO_PKG_VERSION"));

/// The User-Agent for services whose policy asks who is calling and how to reach
/// them (Wikimedia's: "a descriptive User-Agent with contact information"): our name
/// and version, then in brackets the project's home page when the package names one
/// and `contact` (`[search] contact`) when the user set it, then the HTTP library.
/// With neither, the brackets say so rather than make one up.
pub fn user_agent_with_contact(contact: Option<&str>) -> String {
    let reach: Vec<&str> = [env!("CARGO_PKG_REPOSITORY"), contact.unwrap_or("")]
        .into_iter()
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    let reach = if reach.is_empty() {
        "a command-line search tool; no contact set: [search] contact".to_string()
    } else {
        reach.join("; ")
    };
    format!("{USER_AGENT} ({reach}) reqwest/0.13")
}

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

/// Whether an address is on the public internet: not loopback, private, link-local
/// (which includes cloud metadata at 169.254.169.254), shared (100.64/10),
/// unspecified, broadcast, documentation, reserved or multicast.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || a >= 240
                || (a == 100 && (64..128).contains(&b)))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_ipv4(v6) {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
                || first == 0x2001 && v6.segments()[1] == 0x0db8) // documentation
        }
    }
}

/// The IPv4 address an IPv6 address carries, for the forms that reach it: mapped
/// (`::ffff:a.b.c.d`), compatible (`::a.b.c.d`, deprecated but still routed by some
/// stacks), NAT64 (`64:ff9b::/96` and the local-use `64:ff9b:1::/48`), 6to4
/// (`2002:AABB:CCDD::/16`) and Teredo (`2001:0::/32`, the client address stored
/// inverted in the last 32 bits). Such an address is as public as its IPv4 address.
fn embedded_ipv4(v6: std::net::Ipv6Addr) -> Option<std::net::Ipv4Addr> {
    let from = |hi: u16, lo: u16| {
        std::net::Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8)
    };
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    match v6.segments() {
        // ::a.b.c.d, but not :: and ::1 (unspecified and loopback are judged as IPv6).
        [0, 0, 0, 0, 0, 0, hi, lo] if (hi, lo) != (0, 0) && (hi, lo) != (0, 1) => {
            Some(from(hi, lo))
        }
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(from(hi, lo)),
        [0x64, 0xff9b, 1, _, _, _, hi, lo] => Some(from(hi, lo)),
        [0x2002, hi, lo, ..] => Some(from(hi, lo)),
        [0x2001, 0, _, _, _, _, hi, lo] => Some(from(!hi, !lo)),
        _ => None,
    }
}

/// Whether a server is the user's own, judged from its URL alone (no name is
/// looked up): an address that is not public ([`is_public`]: loopback, private,
/// link-local, ...), `localhost` and `*.localhost`, a name of one label (a container
/// or a name from /etc/hosts: `searxng`), or a name under a suffix that only local
/// networks use (`.local`, `.lan`, `.internal`, `.home.arpa`). Everything else is
/// taken for a public service.
pub fn is_own_server(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => !is_public(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => !is_public(IpAddr::V6(ip)),
        Some(url::Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            !name.contains('.')
                || [".localhost", ".local", ".lan", ".internal", ".home.arpa"]
                    .iter()
                    .any(|suffix| name.ends_with(suffix))
        }
        None => false,
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

    #[test]
    fn own_servers_are_private_addresses_and_local_names() {
        for own in [
            "http://localhost:8080",
            "http://127.0.0.1:8888/",
            "http://[::1]:8080",
            "http://192.168.1.20",
            "http://10.0.0.5:8080/searx",
            "http://searxng:8080",
            "http://search.localhost",
            "http://nas.local:8080",
            "http://searx.home.arpa",
            "http://searx.internal",
        ] {
            assert!(is_own_server(&Url::parse(own).unwrap()), "{own}");
        }
        for public in [
            "https://searx.example.org",
            "https://search.example.com:8443/",
            "http://93.184.216.34/",
            "https://en.wikipedia.org",
        ] {
            assert!(!is_own_server(&Url::parse(public).unwrap()), "{public}");
        }
    }

    #[test]
    fn the_contact_user_agent_names_how_to_reach_the_user_or_says_there_is_none() {
        let with = user_agent_with_contact(Some(" me@example.org "));
        assert!(with.starts_with(USER_AGENT), "{with}");
        assert!(with.contains("me@example.org)"), "{with}");
        let without = user_agent_with_contact(None);
        assert!(without.starts_with(USER_AGENT), "{without}");
        assert!(
            without.contains('(') && without.ends_with("reqwest/0.13"),
            "{without}"
        );
    }
}
