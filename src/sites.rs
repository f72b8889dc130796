//! Site filters: `--site DOMAIN` keeps a run to some sites, `--exclude-site DOMAIN`
//! keeps it away from others.
//!
//! Each search service is told the filter in its own terms ([`SiteFilter::query_for`]:
//! `site:` terms for SearXNG, Brave and DuckDuckGo; Tavily takes `include_domains` /
//! `exclude_domains` in its request body), but most of SearXNG's engines ignore
//! `site:`, so ground never relies on that: every search's results are checked here
//! ([`crate::hits::SearchOutcome::keep_sites`]) before anything else sees them, and the ones outside the
//! filter are dropped, their snippets with them. No page outside the filter is ever
//! requested.
//!
//! What a name covers: a domain with a known public suffix (the Public Suffix List
//! compiled into the `psl` crate) covers itself and every subdomain (`python.org`
//! covers `docs.python.org`; `docs.python.org` covers only its own subtree). A bare
//! host without a known suffix (`localhost`, `intranet`, `printer.lan`) and an IP
//! literal match exactly. A public suffix itself (`co.uk`) names no site and is
//! refused, like anything that is not a host name.
//!
//! Several `--site`s are sent as one OR group, `(site:a OR site:b)`: Google, Bing,
//! Brave and DuckDuckGo document `OR`, and an engine that does not understand it
//! returns unfiltered results, which the check here drops.

use std::net::IpAddr;

use url::{Host, Url};

/// The sites a run is kept to and kept away from, as normalised names (lower case,
/// no trailing dot, IPv6 without brackets). Empty lists: no filter.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SiteFilter {
    /// Only results on these sites are kept (`--site`); empty: any site.
    pub sites: Vec<String>,
    /// Results on these sites are dropped (`--exclude-site`).
    pub exclude_sites: Vec<String>,
}

/// One name of a filter, parsed: what it matches.
enum Pattern {
    /// A domain and its subdomains.
    Domain(String),
    /// Exactly this host name.
    Host(String),
    /// Exactly this address.
    Ip(IpAddr),
}

/// A site filter that cannot be used: a name that is no domain, host or IP address,
/// or a site the chosen service cannot search. A usage error (exit 2) once it
/// becomes an [`crate::error::Error`]; kept here so this leaf needs no error layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SiteError {
    /// What is wrong, naming the value and where it came from.
    pub message: String,
    /// What to give instead.
    pub hint: String,
}

/// The error type of this module's checks.
type Error = SiteError;

impl SiteFilter {
    /// The filter of `sites` and `exclude_sites` as given; `origin` names where they
    /// came from (`--site / --exclude-site`, `GROUND_SITES`, `[search] sites`) for the
    /// error about one that is not a domain, host name or IP address.
    pub fn parse(
        sites: &[String],
        exclude_sites: &[String],
        origin: &str,
    ) -> Result<SiteFilter, Error> {
        let normalise = |names: &[String]| -> Result<Vec<String>, Error> {
            let mut out: Vec<String> = Vec::new();
            for name in names {
                let name = normalise(name).ok_or_else(|| SiteError {
                    message: format!(
                        "{origin}: {name:?} is not a domain, host name or IP address"
                    ),
                    hint: "give a site's domain, e.g. --site python.org (its subdomains are included) or --site 192.0.2.7".into(),
                })?;
                if !out.contains(&name) {
                    out.push(name);
                }
            }
            Ok(out)
        };
        Ok(SiteFilter {
            sites: normalise(sites)?,
            exclude_sites: normalise(exclude_sites)?,
        })
    }

    /// The filter of this run: each list from the flags when given, else its
    /// environment variable (`GROUND_SITES`, `GROUND_EXCLUDE_SITES`, comma-separated),
    /// else the config file (`[search] sites`, `exclude_sites`).
    pub fn resolve(
        flags: [&Vec<String>; 2],
        env: &dyn Fn(&str) -> Option<String>,
        file: [&Option<Vec<String>>; 2],
    ) -> Result<SiteFilter, Error> {
        let pick = |i: usize, var: &str, key: &str| -> (Vec<String>, String) {
            if !flags[i].is_empty() {
                let flag = ["--site", "--exclude-site"][i];
                return (flags[i].clone(), flag.to_string());
            }
            if let Some(value) = env(var).filter(|v| !v.trim().is_empty()) {
                let names = value.split(',').map(|s| s.trim().to_string()).collect();
                return (names, var.to_string());
            }
            (file[i].clone().unwrap_or_default(), key.to_string())
        };
        let (sites, from_sites) = pick(0, "GROUND_SITES", "[search] sites");
        let (exclude, from_exclude) = pick(1, "GROUND_EXCLUDE_SITES", "[search] exclude_sites");
        Ok(SiteFilter {
            sites: SiteFilter::parse(&sites, &[], &from_sites)?.sites,
            exclude_sites: SiteFilter::parse(&[], &exclude, &from_exclude)?.exclude_sites,
        })
    }

