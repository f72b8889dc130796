//! A stream's filter chain, decoded the way lopdf decodes it but never past a cap.
//!
//! lopdf (which `pdf-extract` reads with) inflates a stream whole, with no limit, and
//! is generous with broken data: a FlateDecode stream whose zlib header is wrong is
//! tried again as raw deflate, an undecodable chain falls back to the raw bytes.
//! A pre-scan that decoded streams any other way would measure a different file from
//! the one the parser reads, and that is how a `[/ASCII85Decode /FlateDecode]` chain
//! and a corrupt zlib header got past the old cap. So this module follows lopdf's
//! rules filter by filter (FlateDecode with its raw-deflate retry, LZWDecode,
//! ASCII85Decode; any other filter means "the raw bytes are used") and stops as soon
//! as the bytes produced pass the limit. Every stage's output counts, because every
//! stage's output is allocated by the parser.

use std::io::{Read, Write};

use pdf_extract::{Object, Stream};

/// Decoding would pass the limit: the stream inflates to more than it allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverLimit;

/// A decoded stream: the bytes the parser will see, and what producing them costs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The data after the chain (or the raw bytes, where lopdf falls back to them);
    /// empty when only the cost was asked for.
    pub data: Vec<u8>,
    /// Bytes the parser allocates to decode the stream: every stage's output.
    pub cost: usize,
    /// Length of the final data (also when `data` was not kept).
    pub len: usize,
}

/// Decodes `stream` as lopdf would, with at most `limit` bytes produced over all
/// stages. With `keep` false only the sizes are measured and nothing large is held.
pub fn decode(stream: &Stream, limit: usize, keep: bool) -> Result<Decoded, OverLimit> {
    let raw = &stream.content;
    let filters = filter_names(stream);
    let Some(filters) = filters.filter(|f| !f.is_empty()) else {
        return raw_bytes(raw, keep);
    };
    if filters.iter().any(|f| {
        !matches!(
            f.as_slice(),
            b"FlateDecode" | b"LZWDecode" | b"ASCII85Decode"
        )
    }) {
        // lopdf stops with "unimplemented" at the first filter it does not know
        // (images, crypt filters) and the parser uses the raw bytes instead; the
        // stages before it were never run either.
        return raw_bytes(raw, keep);
    }
    let mut cost = 0usize;
    let mut len = 0usize;
    let mut input: Vec<u8> = Vec::new();
    let mut first = true;
    let last = filters.len() - 1;
    for (i, filter) in filters.iter().enumerate() {
        let source: &[u8] = if first { raw } else { &input };
        let left = limit.saturating_sub(cost);
        let keep_this = keep || i < last;
        let stage = match filter.as_slice() {
            b"FlateDecode" => flate(source, left, keep_this)?,
            b"LZWDecode" => lzw(source, stream, left, keep_this)?,
            _ => match ascii85(source, left)? {
                Some(out) => (out.len(), out),
                // lopdf fails the whole chain on a malformed ASCII85 group: raw bytes.
                None => return raw_bytes(raw, keep).map(|d| d.plus(cost)),
            },
        };
        cost = cost.saturating_add(stage.0);
        len = stage.0;
        if cost > limit {
            return Err(OverLimit);
        }
        input = stage.1;
        first = false;
    }
    Ok(Decoded {
        data: if keep { input } else { Vec::new() },
        cost,
        len,
    })
}

impl Decoded {
    fn plus(mut self, cost: usize) -> Self {
        self.cost = self.cost.saturating_add(cost);
        self
    }
}

fn raw_bytes(raw: &[u8], keep: bool) -> Result<Decoded, OverLimit> {
    Ok(Decoded {
        data: if keep { raw.to_vec() } else { Vec::new() },
        cost: 0,
        len: raw.len(),
    })
}

/// The stream's `/Filter` as a list of names (a name, or an array of names; lopdf
/// reads both), or `None` when it has none or it is neither.
fn filter_names(stream: &Stream) -> Option<Vec<Vec<u8>>> {
    match stream.dict.get(b"Filter").ok()? {
        Object::Name(name) => Some(vec![name.clone()]),
        Object::Array(items) => Some(
            items
                .iter()
                .filter_map(|item| item.as_name().ok().map(<[u8]>::to_vec))
                .collect(),
        ),
        _ => None,
    }
}

