//! The question or query: from the arguments, or from stdin; and a piped chat's next
//! line, bounded.

use std::io::{BufRead, IsTerminal, Read};

use ground::error::Error;
use ground::pipeline::{MAX_QUESTION_CHARS, check_question_length};

/// The question or query from the arguments, or from stdin for `-` / no argument
/// when stdin is not a terminal. Stdin is read up to [`MAX_QUESTION_CHARS`] whole
/// characters (UTF-8 is at most 4 bytes each); a longer input is a usage error that
/// says so, never a silent cut.
pub fn read_input(words: &[String], what: &str) -> Result<String, Error> {
    let from_stdin = words.is_empty() && !std::io::stdin().is_terminal() || words == ["-"];
    let text = if from_stdin {
        let limit = (MAX_QUESTION_CHARS * 4 + 1) as u64;
        let mut bytes = Vec::new();
        std::io::stdin()
            .take(limit)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::Usage {
                message: format!("cannot read the {what} from stdin: {e}"),
                hint: format!("pass the {what} as an argument instead"),
            })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let cut = e.utf8_error().valid_up_to() + 4 >= e.as_bytes().len();
            if cut {
                Error::Usage {
                    message: format!(
                        "the {what} on stdin is longer than {MAX_QUESTION_CHARS} characters"
                    ),
                    hint: format!("pass a shorter {what}"),
                }
            } else {
                Error::Usage {
                    message: format!("the {what} on stdin is not UTF-8 text"),
                    hint: format!("pass the {what} as UTF-8 text"),
                }
            }
        })?;
        text.trim().to_string()
    } else {
        words.join(" ").trim().to_string()
    };
    check_question_length(&text)?;
    Ok(text)
}

/// Most bytes of one line of a piped chat: a question's most characters at four bytes
/// each, and a command with a file name fits well within it.
pub const MAX_LINE_BYTES: usize = ground::pipeline::MAX_QUESTION_CHARS * 4;

/// The next line of `input` (without its end), read up to [`MAX_LINE_BYTES`]: `None`
/// at the end, an error saying what is wrong with an over-long line (skipped to its
/// end, never held whole) or one that is not UTF-8.
pub fn read_line(input: &mut impl BufRead) -> Result<Option<String>, String> {
    let mut bytes = Vec::new();
    let read = std::io::Read::take(&mut *input, MAX_LINE_BYTES as u64 + 1)
        .read_until(b'\n', &mut bytes)
        .map_err(|e| format!("cannot be read: {e}"))?;
    if read == 0 {
        return Ok(None);
    }
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    } else if bytes.len() > MAX_LINE_BYTES {
        // Skip the rest of the line, a piece at a time.
        loop {
            let buffer = input
                .fill_buf()
                .map_err(|e| format!("cannot be read: {e}"))?;
            if buffer.is_empty() {
                break;
            }
            match buffer.iter().position(|&b| b == b'\n') {
                Some(end) => {
                    input.consume(end + 1);
                    break;
                }
                None => {
                    let all = buffer.len();
                    input.consume(all);
                }
            }
        }
        return Err(format!("is longer than {MAX_LINE_BYTES} bytes"));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| "is not UTF-8 text".to_string())
}
