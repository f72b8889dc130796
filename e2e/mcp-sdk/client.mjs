// The official TypeScript MCP SDK's client against `ground mcp`, as an agent's host
// would run it: the SDK starts the server over stdio, lists the tools, and validates
// every tool result's structuredContent against the outputSchema the tool declared
// (it throws when they disagree). Run by .ci/e2e against the real searx and
// llama.cpp servers; tests/it/mcp.rs checks the same with our own client.
//
//   node client.mjs GROUND_BIN SITE_URL QUESTION QUERY -- MCP_FLAGS...
//
// Prints one `ok: ...` or `FAIL: ...` line per check; exits 1 on any failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, site, question, query, dashes, ...flags] = process.argv.slice(2);
if (!bin || !site || !question || !query || dashes !== "--") {
  console.error("usage: node client.mjs GROUND_BIN SITE_URL QUESTION QUERY -- MCP_FLAGS...");
  process.exit(2);
}

let failed = 0;
const ok = (what) => console.log(`ok: mcp sdk: ${what}`);
const fail = (what) => {
  failed += 1;
  console.log(`FAIL: mcp sdk: ${what}`);
};
const check = (condition, what) => (condition ? ok(what) : fail(what));
// One check around a call: the SDK's own validation failing is a failed check.
async function attempt(what, call) {
  try {
    return await call();
  } catch (error) {
    fail(`${what}: ${error.message ?? error}`);
    return null;
  }
}

// The SDK passes the child only a few variables unless told: ground gets them all
// (.ci/e2e sets its config and cache dirs and NO_PROXY for loopback).
const transport = new StdioClientTransport({
  command: bin,
  args: ["mcp", ...flags],
  env: { ...process.env },
  stderr: "inherit",
});
const client = new Client({ name: "ground-e2e-sdk-client", version: "1.0.0" });
const started = Date.now();
const connected = await attempt("initialize", () => client.connect(transport));
if (connected === null) {
  console.log(`${failed} failed`);
  process.exit(1);
}
check(client.getServerVersion()?.name === "ground", "initialize names the server ground");

const listed = await attempt("tools/list", () => client.listTools());
const tools = listed?.tools ?? [];
const names = tools.map((t) => t.name).sort();
check(JSON.stringify(names) === JSON.stringify(["check_claims", "document_search", "grounded_answer", "web_fetch", "web_search"]),
  `tools/list has the five tools (${names.join(", ")})`);
for (const tool of tools) {
  check(tool.outputSchema?.type === "object", `${tool.name} declares an object outputSchema`);
}

// callTool validates structuredContent against the declared schema and throws when it
// does not match: reaching the checks below means it matched.
const search = await attempt("web_search", () =>
  client.callTool({ name: "web_search", arguments: { query, limit: 3 } }));
if (search) {
  const results = search.structuredContent?.results ?? [];
  check(!search.isError && results.length > 0 && results.length <= 3,
    `web_search returns 1-3 results matching its schema (${results.length})`);
}

const page = await attempt("web_fetch", () =>
  client.callTool({ name: "web_fetch", arguments: { url: `${site}/varnholm.html` } }));
if (page) {
  const content = page.structuredContent ?? {};
  check(!page.isError && content.status === "SUCCESS" && content.chars > 0,
    `web_fetch reads a page of the site matching its schema (${content.status}, ${content.chars} chars)`);
}

const missing = await attempt("web_fetch of a missing page", () =>
  client.callTool({ name: "web_fetch", arguments: { url: `${site}/no-such-page.html` } }));
if (missing) {
  check(missing.isError === true && missing.structuredContent?.status === "ERROR",
    "a missing page is a tool error whose structured content matches the schema");
}

const empty = await attempt("web_search with an empty query", () =>
  client.callTool({ name: "web_search", arguments: { query: "  " } }));
if (empty) {
  check(empty.isError === true && empty.structuredContent?.error?.kind === "invalid_arguments",
    "an empty query is a tool error whose error object matches the schema");
}

const answer = await attempt("grounded_answer", () =>
  client.callTool({ name: "grounded_answer", arguments: { question } }, undefined, { timeout: 300000 }));
if (answer) {
  const content = answer.structuredContent ?? {};
  const read = (content.sources ?? []).filter((s) => s.status === "SUCCESS").length;
  check(!answer.isError && typeof content.answer === "string" && read > 0,
    `grounded_answer answers from ${read} page(s) read, matching its schema (verdict ${content.verdict?.name})`);
}

await attempt("ping", () => client.ping());
ok(`session took ${((Date.now() - started) / 1000).toFixed(1)} s`);
await client.close();
console.log(`mcp sdk: ${failed} checks failed`);
process.exit(failed === 0 ? 0 : 1);