/// A writer that holds (or only counts) at most `limit` bytes and fails past it.
struct Capped {
    data: Vec<u8>,
    written: usize,
    limit: usize,
    keep: bool,
}

impl Capped {
    fn new(limit: usize, keep: bool) -> Self {
        Capped {
            data: Vec::new(),
            written: 0,
            limit,
            keep,
        }
    }

    fn over(&self) -> bool {
        self.written > self.limit
    }
}

impl Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = self.limit.saturating_sub(self.written) + 1;
        let take = buf.len().min(room);
        self.written = self.written.saturating_add(take);
        if self.keep {
            self.data.extend_from_slice(&buf[..take]);
        }
        if self.written > self.limit {
            return Err(std::io::Error::other("over the limit"));
        }
        Ok(take)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// FlateDecode as lopdf does it: zlib; if that fails having produced nothing, raw
/// deflate from the third byte on (the "corrupt zlib header" fallback). What was
/// produced before an error is kept, as lopdf keeps it.
fn flate(input: &[u8], limit: usize, keep: bool) -> Result<(usize, Vec<u8>), OverLimit> {
    if input.is_empty() {
        return Ok((0, Vec::new()));
    }
    let mut out = Capped::new(limit, keep);
    let zlib = copy_capped(flate2::read::ZlibDecoder::new(input), &mut out);
    if out.over() {
        return Err(OverLimit);
    }
    if zlib.is_err() && out.written == 0 && input.len() > 2 {
        let _ = copy_capped(flate2::read::DeflateDecoder::new(&input[2..]), &mut out);
        if out.over() {
            return Err(OverLimit);
        }
    }
    Ok((out.written, out.data))
}

/// Copies `reader` into `out` in pieces, stopping at the first error (a read error
/// is the data's end for lopdf; a write error is the cap).
fn copy_capped(mut reader: impl Read, out: &mut Capped) -> std::io::Result<()> {
    let mut buf = [0u8; 32 * 1024];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        out.write_all(&buf[..n])?;
    }
}

/// LZWDecode as lopdf does it (weezl, MSB first, `/EarlyChange` 1 unless set to 0),
/// keeping what was decoded before an error.
fn lzw(
    input: &[u8],
    stream: &Stream,
    limit: usize,
    keep: bool,
) -> Result<(usize, Vec<u8>), OverLimit> {
    use weezl::{BitOrder, decode::Decoder};
    let early_change = stream
        .dict
        .get(b"DecodeParms")
        .and_then(Object::as_dict)
        .and_then(|p| p.get(b"EarlyChange"))
        .and_then(Object::as_i64)
        .map(|v| v != 0)
        .unwrap_or(true);
    let mut decoder = if early_change {
        Decoder::with_tiff_size_switch(BitOrder::Msb, 8)
    } else {
        Decoder::new(BitOrder::Msb, 8)
    };
    let mut out = Capped::new(limit, keep);
    let _ = decoder.into_stream(&mut out).decode_all(input);
    if out.over() {
        return Err(OverLimit);
    }
    Ok((out.written, out.data))
}

