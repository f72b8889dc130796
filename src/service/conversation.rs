//! The evidence of conversations, kept for follow-ups: the sources each answer was
//! given, numbered as the answer cites them, found again by the conversation itself.
//!
//! A client (an MCP agent, an OpenAI or Gemini SDK) sends a follow-up with the
//! earlier turns of its conversation: questions and the answers it was given. The
//! evidence is keyed by those turns (every question and answer, whitespace
//! normalised), so each conversation finds its own sources whatever else the client
//! runs beside it: a fresh question asked in parallel cannot renumber a
//! conversation's `[1]`, and two follow-ups of one conversation each continue from
//! the same earlier answer (a branch, not a race). A conversation the service does not
//! know (its answers were not ours, or were forgotten) is a follow-up with no
//! evidence: it searches.
//!
//! What is kept per conversation is the conversations' one record,
//! [`crate::pipeline::Evidence`], the record a saved session keeps on disk too, with
//! its one numbering rule: this store keeps it keyed by the turns, in memory
//! ([`Memory`]) or, for replicas of `ground serve` that name a Redis, there too
//! ([`Shared`]): a follow-up that reaches another replica finds its sources, with
//! the same numbers.
//!
//! Bounded: the newest [`MAX_CONVERSATIONS`] conversations and [`MAX_EVIDENCE_BYTES`]
//! of source text are kept, the least recently used going first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;

use schemars::JsonSchema;
use serde::Deserialize;
use sha2::{Digest, Sha256};

pub use crate::pipeline::Evidence;
use crate::pipeline::{MAX_PRIOR_TURNS, Prior, PriorTurn};
use crate::report::Report;
use crate::settings::SharedState;
use crate::state::keys::Kind;
use crate::text::cut_bytes;

/// Longest question or answer of a conversation turn used, in bytes (cut at a
/// character boundary): bytes, so that the line limit of a transport can be set
/// from it ([`max_conversation_bytes`]).
pub const MAX_TURN_BYTES: usize = 8000;

/// Most conversations whose evidence is kept.
pub const MAX_CONVERSATIONS: usize = 64;

/// Most bytes of source text the kept conversations hold together.
pub const MAX_EVIDENCE_BYTES: usize = 32 * 1024 * 1024;

/// Most bytes the conversation of one request can carry once cut: every kept turn's
/// question and answer at [`MAX_TURN_BYTES`]. A transport's request limit must be
/// above this (with room for escaping: JSON may spell a character as six bytes).
pub const fn max_conversation_bytes() -> usize {
    MAX_PRIOR_TURNS * 2 * MAX_TURN_BYTES
}

/// One earlier turn of a conversation, as the client holds it.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct Turn {
    /// The question asked.
    pub question: String,
    /// The answer given (its `[n]` markers name the conversation's sources).
    pub answer: String,
}

/// The key a conversation's evidence is kept under: a hash of its turns, each
/// question and answer with its whitespace normalised.
pub fn conversation_key(turns: &[Turn]) -> String {
    let mut hash = Sha256::new();
    for turn in turns {
        for text in [&turn.question, &turn.answer] {
            let words: Vec<&str> = cut_bytes(text, MAX_TURN_BYTES).split_whitespace().collect();
            hash.update(words.join(" ").as_bytes());
            hash.update([0u8]);
        }
    }
    format!("{:x}", hash.finalize())
}

/// How long a conversation's evidence is kept in shared state (Redis) after its last
/// answer: a day. In memory the bounds below decide ([`MAX_CONVERSATIONS`],
/// [`MAX_EVIDENCE_BYTES`]); Redis has no "least recently used" of ours, so its
/// entries expire instead (and its own `maxmemory-policy` bounds the whole).
pub const SHARED_CONVERSATION_TTL: Duration = Duration::from_secs(24 * 3600);

/// Where conversations' evidence is kept, by [`conversation_key`]: this process's
/// memory ([`Memory`]), or Redis shared by replicas with the memory as fallback
/// ([`Shared`]). A key names the whole conversation (every turn), so what is kept
/// under it never changes: a store may keep copies anywhere.
pub trait ConversationStore: Send + Sync + std::fmt::Debug {
    /// The evidence kept under `key`, marked used; `None` when unknown.
    fn find<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Option<Arc<Evidence>>>;
    /// Keeps `evidence` under `key`.
    fn keep(&self, key: String, evidence: Arc<Evidence>) -> BoxFuture<'_, ()>;
    /// How many conversations this process holds.
    fn held(&self) -> usize;
}

/// The conversations the service answered, by [`conversation_key`], in the store
/// the settings name.
#[derive(Debug)]
pub struct Conversations {
    store: Box<dyn ConversationStore>,
}

impl Default for Conversations {
    fn default() -> Self {
        Conversations {
            store: Box::new(Memory::default()),
        }
    }
}

impl Conversations {
    /// The store for `shared`: Redis (with memory as fallback) when it names one,
    /// else memory alone.
    pub fn for_state(shared: Option<&SharedState>) -> Self {
        match crate::state::redis(shared) {
            Some(redis) => Conversations {
                store: Box::new(Shared {
                    redis,
                    local: Memory::default(),
                }),
            },
            None => Conversations::default(),
        }
    }

