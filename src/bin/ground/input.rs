//! The question or query: from the arguments, or from stdin.

use std::io::{IsTerminal, Read};

use ground::error::Error;

/// The question or query from the arguments, or from stdin for `-` / no argument
/// when stdin is not a terminal. At most 64 KiB is read.
pub fn read_input(words: &[String], what: &str) -> Result<String, Error> {
    let from_stdin = words.is_empty() && !std::io::stdin().is_terminal() || words == ["-"];
    if from_stdin {
        let mut text = String::new();
        std::io::stdin()
            .take(64 * 1024)
            .read_to_string(&mut text)
            .map_err(|e| Error::Usage {
                message: format!("cannot read the {what} from stdin: {e}"),
                hint: format!("pass the {what} as an argument instead"),
            })?;
        return Ok(text.trim().to_string());
    }
    Ok(words.join(" ").trim().to_string())
}