/// ASCII85Decode with lopdf's rules: `~>` ends the data, whitespace is skipped, `z`
/// is four zero bytes, the first byte outside `!`..`u` stops decoding. `Ok(None)` is
/// a group lopdf rejects (a `z` inside a group, an overflowing group).
fn ascii85(input: &[u8], limit: usize) -> Result<Option<Vec<u8>>, OverLimit> {
    let input = input.strip_suffix(b"~>").unwrap_or(input);
    let mut out = Vec::new();
    let mut group: u32 = 0;
    let mut count = 0usize;
    for &ch in input {
        if out.len() > limit {
            return Err(OverLimit);
        }
        if ch == b'z' {
            if count != 0 {
                return Ok(None);
            }
            out.extend_from_slice(&[0, 0, 0, 0]);
            continue;
        }
        if ch.is_ascii_whitespace() {
            continue;
        }
        if !(b'!'..=b'u').contains(&ch) {
            break;
        }
        let Some(next) = group
            .checked_mul(85)
            .and_then(|g| g.checked_add(u32::from(ch - b'!')))
        else {
            return Ok(None);
        };
        group = next;
        count += 1;
        if count == 5 {
            out.extend_from_slice(&group.to_be_bytes());
            group = 0;
            count = 0;
        }
    }
    if count > 0 {
        for _ in count..5 {
            let Some(next) = group.checked_mul(85).and_then(|g| g.checked_add(84)) else {
                return Ok(None);
            };
            group = next;
        }
        out.extend_from_slice(&group.to_be_bytes()[..count - 1]);
    }
    if out.len() > limit {
        return Err(OverLimit);
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pdf_extract::Dictionary;

    fn stream(filter: Object, content: Vec<u8>) -> Stream {
        let mut dict = Dictionary::new();
        dict.set("Filter", filter);
        Stream::new(dict, content)
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn a85(data: &[u8]) -> Vec<u8> {
        // Encoder for the tests only (no `z` shorthand, which decoders must accept
        // but need not produce).
        let mut out = Vec::new();
        for chunk in data.chunks(4) {
            let mut buf = [0u8; 4];
            buf[..chunk.len()].copy_from_slice(chunk);
            let mut n = u32::from_be_bytes(buf);
            let mut digits = [0u8; 5];
            for d in digits.iter_mut().rev() {
                *d = (n % 85) as u8 + b'!';
                n /= 85;
            }
            out.extend_from_slice(&digits[..chunk.len() + 1]);
        }
        out.extend_from_slice(b"~>");
        out
    }

    #[test]
    fn each_filter_decodes_like_lopdf() {
        let text = b"BT /F1 12 Tf (Hello) Tj ET".to_vec();
        let cases = [
            stream(Object::Name(b"FlateDecode".to_vec()), zlib(&text)),
            stream(
                Object::Array(vec![
                    Object::Name(b"ASCII85Decode".to_vec()),
                    Object::Name(b"FlateDecode".to_vec()),
                ]),
                a85(&zlib(&text)),
            ),
        ];
        for s in &cases {
            let ours = decode(s, 1 << 20, true).unwrap();
            assert_eq!(ours.data, text);
            assert_eq!(ours.data, s.decompressed_content().unwrap());
        }
    }

    #[test]
    fn a_chain_or_a_corrupt_header_cannot_pass_the_limit() {
        let spaces = vec![b' '; 4 << 20];
        let chained = stream(
            Object::Array(vec![
                Object::Name(b"ASCII85Decode".to_vec()),
                Object::Name(b"FlateDecode".to_vec()),
            ]),
            a85(&zlib(&spaces)),
        );
        assert_eq!(decode(&chained, 1 << 20, false), Err(OverLimit));
        assert_eq!(decode(&chained, 8 << 20, false).unwrap().len, 4 << 20);
        let mut corrupt = zlib(&spaces);
        corrupt[0] = 0;
        corrupt[1] = 0;
        let corrupt = stream(Object::Name(b"FlateDecode".to_vec()), corrupt);
        // lopdf reads it, through its raw-deflate retry ...
        assert_eq!(corrupt.decompressed_content().unwrap().len(), 4 << 20);
        // ... and so does the cap.
        assert_eq!(decode(&corrupt, 1 << 20, false), Err(OverLimit));
        assert_eq!(decode(&corrupt, 8 << 20, true).unwrap().data.len(), 4 << 20);
    }

    #[test]
    fn unknown_filters_and_plain_streams_are_their_raw_bytes() {
        let jpeg = stream(Object::Name(b"DCTDecode".to_vec()), vec![0xFF; 100]);
        assert_eq!(decode(&jpeg, 10, true).unwrap().len, 100);
        let plain = Stream::new(Dictionary::new(), b"q Q".to_vec());
        assert_eq!(decode(&plain, 0, true).unwrap().data, b"q Q");
    }

    #[test]
    fn ascii85_follows_lopdf_on_odd_input() {
        assert_eq!(ascii85(b"z~>", 10).unwrap(), Some(vec![0; 4]));
        assert_eq!(ascii85(b"!z", 10).unwrap(), None);
        assert_eq!(ascii85(b"zzzz", 8), Err(OverLimit));
        assert_eq!(ascii85(b"uuuuu", 10).unwrap(), None);
    }
}