    /// Whether there is no filter at all.
    pub fn is_empty(&self) -> bool {
        self.sites.is_empty() && self.exclude_sites.is_empty()
    }

    /// Whether a result at `url` is inside the filter: on one of `sites` (when any
    /// are given) and on none of `exclude_sites`. An address without a host is
    /// outside any filter.
    pub fn allows(&self, url: &str) -> bool {
        if self.is_empty() {
            return true;
        }
        let Some(host) = Url::parse(url)
            .ok()
            .and_then(|u| u.host().map(|h| h.to_owned()))
        else {
            return false;
        };
        let on = |names: &[String]| names.iter().any(|n| pattern(n).matches(&host));
        (self.sites.is_empty() || on(&self.sites)) && !on(&self.exclude_sites)
    }

    /// The filter as query terms: `site:a`, or `(site:a OR site:b)` for several,
    /// then `-site:c` for each excluded site.
    pub fn query_terms(&self) -> String {
        let mut terms = Vec::new();
        match self.sites.as_slice() {
            [] => {}
            [one] => terms.push(format!("site:{one}")),
            several => terms.push(format!(
                "({})",
                several
                    .iter()
                    .map(|s| format!("site:{s}"))
                    .collect::<Vec<_>>()
                    .join(" OR ")
            )),
        }
        terms.extend(self.exclude_sites.iter().map(|s| format!("-site:{s}")));
        terms.join(" ")
    }

    /// Refuses a `--site` the service cannot search (`wikipedia`: the service is
    /// Wikipedia, which searches only Wikipedia), so any other site there is a usage
    /// error naming the service.
    /// `wikipedia_host` is the configured Wikipedia's host (a stand-in's, in tests).
    pub fn check_service(
        &self,
        wikipedia: bool,
        wikipedia_host: Option<&str>,
    ) -> Result<(), Error> {
        if !wikipedia {
            return Ok(());
        }
        let wikipedia = |site: &str| {
            site == "wikipedia.org"
                || site.ends_with(".wikipedia.org")
                || wikipedia_host.is_some_and(|h| h.eq_ignore_ascii_case(site))
        };
        match self.sites.iter().find(|s| !wikipedia(s)) {
            None => Ok(()),
            Some(site) => Err(SiteError {
                message: format!(
                    "--site {site} cannot be searched with the wikipedia search service: it searches only Wikipedia"
                ),
                hint: "choose another service with --search (searxng, brave, tavily, duckduckgo), or give a Wikipedia host such as --site en.wikipedia.org".into(),
            }),
        }
    }
}

/// `name` in its normal form, or `None` when it is no domain, host name or IP address.
fn normalise(name: &str) -> Option<String> {
    let name = name.trim().trim_end_matches('.').to_ascii_lowercase();
    let bare = name
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(&name);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Some(ip.to_string());
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    if name.is_empty() || name.len() > 253 || !name.split('.').all(label_ok) {
        return None;
    }
    // A public suffix on its own (`co.uk`, `github.io`) names no one site.
    if name.contains('.') && psl::domain_str(&name).is_none() && known_suffix(&name) {
        return None;
    }
    Some(name)
}

/// Whether `name` ends in a suffix of the Public Suffix List (not only its `*` rule).
fn known_suffix(name: &str) -> bool {
    psl::suffix(name.as_bytes()).is_some_and(|s| s.is_known())
}

/// What a normalised name matches.
fn pattern(name: &str) -> Pattern {
    if let Ok(ip) = name.parse::<IpAddr>() {
        Pattern::Ip(ip)
    } else if name.contains('.') && known_suffix(name) {
        Pattern::Domain(name.to_string())
    } else {
        Pattern::Host(name.to_string())
    }
}

