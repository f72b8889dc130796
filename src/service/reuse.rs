//! Answers reused within one client's session (an MCP session, a `ground serve`
//! process whose clients are not isolated): a question that normalises to that of an
//! earlier grounded run, asked with the same options ([`request_key`]), gets that
//! run's report again, without searching or asking the model; the faces mark it
//! (`reused`).
//!
//! Kept apart from the service so that the rules it holds (what counts as the same
//! question, how long, how many and how many bytes of runs are kept) can be read and
//! tested alone. The bytes matter: a run keeps its pages' full texts (up to 60,000
//! characters each), so 64 runs of ten pages held half a gigabyte before the byte
//! bound.
//!
//! Replicas that name a Redis (`[state] redis_url`) share their runs there too
//! ([`Reused::shared_through`]): a question one replica answered is answered again by
//! another from that run, within the reuse window (the Redis key's expiry). Memory
//! stays the first level and the fallback: a run is looked for there first, and while
//! Redis does not answer each process reuses its own runs alone. A run stored by
//! another version of ground is never read: the version is in its key, and a value
//! that does not decode is a miss.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::report::Report;
use crate::settings::{ServeSettings, Settings, SharedState};
use crate::state::keys::Kind;

/// Most grounded runs one session keeps for reuse; the oldest goes first.
pub const MAX_REUSED_RUNS: usize = 64;

/// Most bytes of text (pages, snippets, prompt, answer) the kept runs hold together;
/// the oldest go first. 32 MiB: a few dozen ordinary runs.
pub const MAX_REUSED_BYTES: usize = 32 * 1024 * 1024;

/// About how many bytes `report` holds: the texts that make up nearly all of it.
pub fn report_bytes(report: &Report) -> usize {
    let sources: usize = report
        .sources
        .iter()
        .map(|s| s.text.len() + s.url.len() + s.title.len())
        .sum();
    let hits: usize = report
        .hits
        .iter()
        .map(|h| h.url.len() + h.title.len() + h.snippet.len())
        .sum();
    let statements: usize = report
        .answer
        .statements
        .iter()
        .map(|s| s.text.len() + s.citations.iter().map(|c| c.quote.len()).sum::<usize>())
        .sum();
    // Everything else (timings, statuses, small strings) is a few KB at most.
    4096 + sources + hits + statements + report.context.text.len() + report.answer.answer.len()
}

/// The key under which a question's run is reused, or `None` when the question has
/// no word or symbol to key it by (such a question is never reused).
///
/// The question is normalised ([`crate::text::normalise`]: case, quotes, dashes,
/// spaces) and cut into tokens, in order: runs of letters and digits, and every
/// symbol on its own (`#`, `+`, `°`, `%`, currency signs, ...), so "Is C# memory
/// safe?", "Is C++ memory safe?" and "Is C memory safe?" get three keys, and word order
/// counts. Punctuation that does not change a question is left out: sentence marks,
/// quotes and brackets, and a hyphen inside a word ("memory-safe" = "memory safe").
/// What does change a number is kept: a minus sign ("-40" is not "40") and a decimal
/// point or comma between digits ("1.5" is not "15").
pub fn reuse_key(question: &str) -> Option<String> {
    let text: Vec<char> = crate::text::normalise(question).chars().collect();
    let mut tokens: Vec<String> = Vec::new();
    let mut word = String::new();
    for (i, &c) in text.iter().enumerate() {
        if c.is_alphanumeric() {
            word.push(c);
            continue;
        }
        let before = i.checked_sub(1).map(|j| text[j]);
        let after = text.get(i + 1).copied();
        let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
        let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        // Inside a number: 1.5, 5,000 (kept in the word, so "1.5" is one token).
        if matches!(c, '.' | ',') && digit(before) && digit(after) {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            tokens.push(std::mem::take(&mut word));
        }
        let minus_sign = c == '-' && !alnum(before) && digit(after);
        let ignorable = c.is_whitespace()
            || (c == '-' && !minus_sign)
            || matches!(
                c,
                '?' | '!'
                    | '.'
                    | ','
                    | ';'
                    | ':'
                    | '\''
                    | '"'
                    | '('
                    | ')'
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | '¿'
                    | '¡'
            );
        if !ignorable {
            tokens.push(c.to_string());
        }
    }
    if !word.is_empty() {
        tokens.push(word);
    }
    (!tokens.is_empty()).then(|| tokens.join(" "))
}

