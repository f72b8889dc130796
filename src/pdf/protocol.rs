//! The PDF worker's wire format: what the parent writes to the worker's stdin and
//! what the worker writes back on its stdout.
//!
//! The worker is the `ground` binary itself (`ground pdf-worker`), but not
//! necessarily the same build as its parent (`GROUND_PDF_WORKER` may name another
//! one), and the parent must assume the worker has been taken over by the PDF it
//! reads. So the format is small, binary, versioned and bounded, and the parent's
//! decoder ([`decode_reply`]) is written for hostile input: every length is checked
//! against its cap before anything is allocated, strings must be UTF-8, and any
//! byte left over is an error. It never panics and runs in time linear in its input.
//!
//! ```text
//! request = "GRNDPDFQ" version:u8 length:u64le pdf:[u8; length]   (length <= MAX_PDF_BYTES)
//! reply   = "GRNDPDFA" version:u8 tag:u8 body
//!   tag 0 (text):    pages:u32le pages_read:u32le title:str(MAX_TITLE_BYTES) text:str(MAX_TEXT_BYTES)
//!   tag 1 (refused): reason:str(MAX_REASON_BYTES)
//! str(max) = length:u32le utf8:[u8; length]   (length <= max)
//! ```
//! An empty title means the PDF has none.

use std::io::Read;

use super::{MAX_PDF_BYTES, PdfText};

/// Version of this format; both magics are followed by it.
pub const VERSION: u8 = 1;

/// Start of a request.
pub const REQUEST_MAGIC: &[u8; 8] = b"GRNDPDFQ";

/// Start of a reply.
pub const REPLY_MAGIC: &[u8; 8] = b"GRNDPDFA";

/// Longest title sent back, in bytes.
pub const MAX_TITLE_BYTES: usize = 1024;

/// Longest text sent back, in bytes (a PDF's text beyond it is cut by the worker).
pub const MAX_TEXT_BYTES: usize = 4 * 1024 * 1024;

/// Longest refusal reason sent back, in bytes.
pub const MAX_REASON_BYTES: usize = 1024;

/// Longest reply the parent reads: a text reply with everything at its cap.
pub const MAX_REPLY_BYTES: usize =
    REPLY_MAGIC.len() + 2 + 4 + 4 + 4 + MAX_TITLE_BYTES + 4 + MAX_TEXT_BYTES;

/// What the worker answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The PDF was read.
    Text(PdfText),
    /// The PDF was not read; the reason is for the page's `error`.
    Refused(String),
}

/// Why a request or a reply is not in this format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("it does not start with the worker protocol's magic bytes")]
    BadMagic,
    #[error("it is version {0} of the worker protocol, this is version {VERSION}")]
    Version(u8),
    #[error("unknown reply kind {0}")]
    UnknownTag(u8),
    #[error("it ends too early")]
    Truncated,
    #[error("its {field} is {len} bytes, more than the {max} allowed")]
    TooLong {
        field: &'static str,
        len: u64,
        max: usize,
    },
    #[error("its {0} is not UTF-8")]
    NotUtf8(&'static str),
    #[error("{0} bytes follow the end of the reply")]
    Trailing(usize),
    #[error("pages read ({read}) exceed the pages ({pages})")]
    Pages { pages: u32, read: u32 },
    #[error("reading it failed: {0}")]
    Io(String),
}

/// The header the parent writes before a PDF of `len` bytes.
pub fn request_header(len: usize) -> Vec<u8> {
    let mut header = REQUEST_MAGIC.to_vec();
    header.push(VERSION);
    header.extend_from_slice(&(len as u64).to_le_bytes());
    header
}

/// Reads a request from `input` (the worker's stdin): the PDF's bytes, at most
/// [`MAX_PDF_BYTES`], allocated once the header has said how many.
pub fn read_request(mut input: impl Read) -> Result<Vec<u8>, ProtocolError> {
    let mut header = [0u8; 17];
    read_exact(&mut input, &mut header)?;
    if &header[..8] != REQUEST_MAGIC {
        return Err(ProtocolError::BadMagic);
    }
    if header[8] != VERSION {
        return Err(ProtocolError::Version(header[8]));
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&header[9..17]);
    let len = u64::from_le_bytes(len);
    if len > MAX_PDF_BYTES as u64 {
        return Err(ProtocolError::TooLong {
            field: "PDF",
            len,
            max: MAX_PDF_BYTES,
        });
    }
    let mut pdf = vec![0u8; len as usize];
    read_exact(&mut input, &mut pdf)?;
    Ok(pdf)
}

fn read_exact(input: &mut impl Read, buf: &mut [u8]) -> Result<(), ProtocolError> {
    input.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => ProtocolError::Truncated,
        _ => ProtocolError::Io(e.to_string()),
    })
}

/// A reply as bytes. Strings over their caps are cut at a character boundary, so
/// the reply always decodes.
pub fn encode_reply(reply: &Reply) -> Vec<u8> {
    let mut out = REPLY_MAGIC.to_vec();
    out.push(VERSION);
    match reply {
        Reply::Text(doc) => {
            out.push(0);
            out.extend_from_slice(&doc.pages.to_le_bytes());
            out.extend_from_slice(&doc.pages_read.min(doc.pages).to_le_bytes());
            put_str(
                &mut out,
                doc.title.as_deref().unwrap_or(""),
                MAX_TITLE_BYTES,
            );
            put_str(&mut out, &doc.text, MAX_TEXT_BYTES);
        }
        Reply::Refused(reason) => {
            out.push(1);
            put_str(&mut out, reason, MAX_REASON_BYTES);
        }
    }
    out
}