impl Pattern {
    /// Whether `host` (a result's) is covered.
    fn matches(&self, host: &Host<String>) -> bool {
        match (self, host) {
            (Pattern::Ip(ip), Host::Ipv4(v4)) => *ip == IpAddr::V4(*v4),
            (Pattern::Ip(ip), Host::Ipv6(v6)) => {
                *ip == IpAddr::V6(*v6)
                    || v6.to_ipv4_mapped().is_some_and(|v4| *ip == IpAddr::V4(v4))
            }
            (Pattern::Domain(domain), Host::Domain(h)) => {
                let h = h.trim_end_matches('.').to_ascii_lowercase();
                h == *domain
                    || h.strip_suffix(domain.as_str())
                        .is_some_and(|rest| rest.ends_with('.'))
            }
            (Pattern::Host(name), Host::Domain(h)) => {
                h.trim_end_matches('.').eq_ignore_ascii_case(name)
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(sites: &[&str], exclude: &[&str]) -> SiteFilter {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        SiteFilter::parse(&own(sites), &own(exclude), "--site").unwrap()
    }

    #[test]
    fn a_domain_covers_its_subdomains_and_nothing_that_merely_ends_like_it() {
        let f = filter(&["Python.org."], &[]);
        assert_eq!(f.sites, ["python.org"]);
        assert!(f.allows("https://python.org/x"));
        assert!(f.allows("https://docs.python.org/3/"));
        assert!(f.allows("https://a.b.python.org./"));
        assert!(!f.allows("https://notpython.org/"));
        assert!(!f.allows("https://python.org.evil.com/"));
        assert!(!f.allows("not a url"));
    }

    #[test]
    fn a_subdomain_covers_only_its_own_subtree() {
        let f = filter(&["docs.python.org"], &[]);
        assert!(f.allows("https://docs.python.org/3/"));
        assert!(f.allows("https://en.docs.python.org/"));
        assert!(!f.allows("https://www.python.org/"));
    }

    #[test]
    fn ip_literals_and_bare_hosts_match_exactly() {
        let f = filter(&["127.0.0.1", "[::1]", "intranet"], &[]);
        assert_eq!(f.sites, ["127.0.0.1", "::1", "intranet"]);
        assert!(f.allows("http://127.0.0.1:8080/a"));
        assert!(f.allows("http://[::1]/a"));
        assert!(f.allows("http://intranet/wiki"));
        assert!(!f.allows("http://127.0.0.2/a"));
        assert!(!f.allows("http://localhost/a"));
        assert!(!f.allows("http://wiki.intranet/a"));
    }

    #[test]
    fn exclusions_win_over_sites() {
        let f = filter(&["example.com"], &["ads.example.com"]);
        assert!(f.allows("https://www.example.com/"));
        assert!(!f.allows("https://ads.example.com/x"));
        let only_out = filter(&[], &["pinterest.com"]);
        assert!(only_out.allows("https://example.org/"));
        assert!(!only_out.allows("https://www.pinterest.com/pin/1"));
    }

    #[test]
    fn names_that_are_no_site_are_refused_naming_them() {
        for bad in [
            "exa mple.com",
            "",
            "https://example.com/",
            "co.uk",
            "-a.com",
            "a..b",
        ] {
            let error = SiteFilter::parse(&[bad.to_string()], &[], "--site").unwrap_err();
            assert!(
                error.to_string().contains(&format!("{bad:?}")),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn several_sites_are_one_or_group_and_exclusions_follow() {
        let f = filter(&["a.com", "b.org"], &["c.net"]);
        assert_eq!(
            crate::search::site_query(&f, crate::settings::SearchBackend::Searxng, "rust "),
            "rust (site:a.com OR site:b.org) -site:c.net"
        );
        assert_eq!(
            crate::search::site_query(&f, crate::settings::SearchBackend::Tavily, "rust"),
            "rust"
        );
        assert_eq!(filter(&["a.com"], &[]).query_terms(), "site:a.com");
    }

    #[test]
    fn wikipedia_refuses_other_sites_naming_the_service() {
        let f = filter(&["en.wikipedia.org"], &[]);
        assert!(f.check_service(true, None).is_ok());
        let error = filter(&["docs.rs"], &[])
            .check_service(true, None)
            .unwrap_err();
        assert!(error.to_string().contains("--site docs.rs"), "{error}");
        assert!(error.to_string().contains("wikipedia"), "{error}");
        assert!(filter(&["docs.rs"], &[]).check_service(false, None).is_ok());
    }
}