/// The key under which a request's run is reused: the question's [`reuse_key`] and
/// a digest of the settings the request runs with, or `None` when the question has
/// nothing to key it by.
///
/// The settings are those after the request's own options (a face's `adjust`: the
/// site filter, Perplexity's `search_recency_filter`, `max_tokens`, MCP's `sites`),
/// all of them, so that an answer read under another filter, time range or token cap
/// is never given for this one, and an option a face adds later is in the key
/// without anyone remembering to put it there. The service's own settings are the
/// same for every request, so only the request's options tell two keys apart.
///
/// Left out are the settings that say where and how this process runs, not what it
/// answers ([`answer_settings`]), so that replicas listening on other ports, with
/// cache and state folders of their own, key the same request alike.
pub fn request_key(question: &str, settings: &Settings) -> Option<String> {
    use sha2::{Digest, Sha256};
    let key = reuse_key(question)?;
    let settings = answer_settings(settings);
    // Debug writes every field (secrets redacted) in a fixed order: no map in it.
    let digest = Sha256::digest(format!("{settings:?}").as_bytes());
    let short: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    Some(format!("{key} [{short}]"))
}

/// `settings` without what tells one process of a deployment from another and not
/// what it answers: the server's address, key and limits (`[serve]`), the cache,
/// state and model folders, the Redis named, and the embedded model's threads,
/// batch and memory. Everything else stays, so an option a face adds later is in
/// the key without anyone remembering to put it there.
fn answer_settings(settings: &Settings) -> Settings {
    let mut settings = settings.clone();
    settings.serve = ServeSettings::default();
    settings.state = None;
    settings.cache.dir = None;
    settings.search.state_dir = None;
    settings.search.shared = None;
    settings.docs.home = None;
    let embedded = &mut settings.llm.embedded;
    embedded.models_dir = None;
    embedded.threads = 0;
    embedded.parallel = 1;
    embedded.memory_available = None;
    embedded.verbose = false;
    settings
}

/// The part of a run's key in Redis that is not the request's: ground's version, so
/// that replicas of different versions (a rolling update) never read each other's
/// reports.
fn shared_key(key: &str) -> String {
    format!("ground {} {key}", env!("CARGO_PKG_VERSION"))
}

/// The header line of a run stored in Redis, before its report
/// ([`crate::report::stored_json`]).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Header {
    /// Its [`shared_key`], compared on read.
    key: String,
    /// When the run finished (milliseconds since the Unix epoch): its age on another
    /// replica.
    stored_at_ms: u64,
}

/// The bytes a run is stored as in Redis: a [`Header`] line, then the report.
fn encode(key: &str, stored_at_ms: u64, report: &Report) -> Option<Vec<u8>> {
    let header = Header {
        key: key.to_string(),
        stored_at_ms,
    };
    let mut bytes = serde_json::to_vec(&header).ok()?;
    bytes.push(b'\n');
    bytes.extend(crate::report::stored_json(report).ok()?);
    Some(bytes)
}

/// A run stored under `key` by [`encode`]: when it was stored and its report; `None`
/// for bytes of another key or another shape (another version wrote them).
fn decode(key: &str, bytes: &[u8]) -> Option<(u64, Report)> {
    let split = bytes.iter().position(|&b| b == b'\n')?;
    let header: Header = serde_json::from_slice(&bytes[..split]).ok()?;
    if header.key != key {
        return None;
    }
    let report = Report::from_stored_json(&bytes[split + 1..]).ok()?;
    Some((header.stored_at_ms, report))
}

/// A session's grounded runs by [`reuse_key`], each with when it finished and its
/// size; shared by every call of the session, and by the replicas of a deployment
/// through Redis when it names one.
#[derive(Debug)]
pub struct Reused {
    runs: Mutex<HashMap<String, Kept>>,
    /// Most bytes the kept runs may hold ([`MAX_REUSED_BYTES`] by default).
    max_bytes: usize,
    /// The Redis the deployment's replicas share runs through, if any.
    shared: Option<Arc<crate::state::Redis>>,
}

/// One kept run.
#[derive(Debug)]
struct Kept {
    at: Instant,
    bytes: usize,
    report: Arc<Report>,
}

impl Default for Reused {
    fn default() -> Self {
        Reused::within(MAX_REUSED_BYTES)
    }
}