fn put_str(out: &mut Vec<u8>, s: &str, max: usize) {
    let s = crate::text::cut_bytes(s, max);
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// Decodes a reply (the worker's whole stdout). Any input is an `Ok` reply or a
/// [`ProtocolError`]; nothing larger than the caps is allocated.
pub fn decode_reply(bytes: &[u8]) -> Result<Reply, ProtocolError> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(REPLY_MAGIC.len())
        .map_err(|_| ProtocolError::BadMagic)?
        != REPLY_MAGIC
    {
        return Err(ProtocolError::BadMagic);
    }
    let version = r.u8()?;
    if version != VERSION {
        return Err(ProtocolError::Version(version));
    }
    let reply = match r.u8()? {
        0 => {
            let pages = r.u32()?;
            let pages_read = r.u32()?;
            if pages_read > pages {
                return Err(ProtocolError::Pages {
                    pages,
                    read: pages_read,
                });
            }
            let title = r.str("title", MAX_TITLE_BYTES)?;
            let text = r.str("text", MAX_TEXT_BYTES)?;
            Reply::Text(PdfText {
                title: (!title.is_empty()).then_some(title),
                text,
                pages,
                pages_read,
            })
        }
        1 => Reply::Refused(r.str("reason", MAX_REASON_BYTES)?),
        tag => return Err(ProtocolError::UnknownTag(tag)),
    };
    match bytes.len() - r.at {
        0 => Ok(reply),
        n => Err(ProtocolError::Trailing(n)),
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ProtocolError> {
        let end = self.at.checked_add(n).ok_or(ProtocolError::Truncated)?;
        let taken = self
            .bytes
            .get(self.at..end)
            .ok_or(ProtocolError::Truncated)?;
        self.at = end;
        Ok(taken)
    }

    fn u8(&mut self) -> Result<u8, ProtocolError> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, ProtocolError> {
        let mut b = [0u8; 4];
        b.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(b))
    }

    fn str(&mut self, field: &'static str, max: usize) -> Result<String, ProtocolError> {
        let len = self.u32()?;
        if len as usize > max {
            return Err(ProtocolError::TooLong {
                field,
                len: u64::from(len),
                max,
            });
        }
        let raw = self.take(len as usize)?;
        std::str::from_utf8(raw)
            .map(str::to_owned)
            .map_err(|_| ProtocolError::NotUtf8(field))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(title: Option<&str>, text: &str) -> Reply {
        Reply::Text(PdfText {
            title: title.map(str::to_owned),
            text: text.into(),
            pages: 3,
            pages_read: 2,
        })
    }

    #[test]
    fn replies_round_trip() {
        for reply in [
            text(Some("Größe"), "Kraków\n\nÅngström"),
            text(None, ""),
            Reply::Refused("the PDF was refused: reasons".into()),
        ] {
            assert_eq!(decode_reply(&encode_reply(&reply)), Ok(reply));
        }
    }

    #[test]
    fn requests_round_trip_and_are_bounded() {
        let mut wire = request_header(5);
        wire.extend_from_slice(b"%PDF-");
        assert_eq!(read_request(&wire[..]).unwrap(), b"%PDF-");
        assert_eq!(read_request(&wire[..20]), Err(ProtocolError::Truncated));
        let huge = request_header(MAX_PDF_BYTES + 1);
        assert!(matches!(
            read_request(&huge[..]),
            Err(ProtocolError::TooLong { field: "PDF", .. })
        ));
        assert_eq!(
            read_request(&b"GRNDPDFA"[..]),
            Err(ProtocolError::Truncated)
        );
    }

    #[test]
    fn strings_over_their_caps_are_cut_at_a_character() {
        let long = "é".repeat(MAX_TITLE_BYTES);
        let Ok(Reply::Text(doc)) = decode_reply(&encode_reply(&text(Some(&long), "x"))) else {
            panic!("decodes");
        };
        let title = doc.title.unwrap();
        assert_eq!(title.len(), MAX_TITLE_BYTES);
        assert!(long.starts_with(&title));
    }

    #[test]
    fn what_is_not_a_reply_is_said_so() {
        assert_eq!(decode_reply(b""), Err(ProtocolError::BadMagic));
        assert_eq!(
            decode_reply(b"running 0 tests\n"),
            Err(ProtocolError::BadMagic)
        );
        let mut wire = encode_reply(&Reply::Refused("no".into()));
        wire[8] = 2;
        assert_eq!(decode_reply(&wire), Err(ProtocolError::Version(2)));
        let mut wire = encode_reply(&Reply::Refused("no".into()));
        wire.push(0);
        assert_eq!(decode_reply(&wire), Err(ProtocolError::Trailing(1)));
        let mut wire = REPLY_MAGIC.to_vec();
        wire.extend_from_slice(&[VERSION, 1]);
        wire.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            decode_reply(&wire),
            Err(ProtocolError::TooLong {
                field: "reason",
                ..
            })
        ));
    }
}
