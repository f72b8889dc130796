//! The PDF worker's reply decoder on arbitrary and mutated bytes: a reply within the
//! caps or an error, never a panic, each input in bounded time; and what the worker
//! encodes, the parent decodes unchanged.

use std::time::{Duration, Instant};

use ground::pdf::PdfText;
use ground::pdf::protocol::{self, Reply};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any bytes: a reply or an error, never a panic, in bounded time.
    #[test]
    fn the_reply_decoder_takes_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let started = Instant::now();
        let _ = protocol::decode_reply(&bytes);
        prop_assert!(started.elapsed() < Duration::from_millis(500));
    }

    /// Replies with a valid start and arbitrary rest, and valid replies with bytes
    /// changed: never a panic, in bounded time; what decodes is within the caps.
    #[test]
    fn the_reply_decoder_takes_mutated_replies(
        title in proptest::option::of(".{0,40}"),
        text in ".{0,400}",
        pages in 0u32..1000,
        tail in proptest::collection::vec(any::<u8>(), 0..64),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let reply = Reply::Text(PdfText { title, text, pages, pages_read: pages / 2 });
        let mut wire = protocol::encode_reply(&reply);
        for (at, byte) in flips {
            let i = at.index(wire.len());
            wire[i] = byte;
        }
        wire.extend_from_slice(&tail);
        wire.truncate(cut.index(wire.len() + 1));
        let started = Instant::now();
        if let Ok(Reply::Text(doc)) = protocol::decode_reply(&wire) {
            prop_assert!(doc.text.len() <= protocol::MAX_TEXT_BYTES);
            prop_assert!(doc.pages_read <= doc.pages);
        }
        prop_assert!(started.elapsed() < Duration::from_millis(500));
    }

    /// What the worker encodes, the parent decodes unchanged.
    #[test]
    fn replies_round_trip(
        title in proptest::option::of(".{1,40}"),
        text in ".{0,400}",
        pages in 0u32..1000,
        reason in ".{0,200}",
    ) {
        let text_reply = Reply::Text(PdfText { title, text, pages, pages_read: pages });
        prop_assert_eq!(protocol::decode_reply(&protocol::encode_reply(&text_reply)), Ok(text_reply));
        let refused = Reply::Refused(reason);
        prop_assert_eq!(protocol::decode_reply(&protocol::encode_reply(&refused)), Ok(refused));
    }
}