impl Reused {
    /// An empty store that keeps at most `max_bytes` of runs.
    pub fn within(max_bytes: usize) -> Self {
        Reused {
            runs: Mutex::default(),
            max_bytes,
            shared: None,
        }
    }

    /// An empty store that shares its runs through the Redis `shared` names (see
    /// the module doc); in memory alone when it names none.
    pub fn shared_through(shared: Option<&SharedState>) -> Self {
        Reused {
            shared: crate::state::redis(shared),
            ..Reused::default()
        }
    }

    /// An earlier grounded run for `key` younger than `ttl`, with its age: this
    /// process's ([`Reused::earlier`]), else one a replica stored in the shared Redis
    /// (then kept here too, with its age). `None` when there is none, or Redis does
    /// not answer.
    pub async fn find(&self, key: &str, ttl: Duration) -> Option<(Duration, Arc<Report>)> {
        if let Some(found) = self.earlier(key, ttl) {
            return Some(found);
        }
        let redis = self.shared.as_ref().filter(|_| !ttl.is_zero())?;
        let local = shared_key(key);
        let bytes = redis.get(&redis.key(Kind::Answer, &local)).await??;
        if bytes.len() > crate::state::MAX_VALUE_BYTES {
            return None;
        }
        // Parsing up to a few MB of JSON is CPU work: off the async runtime.
        let (stored_at_ms, report) = tokio::task::spawn_blocking(move || decode(&local, &bytes))
            .await
            .ok()??;
        let age = Duration::from_millis(crate::files::unix_ms().saturating_sub(stored_at_ms));
        if age >= ttl {
            return None;
        }
        let report = Arc::new(report);
        self.remember_aged(key.to_string(), Arc::clone(&report), ttl, age);
        Some((age, report))
    }

    /// Keeps a grounded run for reuse ([`Reused::remember`]), and in the shared
    /// Redis for `ttl` when one is named (a run over
    /// [`crate::state::MAX_VALUE_BYTES`] stays local; Redis not answering, too).
    pub async fn keep(&self, key: String, report: Arc<Report>, ttl: Duration) {
        self.remember(key.clone(), Arc::clone(&report), ttl);
        let Some(redis) = self.shared.as_ref().filter(|_| !ttl.is_zero()) else {
            return;
        };
        let local = shared_key(&key);
        let redis_key = redis.key(Kind::Answer, &local);
        let stored_at_ms = crate::files::unix_ms();
        let bytes = tokio::task::spawn_blocking(move || encode(&local, stored_at_ms, &report))
            .await
            .ok()
            .flatten();
        if let Some(bytes) = bytes {
            redis.set(&redis_key, &bytes, ttl).await;
        }
    }

    /// Bytes the kept runs hold now (about: [`report_bytes`] of each).
    pub fn bytes(&self) -> usize {
        let runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        runs.values().map(|k| k.bytes).sum()
    }

    /// An earlier grounded run for `key`, with its age, while it is younger than `ttl`
    /// (older runs are dropped on the way).
    pub fn earlier(&self, key: &str, ttl: Duration) -> Option<(Duration, Arc<Report>)> {
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        runs.retain(|_, kept| kept.at.elapsed() < ttl);
        runs.get(key)
            .map(|kept| (kept.at.elapsed(), Arc::clone(&kept.report)))
    }

    /// Keeps a grounded run for reuse, dropping the oldest past [`MAX_REUSED_RUNS`] or
    /// the byte bound; nothing is kept when `ttl` is zero (reuse is off) or the run
    /// alone is over the byte bound.
    pub fn remember(&self, key: String, report: Arc<Report>, ttl: Duration) {
        self.remember_aged(key, report, ttl, Duration::ZERO);
    }

