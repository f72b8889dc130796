//! `--shard K/N`: which questions one of N machines answers, with no coordinator.
//!
//! A question belongs to shard `K` (counted from 0) when the 64-bit FNV-1a hash of its
//! id's string form ([`super::input::Id::key`]: a string id as is, an integer in
//! decimal digit for digit, another number as serde_json writes a float, a plain-text
//! line's number in decimal), taken as UTF-8 bytes, modulo `N` is `K`. FNV-1a is fixed by its definition (offset basis
//! 0xcbf29ce484222325, prime 0x100000001b3), so every machine, version and platform
//! puts an id in the same shard, and the N shards partition the ids exactly.

use std::str::FromStr;

/// One of `count` shards, `index` counted from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard, 0 to `count - 1`.
    pub index: u64,
    /// How many shards the input is split into.
    pub count: u64,
}

/// The 64-bit FNV-1a hash of `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Shard {
    /// Whether the question with id string form `key` is this shard's.
    pub fn holds(&self, key: &str) -> bool {
        fnv1a(key.as_bytes()) % self.count == self.index
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `K/N`, with N at least 1 and K from 0 to N-1.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wrong = || format!("`{text}` is not K/N with 0 <= K < N (e.g. 0/4)");
        let (k, n) = text.split_once('/').ok_or_else(wrong)?;
        let index: u64 = k.trim().parse().map_err(|_| wrong())?;
        let count: u64 = n.trim().parse().map_err(|_| wrong())?;
        if count == 0 || index >= count {
            return Err(wrong());
        }
        Ok(Shard { index, count })
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
    fn shards_parse_and_partition() {
        assert_eq!("1/3".parse(), Ok(Shard { index: 1, count: 3 }));
        assert!("3/3".parse::<Shard>().is_err());
        assert!("0/0".parse::<Shard>().is_err());
        let shards: Vec<Shard> = (0..3).map(|k| Shard { index: k, count: 3 }).collect();
        for id in 0..200 {
            let key = id.to_string();
            assert_eq!(shards.iter().filter(|s| s.holds(&key)).count(), 1);
        }
    }
}
