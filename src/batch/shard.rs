//! Which questions one of N machines answers, with no coordinator: `--shard K/N`
//! (K counted from 1, as `split -n l/K/N`, Jest and Playwright count) or
//! `--shard-index I --shard-count N` (I counted from 0, as a Kubernetes Indexed Job's
//! `JOB_COMPLETION_INDEX` and most CI matrices give it). `--shard K/N` is index K-1.
//!
//! A question belongs to index `I` when the 64-bit FNV-1a hash of its id's string form
//! ([`super::input::Id::key`]: a string id as is, an integer in decimal digit for
//! digit, another number as serde_json writes a float, a plain-text line's number in
//! decimal), taken as UTF-8 bytes, modulo `N` is `I`. FNV-1a is fixed by its
//! definition (offset basis 0xcbf29ce484222325, prime 0x100000001b3), so every
//! machine, version and platform puts an id in the same shard, and the N shards
//! partition the ids exactly.

use std::str::FromStr;

/// One of `count` shards, `index` counted from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard, 0 to `count - 1`.
    pub index: u64,
    /// How many shards the input is split into.
    pub count: u64,
}

/// A shard that cannot be: the message names the accepted forms, so a person who
/// counted from the other end sees which flag they meant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ShardError(String);

/// The 64-bit FNV-1a hash of `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Shard {
    /// Shard `index` (from 0) of `count`: `--shard-index` / `--shard-count`.
    pub fn from_index(index: u64, count: u64) -> Result<Self, ShardError> {
        if count == 0 {
            return Err(ShardError(
                "--shard-count must be at least 1 (the number of machines)".into(),
            ));
        }
        if index >= count {
            return Err(ShardError(format!(
                "--shard-index {index} is out of range for --shard-count {count}: the index counts from 0 to {} (for K from 1 to N, use --shard K/N)",
                count - 1
            )));
        }
        Ok(Shard { index, count })
    }

    /// Whether the question with id string form `key` is this shard's.
    pub fn holds(&self, key: &str) -> bool {
        fnv1a(key.as_bytes()) % self.count == self.index
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    /// `K/N`, with N at least 1 and K from 1 to N (shard index K-1).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wrong = || {
            ShardError(format!(
                "`{text}` is not K/N with K from 1 to N (e.g. 1/4 is the first of 4); for an index counted from 0 use --shard-index I --shard-count N"
            ))
        };
        let (k, n) = text.split_once('/').ok_or_else(wrong)?;
        let k: u64 = k.trim().parse().map_err(|_| wrong())?;
        let count: u64 = n.trim().parse().map_err(|_| wrong())?;
        if k == 0 && count > 0 {
            return Err(ShardError(format!(
                "--shard counts K from 1 to N: `{text}` would be shard 0; the first of {count} is --shard 1/{count} (or --shard-index 0 --shard-count {count}, which counts from 0)"
            )));
        }
        if count == 0 || k > count {
            return Err(wrong());
        }
        Ok(Shard {
            index: k - 1,
            count,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_its_published_values() {
        // From the FNV reference test vectors.
        assert_eq!(fnv1a(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn k_of_n_counts_from_one_and_is_index_k_minus_one() {
        assert_eq!("1/3".parse(), Ok(Shard { index: 0, count: 3 }));
        assert_eq!("3/3".parse(), Ok(Shard { index: 2, count: 3 }));
        assert_eq!(" 2 / 2 ".parse(), Ok(Shard { index: 1, count: 2 }));
        for k in 1..=5 {
            assert_eq!(
                format!("{k}/5").parse::<Shard>(),
                Shard::from_index(k - 1, 5)
            );
        }
    }

    #[test]
    fn shard_zero_is_refused_naming_both_forms() {
        let message = "0/2".parse::<Shard>().unwrap_err().to_string();
        assert!(message.contains("--shard 1/2"), "{message}");
        assert!(
            message.contains("--shard-index 0 --shard-count 2"),
            "{message}"
        );
        for bad in ["4/3", "0/0", "1/0", "1", "a/2", "1/b", "-1/2", ""] {
            let message = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(message.contains("--shard-index"), "{bad}: {message}");
        }
    }

    #[test]
    fn the_index_form_is_checked() {
        assert_eq!(Shard::from_index(0, 1), Ok(Shard { index: 0, count: 1 }));
        let message = Shard::from_index(2, 2).unwrap_err().to_string();
        assert!(
            message.contains("0 to 1") && message.contains("--shard K/N"),
            "{message}"
        );
        assert!(Shard::from_index(0, 0).is_err());
    }

    #[test]
    fn shards_partition_the_ids() {
        let shards: Vec<Shard> = (1..=3).map(|k| format!("{k}/3").parse().unwrap()).collect();
        for id in 0..200 {
            let key = id.to_string();
            assert_eq!(shards.iter().filter(|s| s.holds(&key)).count(), 1);
        }
    }
}
