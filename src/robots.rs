//! robots.txt as RFC 9309 reads it: groups of `User-agent` lines with their `Allow`
//! and `Disallow` rules; the group of our product token (`ground`) applies, else the
//! `*` group, else nothing. The longest matching rule wins, `Allow` on a tie; `*`
//! matches any run of characters and a final `$` anchors the end.
//!
//! Pure data and parsing (a leaf): fetching and caching the files, and deciding which
//! fetches obey them, is the fetch stage's job. Anything that does not parse as a
//! rule (an HTML error page, binary junk) is ignored, so a broken file allows all.

/// Our product token in robots.txt `User-agent` lines.
pub const PRODUCT_TOKEN: &str = "ground";

/// The largest robots.txt read; RFC 9309 asks for at least 500 KiB.
pub const MAX_BYTES: usize = 512 * 1024;

/// One `Allow` or `Disallow` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    allow: bool,
    pattern: String,
}

/// One group: the agents it names and its rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Group {
    agents: Vec<String>,
    rules: Vec<Rule>,
}

/// A parsed robots.txt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Robots {
    groups: Vec<Group>,
}

impl Robots {
    /// Parses a robots.txt body (invalid UTF-8 is replaced; unknown lines ignored).
    pub fn parse(body: &[u8]) -> Self {
        let text = String::from_utf8_lossy(&body[..body.len().min(MAX_BYTES)]);
        let mut groups: Vec<Group> = Vec::new();
        let mut in_agents = false;
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let (key, value) = (key.trim().to_ascii_lowercase(), value.trim());
            match key.as_str() {
                "user-agent" => {
                    if !in_agents {
                        groups.push(Group::default());
                        in_agents = true;
                    }
                    if let Some(group) = groups.last_mut() {
                        group.agents.push(value.to_ascii_lowercase());
                    }
                }
                "allow" | "disallow" => {
                    in_agents = false;
                    // Rules before any User-agent line belong to no group.
                    if let Some(group) = groups.last_mut()
                        && !value.is_empty()
                    {
                        group.rules.push(Rule {
                            allow: key == "allow",
                            pattern: value.to_string(),
                        });
                    }
                }
                _ => {}
            }
        }
        Robots { groups }
    }

    /// Whether `agent` (a product token such as `ground`) may fetch `path` (the URL's
    /// path and query, e.g. `/a/b?c=d`).
    pub fn allows(&self, agent: &str, path: &str) -> bool {
        let agent = agent.to_ascii_lowercase();
        let names = |group: &Group, name: &str| {
            group
                .agents
                .iter()
                .any(|a| a.split('/').next().unwrap_or("").trim() == name)
        };
        let mut rules: Vec<&Rule> = self
            .groups
            .iter()
            .filter(|g| names(g, &agent))
            .flat_map(|g| &g.rules)
            .collect();
        if !self.groups.iter().any(|g| names(g, &agent)) {
            rules = self
                .groups
                .iter()
                .filter(|g| names(g, "*"))
                .flat_map(|g| &g.rules)
                .collect();
        }
        let path = if path.is_empty() { "/" } else { path };
        // /robots.txt itself is always allowed.
        if path == "/robots.txt" {
            return true;
        }
        rules
            .iter()
            .filter(|r| matches(&r.pattern, path))
            .max_by_key(|r| (r.pattern.len(), r.allow))
            .is_none_or(|r| r.allow)
    }
}

/// Whether `pattern` (with `*` wildcards and an optional final `$`) matches the start
/// of `path` (or all of it, with `$`).
fn matches(pattern: &str, path: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    let pattern = pattern.as_bytes();
    let path = path.as_bytes();
    // reachable[j]: the pattern so far can end at path position j.
    let mut reachable = vec![false; path.len() + 1];
    reachable[0] = true;
    for &c in pattern {
        let mut next = vec![false; path.len() + 1];
        if c == b'*' {
            let mut seen = false;
            for j in 0..=path.len() {
                seen |= reachable[j];
                next[j] = seen;
            }
        } else {
            for j in 0..path.len() {
                if reachable[j] && path[j] == c {
                    next[j + 1] = true;
                }
            }
        }
        reachable = next;
    }
    if anchored {
        reachable[path.len()]
    } else {
        reachable.iter().any(|&r| r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_group_else_the_star_group_else_everything() {
        let robots = Robots::parse(
            b"User-agent: *\nDisallow: /private\n\nUser-agent: Ground/1.0\nUser-agent: other\nDisallow: /no-ground\nAllow: /private\n",
        );
        assert!(!robots.allows("ground", "/no-ground/page"));
        assert!(
            robots.allows("ground", "/private/x"),
            "our group replaces *"
        );
        assert!(!robots.allows("someone", "/private/x"));
        assert!(robots.allows("someone", "/no-ground"));
        assert!(Robots::parse(b"").allows("ground", "/anything"));
        let star_only = Robots::parse(b"user-agent: *\ndisallow: /\n");
        assert!(!star_only.allows("ground", "/"));
        assert!(star_only.allows("ground", "/robots.txt"));
    }

    #[test]
    fn longest_match_wins_allow_on_ties_and_wildcards() {
        let robots = Robots::parse(
            b"User-agent: ground\nDisallow: /docs/\nAllow: /docs/public\nDisallow: /*.pdf$\nDisallow: /a*b\nAllow: /same\nDisallow: /same\nDisallow:\n",
        );
        assert!(!robots.allows("ground", "/docs/secret"));
        assert!(robots.allows("ground", "/docs/public/page"));
        assert!(!robots.allows("ground", "/files/report.pdf"));
        assert!(robots.allows("ground", "/files/report.pdf?x=1"));
        assert!(!robots.allows("ground", "/a-long-b-path"));
        assert!(robots.allows("ground", "/same"));
        assert!(
            robots.allows("ground", "/other"),
            "an empty Disallow is no rule"
        );
    }

    #[test]
    fn broken_files_allow_all() {
        for body in [
            &b"<html><body>Not found</body></html>"[..],
            &[0xff, 0xfe, 0x00, 0x12, 0x80][..],
            b"Disallow: /\n",
            b"User-agent ground\nDisallow /\n",
        ] {
            assert!(Robots::parse(body).allows("ground", "/page"), "{body:?}");
        }
    }
}
