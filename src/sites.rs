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
//! refused, like anything that is not a host name. A name in another script is taken
//! in the ASCII form URLs carry it in (`bücher.de` is `xn--bcher-kva.de`).
//!
//! The filter holds for every hop of a page's fetch, not only for the result's
//! address: a result that redirects off the filter is refused (BLOCKED) there
//! ([`crate::fetch::Fetcher::with_sites`]). A client of `ground serve` may narrow
//! the operator's filter, never widen it ([`SiteFilter::narrowed_by`]).
//!
//! Several `--site`s are sent as one OR group, `(site:a OR site:b)`: Google, Bing,
//! Brave and DuckDuckGo document `OR`, and an engine that does not understand it
//! returns unfiltered results, which the check here drops.

use std::net::IpAddr;

use url::{Host, Url};

/// The sites a run is kept to and kept away from, as normalised names (lower case,
/// no trailing dot, IPv6 without brackets). Empty lists: no filter.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

    /// The filter a client's request asks for (`asked`: `search_domain_filter`, a
    /// Gemini tool's `excludeDomains`), kept within this one, the operator's: a
    /// request may only narrow what the server searches, never widen it. Exclusions
    /// are united; an asked site is kept when one of this filter's sites covers it
    /// (itself or a subdomain of one), and a site of this filter when an asked one
    /// covers it, so the sites are those both allow. An empty `asked` changes
    /// nothing. `origin` names the field for the error when nothing remains: no
    /// asked site within this filter's, or every one left excluded.
    pub fn narrowed_by(&self, asked: &SiteFilter, origin: &str) -> Result<SiteFilter, Error> {
        let mut exclude_sites = self.exclude_sites.clone();
        for name in &asked.exclude_sites {
            if !exclude_sites.contains(name) {
                exclude_sites.push(name.clone());
            }
        }
        let sites = if asked.sites.is_empty() {
            self.sites.clone()
        } else if self.sites.is_empty() {
            asked.sites.clone()
        } else {
            let mut both: Vec<String> = Vec::new();
            for name in &asked.sites {
                let within: Vec<&String> = if self.sites.iter().any(|s| covers(s, name)) {
                    vec![name]
                } else {
                    self.sites.iter().filter(|s| covers(name, s)).collect()
                };
                for site in within {
                    if !both.contains(site) {
                        both.push(site.clone());
                    }
                }
            }
            if both.is_empty() {
                let asked_for = match asked.sites.as_slice() {
                    [one] => format!("{one:?} is not"),
                    several => format!("none of {} is", quoted(several)),
                };
                return Err(SiteError {
                    message: format!(
                        "{origin}: {asked_for} within this server's sites ({}): a request may only narrow the server's site filter",
                        self.sites.join(", ")
                    ),
                    hint: format!(
                        "ask for one of {} or a subdomain of one, or send no sites to keep to",
                        self.sites.join(", ")
                    ),
                });
            }
            both
        };
        let all_excluded = !sites.is_empty()
            && sites
                .iter()
                .all(|site| exclude_sites.iter().any(|e| covers(e, site)));
        if all_excluded && !asked.is_empty() {
            return Err(SiteError {
                message: format!(
                    "{origin}: every site left to search ({}) is excluded ({})",
                    sites.join(", "),
                    exclude_sites.join(", ")
                ),
                hint: "exclude only part of the sites searched, e.g. a subdomain".into(),
            });
        }
        Ok(SiteFilter {
            sites,
            exclude_sites,
        })
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
/// A name in another script is given in the ASCII form URLs carry it in (IDNA:
/// `bücher.de` is `xn--bcher-kva.de`), so it matches results and goes into `site:`.
fn normalise(name: &str) -> Option<String> {
    let name = name.trim().trim_end_matches('.');
    let name = if name.is_ascii() {
        name.to_ascii_lowercase()
    } else {
        match Host::parse(name).ok()? {
            Host::Domain(ascii) => ascii.trim_end_matches('.').to_string(),
            _ => return None,
        }
    };
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

/// Whether the normalised name `outer` covers everything `inner` does: a domain
/// covers itself and its subdomains, a bare host or an IP address only itself.
fn covers(outer: &str, inner: &str) -> bool {
    match pattern(outer) {
        Pattern::Domain(domain) => {
            inner == domain
                || inner
                    .strip_suffix(domain.as_str())
                    .is_some_and(|rest| rest.ends_with('.'))
        }
        Pattern::Host(name) => inner == name,
        Pattern::Ip(ip) => inner.parse::<IpAddr>().is_ok_and(|i| i == ip),
    }
}

/// `names` quoted and listed: `"a.com"`, or `"a.com", "b.org"`.
fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
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
    fn names_in_other_scripts_are_their_ascii_form() {
        // Issue R5, finding 17: `--site bücher.de` was refused.
        let f = filter(&["Bücher.de."], &["bücher.example.com"]);
        assert_eq!(f.sites, ["xn--bcher-kva.de"]);
        assert_eq!(f.exclude_sites, ["xn--bcher-kva.example.com"]);
        assert_eq!(
            f.query_terms(),
            "site:xn--bcher-kva.de -site:xn--bcher-kva.example.com"
        );
        assert!(f.allows("https://www.bücher.de/buch"));
        assert!(f.allows("https://xn--bcher-kva.de/"));
        assert!(!f.allows("https://buecher.de/"));
        for bad in ["bü cher.de", "bücher..de", "https://bücher.de/"] {
            assert!(
                SiteFilter::parse(&[bad.into()], &[], "--site").is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_request_may_only_narrow_the_servers_filter() {
        // Issue R5, finding 9: a request's filter replaced the operator's.
        let server = filter(&["python.org", "intranet"], &["pinterest.com"]);
        let narrow = |sites: &[&str], exclude: &[&str]| {
            server.narrowed_by(&filter(sites, exclude), "search_domain_filter")
        };
        // Nothing asked: the server's filter as it is.
        assert_eq!(narrow(&[], &[]).unwrap(), server);
        // Exclusions are united, the server's kept.
        let out = narrow(&[], &["docs.python.org"]).unwrap();
        assert_eq!(out.sites, ["python.org", "intranet"]);
        assert_eq!(out.exclude_sites, ["pinterest.com", "docs.python.org"]);
        // A site within the server's is kept; one outside is dropped.
        let out = narrow(&["docs.python.org", "evil.com"], &[]).unwrap();
        assert_eq!(out.sites, ["docs.python.org"]);
        // A wider site asked for keeps the server's sites it covers.
        let wide = filter(&["docs.python.org"], &[]);
        let out = wide
            .narrowed_by(&filter(&["python.org"], &[]), "f")
            .unwrap();
        assert_eq!(out.sites, ["docs.python.org"]);
        // Bare hosts match exactly: `intranet` is no parent of `wiki.intranet`.
        assert!(narrow(&["wiki.intranet"], &[]).is_err());
        // Nothing left: refused, saying why.
        let error = narrow(&["evil.com", "example.org"], &[]).unwrap_err();
        assert!(
            error.message.contains(r#"none of "evil.com", "example.org" is within this server's sites (python.org, intranet)"#),
            "{error}"
        );
        assert!(error.message.contains("only narrow"), "{error}");
        let error = narrow(&["evil.com"], &[]).unwrap_err();
        assert!(
            error
                .message
                .starts_with(r#"search_domain_filter: "evil.com" is not within"#),
            "{error}"
        );
        // Every site left excluded: refused too.
        let error = wide
            .narrowed_by(&filter(&[], &["python.org"]), "f")
            .unwrap_err();
        assert!(error.message.contains("is excluded"), "{error}");
        // A server with no sites takes the request's.
        let open = filter(&[], &["pinterest.com"]);
        let out = open
            .narrowed_by(&filter(&["a.com"], &["b.com"]), "f")
            .unwrap();
        assert_eq!(out, filter(&["a.com"], &["pinterest.com", "b.com"]));
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
