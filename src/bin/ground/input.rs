//! The question or query: from the arguments, or from stdin.

use std::io::{IsTerminal, Read};

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