    /// The evidence of the conversation `turns` (empty when unknown), marked used.
    pub async fn evidence(&self, turns: &[Turn]) -> Arc<Evidence> {
        if turns.is_empty() {
            return Arc::default();
        }
        let key = conversation_key(turns);
        self.store.find(&key).await.unwrap_or_default()
    }

    /// Keeps the evidence of the conversation `turns` continued by `question` and the
    /// answer the client was shown: `earlier` plus the run's new sources.
    pub async fn keep(
        &self,
        turns: &[Turn],
        earlier: &Evidence,
        question: &str,
        shown_answer: &str,
        report: &Report,
    ) {
        let mut evidence = earlier.clone();
        evidence.add(report, usize::MAX);
        if evidence.sources.is_empty() || evidence.bytes() > MAX_EVIDENCE_BYTES {
            return;
        }
        let mut continued = turns.to_vec();
        continued.push(Turn {
            question: question.to_string(),
            answer: shown_answer.to_string(),
        });
        let key = conversation_key(&continued);
        self.store.keep(key, Arc::new(evidence)).await;
    }

    /// How many conversations this process holds.
    pub fn len(&self) -> usize {
        self.store.held()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Conversations in this process's memory: the newest [`MAX_CONVERSATIONS`] and
/// [`MAX_EVIDENCE_BYTES`] of source text, the least recently used going first.
#[derive(Debug, Default)]
pub struct Memory {
    kept: Mutex<HashMap<String, (Instant, Arc<Evidence>)>>,
}

impl Memory {
    fn find_now(&self, key: &str) -> Option<Arc<Evidence>> {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let (used, evidence) = kept.get_mut(key)?;
        *used = Instant::now();
        Some(Arc::clone(evidence))
    }

    fn keep_now(&self, key: String, evidence: Arc<Evidence>) {
        let bytes = evidence.bytes();
        if bytes > MAX_EVIDENCE_BYTES {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.remove(&key);
        let held = |kept: &HashMap<String, (Instant, Arc<Evidence>)>| {
            kept.values().map(|(_, e)| e.bytes()).sum::<usize>()
        };
        while !kept.is_empty()
            && (kept.len() >= MAX_CONVERSATIONS || held(&kept) + bytes > MAX_EVIDENCE_BYTES)
        {
            let Some(oldest) = kept
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            kept.remove(&oldest);
        }
        kept.insert(key, (Instant::now(), evidence));
    }
}

impl ConversationStore for Memory {
    fn find<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Option<Arc<Evidence>>> {
        Box::pin(std::future::ready(self.find_now(key)))
    }

    fn keep(&self, key: String, evidence: Arc<Evidence>) -> BoxFuture<'_, ()> {
        self.keep_now(key, evidence);
        Box::pin(std::future::ready(()))
    }

    fn held(&self) -> usize {
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// Conversations in Redis, shared by every replica that names it (JSON, expiring
/// after [`SHARED_CONVERSATION_TTL`]), and in this process's memory: read from memory
/// first, then Redis; while Redis does not answer, memory alone (a follow-up that
/// reaches another replica then searches again, as without Redis).
#[derive(Debug)]
pub struct Shared {
    redis: Arc<crate::state::Redis>,
    local: Memory,
}

impl ConversationStore for Shared {
    fn find<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Option<Arc<Evidence>>> {
        Box::pin(async move {
            if let Some(found) = self.local.find_now(key) {
                return Some(found);
            }
            let shared_key = self.redis.key(Kind::Conversation, key);
            let bytes = self.redis.get(&shared_key).await??;
            // Parsing up to a few MB of JSON is CPU work: off the async runtime.
            let parsed = tokio::task::spawn_blocking(move || {
                serde_json::from_slice::<Evidence>(&bytes).ok()
            })
            .await
            .ok()??;
            let evidence = Arc::new(parsed);
            self.local.keep_now(key.to_string(), Arc::clone(&evidence));
            Some(evidence)
        })
    }

    fn keep(&self, key: String, evidence: Arc<Evidence>) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.local.keep_now(key.clone(), Arc::clone(&evidence));
            let json = tokio::task::spawn_blocking(move || serde_json::to_vec(&*evidence).ok())
                .await
                .ok()
                .flatten();
            if let Some(json) = json {
                let shared_key = self.redis.key(Kind::Conversation, &key);
                self.redis
                    .set(&shared_key, &json, SHARED_CONVERSATION_TTL)
                    .await;
            }
        })
    }

    fn held(&self) -> usize {
        self.local.held()
    }
}

/// The pipeline's prior for a follow-up: the last [`MAX_PRIOR_TURNS`] turns, each
/// question and answer cut to [`MAX_TURN_BYTES`], and the conversation's evidence.
pub fn prior_of(turns: &[Turn], evidence: &Evidence) -> Prior {
    let skip = turns.len().saturating_sub(MAX_PRIOR_TURNS);
    evidence.prior(
        turns[skip..]
            .iter()
            .map(|t| PriorTurn {
                question: cut_bytes(&t.question, MAX_TURN_BYTES).to_string(),
                answer: cut_bytes(&t.answer, MAX_TURN_BYTES).to_string(),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::SourceText;

    fn turn(q: &str, a: &str) -> Turn {
        Turn {
            question: q.into(),
            answer: a.into(),
        }
    }

    fn report_with(urls: &[&str]) -> Report {
        let mut report = Report::default();
        for (i, url) in urls.iter().enumerate() {
            report.sources.push(SourceText {
                number: i + 1,
                url: url.to_string(),
                title: String::new(),
                text: format!("text of {url}"),
            });
        }
        report
    }

    #[tokio::test]
    async fn each_conversation_finds_its_own_evidence() {
        let conversations = Conversations::default();
        let a = report_with(&["https://a.example/1", "https://a.example/2"]);
        let b = report_with(&["https://b.example/1"]);
        conversations
            .keep(&[], &Evidence::default(), "qa", "answer a [1]", &a)
            .await;
        // A fresh question beside it does not disturb the first conversation.
        conversations
            .keep(&[], &Evidence::default(), "qb", "answer b [1]", &b)
            .await;
        let found = conversations
            .evidence(&[turn("qa", "answer  a [1] ")])
            .await;
        assert_eq!(found.sources.len(), 2);
        assert_eq!(found.sources[0].url, "https://a.example/1");
        let found = conversations.evidence(&[turn("qb", "answer b [1]")]).await;
        assert_eq!(found.sources[0].url, "https://b.example/1");
        // A conversation we never answered has no evidence.
        assert!(
            conversations
                .evidence(&[turn("qa", "another answer")])
                .await
                .sources
                .is_empty()
        );
    }

    #[tokio::test]
    async fn a_follow_up_numbers_its_new_sources_after_the_earlier_ones() {
        let conversations = Conversations::default();
        let first = report_with(&["https://a.example/1", "https://a.example/2"]);
        conversations
            .keep(&[], &Evidence::default(), "q1", "a1", &first)
            .await;
        let turns = [turn("q1", "a1")];
        let earlier = conversations.evidence(&turns).await;
        // The follow-up's report numbers the earlier sources 1-2 and its new page 3.
        let second = report_with(&[
            "https://a.example/1",
            "https://a.example/2",
            "https://c.example/",
        ]);
        conversations
            .keep(&turns, &earlier, "q2", "a2", &second)
            .await;
        let found = conversations
            .evidence(&[turn("q1", "a1"), turn("q2", "a2")])
            .await;
        assert_eq!(found.sources.len(), 3);
        assert_eq!(found.sources[2].url, "https://c.example/");
    }

    #[tokio::test]
    async fn kept_conversations_are_bounded() {
        let conversations = Conversations::default();
        for i in 0..(MAX_CONVERSATIONS + 10) {
            let report = report_with(&["https://a.example/"]);
            conversations
                .keep(&[], &Evidence::default(), &format!("q{i}"), "a", &report)
                .await;
        }
        assert_eq!(conversations.len(), MAX_CONVERSATIONS);
    }

    #[test]
    fn turns_are_cut_in_bytes_at_a_character_boundary() {
        let long = "界".repeat(5000); // 15,000 bytes
        let prior = prior_of(&[turn(&long, &long)], &Evidence::default());
        assert!(prior.turns[0].question.len() <= MAX_TURN_BYTES);
        assert!(prior.turns[0].question.len() > MAX_TURN_BYTES - 3);
        assert!(prior.turns[0].answer.chars().all(|c| c == '界'));
    }

    #[tokio::test]
    async fn a_session_and_a_server_number_a_conversation_alike() {
        // The same two runs kept by a saved session and by a server's evidence.
        let first = crate::session::tests::report_reading(0, 2, 1);
        let second = crate::session::tests::report_reading(3, 1, 2);
        let mut session = crate::session::Session::new("alike").unwrap();
        let conversations = Conversations::default();
        session.record(&first);
        conversations
            .keep(&[], &Evidence::default(), "q1", "a1 [1]", &first)
            .await;
        let turns = [turn("q1", "a1 [1]")];
        let earlier = conversations.evidence(&turns).await;
        session.record(&second);
        conversations
            .keep(&turns, &earlier, "q2", "a2 [4]", &second)
            .await;
        let evidence = conversations
            .evidence(&[turn("q1", "a1 [1]"), turn("q2", "a2 [4]")])
            .await;
        let (on_disk, in_memory) = (session.prior(), prior_of(&[], &evidence));
        let numbers = |p: &Prior| -> Vec<(usize, String)> {
            p.sources
                .iter()
                .map(|s| (s.number, s.url.clone()))
                .collect()
        };
        assert_eq!(numbers(&on_disk), numbers(&in_memory));
        assert_eq!(on_disk.short, in_memory.short);
        assert_eq!(on_disk.short, vec![3, 5, 6], "{:?}", on_disk.short);
    }
}