    /// [`Reused::remember`] for a run that finished `age` ago (one read from Redis:
    /// it expires here when it would have where it was made).
    fn remember_aged(&self, key: String, report: Arc<Report>, ttl: Duration, age: Duration) {
        let bytes = report_bytes(&report);
        if ttl.is_zero() || bytes > self.max_bytes {
            return;
        }
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        runs.remove(&key);
        let held = |runs: &HashMap<String, Kept>| runs.values().map(|k| k.bytes).sum::<usize>();
        while !runs.is_empty()
            && (runs.len() >= MAX_REUSED_RUNS || held(&runs) + bytes > self.max_bytes)
        {
            let Some(oldest) = runs
                .iter()
                .min_by_key(|(_, kept)| kept.at)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            runs.remove(&oldest);
        }
        let now = Instant::now();
        let at = now.checked_sub(age).unwrap_or(now);
        runs.insert(key, Kept { at, bytes, report });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_that_differ_in_case_and_punctuation_share_a_key() {
        assert_eq!(
            reuse_key("Do tardigrades  survive in space?"),
            reuse_key("do tardigrades survive in space")
        );
        assert_eq!(
            reuse_key("Is C memory-safe?"),
            reuse_key("is C memory safe")
        );
        assert_ne!(
            reuse_key("tardigrades in space"),
            reuse_key("tardigrades on earth")
        );
    }

    #[test]
    fn symbols_numbers_and_word_order_make_different_questions() {
        let distinct = [
            "Is C# memory safe?",
            "Is C++ memory safe?",
            "Is C memory-safe",
            "is 40 °C colder than -40 °C?",
            "is -40 °C colder than 40 °C?",
            "is 40 C colder than 40 C?",
            "Is 1.5 bigger than 15?",
            "Is 15 bigger than 1.5?",
            "price in $",
            "price in €",
            "does the dog bite the man",
            "does the man bite the dog",
        ];
        let keys: Vec<_> = distinct.iter().map(|q| reuse_key(q)).collect();
        for (i, a) in keys.iter().enumerate() {
            assert!(a.is_some(), "{}", distinct[i]);
            for (j, b) in keys.iter().enumerate().skip(i + 1) {
                assert_ne!(a, b, "{:?} and {:?} share a key", distinct[i], distinct[j]);
            }
        }
    }

    #[test]
    fn a_question_with_nothing_to_key_is_never_reused() {
        assert_eq!(reuse_key("?!"), None);
        assert_eq!(reuse_key("  ... "), None);
        assert_eq!(reuse_key("#").as_deref(), Some("#"));
    }

    #[test]
    fn the_request_s_options_are_in_the_key() {
        // R5 finding 11: reuse ignored search_recency_filter and max_tokens.
        use crate::settings::{Settings, TimeRange};
        let question = "Do tardigrades survive in space?";
        let base: Settings =
            crate::config::resolve(&crate::config::Overrides::default(), &|_| None).unwrap();
        let key = |change: &dyn Fn(&mut Settings)| {
            let mut settings = base.clone();
            change(&mut settings);
            request_key(question, &settings).unwrap()
        };
        let plain = key(&|_| {});
        assert!(
            plain.starts_with("do tardigrades survive in space ["),
            "{plain}"
        );
        // The same question and options: the same key (also in other words).
        assert_eq!(plain, key(&|_| {}));
        assert_eq!(
            Some(plain.clone()),
            request_key("do tardigrades  survive in space", &base)
        );
        let week = key(&|s| s.search.time_range = Some(TimeRange::Week));
        let year = key(&|s| s.search.time_range = Some(TimeRange::Year));
        let shorter = key(&|s| s.llm.max_answer_tokens = 128);
        let sites = key(&|s| {
            s.search.sites =
                crate::sites::SiteFilter::parse(&["docs.python.org".into()], &[], "test").unwrap()
        });
        let all = [&plain, &week, &year, &shorter, &sites];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(request_key("?!", &base), None);
    }

    /// A report with something in every part a reused run is rendered from,
    /// those `--json` leaves out included.
    fn full_report() -> Report {
        use crate::context::{SourceCut, SourceKind, SourceText};
        use crate::grounding::{CheckedCitation, MatchKind, Statement, Support};
        let mut report = Report {
            question: "Can tardigrades survive in space?".into(),
            mode: crate::report::AnswerMode::Offline {
                reason: "no search".into(),
            },
            queries: vec!["tardigrades space".into()],
            answer_language: Some(crate::language::AnswerLanguage {
                code: "de".into(),
                name: "German".into(),
                source: "set",
            }),
            images: Some(Vec::new()),
            warnings: vec!["one page timed out".into()],
            ..Report::default()
        };
        report.sources.push(SourceText {
            number: 1,
            url: "file:///docs/space.md".into(),
            title: "Space".into(),
            text: "Line one.\nTardigrades survived ten days.\n".into(),
        });
        report.context.text = "<source id=\"1\">Tardigrades survived</source>".into();
        report.context.sources.push(SourceCut {
            number: 1,
            kind: SourceKind::Page,
            chars_extracted: 40,
            chars_sent: 30,
            truncated: true,
            passages_total: 2,
            passages_sent: 1,
            sent: vec![0..9, 10..40],
        });
        let hit = crate::hits::SearchHit::of_url("file:///docs/space.md");
        let mut page = crate::page::PageAttempt::of(3, &hit);
        page.index = Some(1);
        page.collection = Some("notes".into());
        report.pages.push(page);
        let statement = Statement {
            text: "They survived ten days [1].".into(),
            start: 0,
            end: 27,
            citations: vec![CheckedCitation {
                source: 1,
                quote: "Tardigrades survived ten days".into(),
                verified: true,
                confidence: 1.0,
                matched: MatchKind::Exact,
            }],
            support: Support::Quote,
            matches: Vec::new(),
            mismatch: None,
            corroborated_by: vec![1],
            contradicted_by: Vec::new(),
        };
        report.answer.answer = statement.text.clone();
        report.answer.answerable = true;
        report.answer.statements.push(statement.clone());
        report.pack_items.push(crate::report::PackEntry {
            bucket: crate::answer::PACK_BUCKETS[1],
            statement,
            policy_or_legal: true,
        });
        report
    }

    #[test]
    fn a_stored_run_reads_back_whole_and_only_under_its_own_key() {
        let report = full_report();
        let key = shared_key("can tardigrades survive in space [0123]");
        let bytes = encode(&key, 1_700_000_000_000, &report).unwrap();
        let (at, back) = decode(&key, &bytes).unwrap();
        assert_eq!(at, 1_700_000_000_000);
        // Debug writes every field: the same text, the same report (the parts
        // `--json` leaves out included: the prompt, the ranges sent, the collection).
        assert_eq!(format!("{back:?}"), format!("{report:?}"));
        assert_eq!(back.context.sources[0].sent, vec![0..9, 10..40]);
        assert_eq!(
            back.file_location(1).unwrap().collection.as_deref(),
            Some("notes")
        );
        // Another key, bytes cut short, another shape: a miss, never an error.
        assert!(decode(&shared_key("another question [0123]"), &bytes).is_none());
        assert!(decode(&key, &bytes[..bytes.len() / 2]).is_none());
        let other_shape = format!(
            "{}\n{{\"report\": {{\"question\": 1}}}}",
            String::from_utf8_lossy(&bytes[..bytes.iter().position(|&b| b == b'\n').unwrap()])
        );
        assert!(decode(&key, other_shape.as_bytes()).is_none());
        assert!(key.contains(env!("CARGO_PKG_VERSION")), "{key}");
    }

    #[test]
    fn replicas_of_one_deployment_key_a_request_alike() {
        use crate::settings::Settings;
        let base: Settings =
            crate::config::resolve(&crate::config::Overrides::default(), &|_| None).unwrap();
        let mut other = base.clone();
        other.serve.listen = "127.0.0.1:8102".parse().unwrap();
        other.cache.dir = Some("/srv/b/cache".into());
        other.search.state_dir = Some("/srv/b/state".into());
        other.llm.embedded.parallel = 4;
        let question = "Can tardigrades survive in space?";
        assert_eq!(request_key(question, &base), request_key(question, &other));
        // What the answer depends on still tells them apart.
        other.llm.model = "another-model".into();
        assert_ne!(request_key(question, &base), request_key(question, &other));
    }

    /// A grounded run whose one source holds `bytes` of text.
    fn run_of(bytes: usize) -> Arc<Report> {
        let mut report = Report::default();
        report.sources.push(crate::context::SourceText {
            number: 1,
            url: "https://example.org/".into(),
            title: "t".into(),
            text: "x".repeat(bytes),
        });
        Arc::new(report)
    }

    #[test]
    fn kept_runs_stay_within_the_byte_bound_oldest_first() {
        let reused = Reused::within(1_000_000);
        let ttl = Duration::from_secs(600);
        for i in 0..20 {
            reused.remember(format!("q{i}"), run_of(200_000), ttl);
            assert!(reused.bytes() <= 1_000_000, "{} bytes kept", reused.bytes());
        }
        // The newest are kept, the oldest gone.
        assert!(reused.earlier("q19", ttl).is_some());
        assert!(reused.earlier("q0", ttl).is_none());
        // A run over the whole bound is not kept at all (and evicts nothing).
        reused.remember("huge".into(), run_of(2_000_000), ttl);
        assert!(reused.earlier("huge", ttl).is_none());
        assert!(reused.earlier("q19", ttl).is_some());
    }
}
