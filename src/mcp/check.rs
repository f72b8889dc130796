//! MCP's `check_claims`: `ground check --json` as a tool. Claims (each searched for)
//! or another AI tool's cited answer in, the same JSON object out as structured
//! content ([`crate::render::check::json`], schema `schemas/check_claims.json`).
//!
//! Its own tool router ([`GroundServer::check_router`]), added to the server's in
//! [`GroundServer::new`], so the tool lives in one file. No model is needed: the check
//! is the matcher's, and a server with no model to be had serves it still. Plain
//! claims cost one search each of the session's budget; a cited answer costs none.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use super::arguments::parse_sites;
use super::failure::failure;
use super::{GroundServer, schemas};
use crate::service::{CheckInput, Failure};

/// `check_claims` arguments: `claims` or `cited_text`, exactly one.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CheckClaimsArgs {
    /// Claims to check, each one sentence: each is searched for, its top pages read,
    /// and judged against every page read (at most 20; one search each).
    #[serde(default)]
    pub claims: Option<Vec<String>>,
    /// An answer from an AI tool: sentences with [n] markers and a numbered list of
    /// URLs (`[1] https://...`, `1. https://...` or `[1](https://...)`). Each cited
    /// sentence is checked against the URLs it cites (at most 100 sentences, 30 URLs,
    /// 256 KiB).
    #[serde(default)]
    pub cited_text: Option<String>,
    /// With `cited_text`: also search each cited sentence (one search each, at most
    /// 20 sentences); the pages found can support a sentence elsewhere.
    #[serde(default)]
    pub search: Option<bool>,
    /// Only search and read these sites (domains cover their subdomains; a bare host
    /// or IP address matches exactly). Replaces the server's own filter ([search]
    /// sites) when given; a cited URL outside it is BLOCKED.
    #[serde(default)]
    pub sites: Option<Vec<String>>,
    /// Never search or read these sites (subdomains included).
    #[serde(default)]
    pub exclude_sites: Option<Vec<String>>,
}

/// What the failure object names as the input: the claims joined, or the start of the
/// cited text.
fn shown_input(args: &CheckClaimsArgs) -> String {
    match (&args.claims, &args.cited_text) {
        (Some(claims), _) => crate::text::shorten(&claims.join(" | "), 200),
        (None, Some(text)) => crate::text::shorten(text, 200),
        (None, None) => String::new(),
    }
}

#[tool_router(router = check_router, vis = "pub(super)")]
impl GroundServer {
    /// `ground check --json` as a tool.
    #[tool(
        description = "Fact-check claims, or another AI tool's cited answer, against the web, \
                       without a model. Give `claims` (each searched for and judged against \
                       the pages read) or `cited_text` (each sentence with [n] markers judged \
                       against the URLs it cites). Returns {mode, all_supported, claims: \
                       [{text, verdict (supported, contradicted, disputed, not_found, \
                       not_supported_by_cited), corroborated, cited?, supported_elsewhere?, \
                       supports: [{source, url, quote, support}], contradictions: [{source, \
                       url, quote, kind, value}]}], sources: [{number, url, title, status}], \
                       warnings}. Verdicts count sites: several pages of one site are one voice.",
        output_schema = schemas::check_claims(),
        annotations(read_only_hint = true, open_world_hint = true)
    )]
    async fn check_claims(&self, params: Parameters<CheckClaimsArgs>) -> CallToolResult {
        let args = params.0;
        let shown = shown_input(&args);
        let sites = match parse_sites(args.sites.as_deref(), args.exclude_sites.as_deref()) {
            Ok(sites) => sites,
            Err(problem) => return failure("check_claims", "claims", &shown, problem),
        };
        let input = match (args.claims, args.cited_text) {
            (Some(claims), None) => CheckInput::Claims(claims),
            (None, Some(text)) => CheckInput::Cited {
                text,
                search: args.search.unwrap_or(false),
            },
            _ => {
                let problem = Failure::usage(
                    "give either claims or cited_text, exactly one",
                    "pass claims: [\"...\"] to search each claim, or cited_text with an AI answer and its numbered URLs",
                );
                return failure("check_claims", "claims", &shown, problem);
            }
        };
        match self.service.check(&self.client, input, sites).await {
            Ok(checked) => CallToolResult::structured(crate::render::check::json(&checked)),
            Err(problem) => failure("check_claims", "claims", &shown, problem),
        }
    }
}
