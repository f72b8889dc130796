//! `ground check`: claims (arguments or each sentence of `--file`) or another AI
//! tool's cited answer (`--cited`), checked against the web through the service's
//! check ([`Service::check_here`], MCP's `check_claims` too). Exit 0 when every claim
//! is supported, 6 (not grounded) when any is not.

use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

use ground::claims::{ClaimsError, MAX_INPUT_BYTES};
use ground::error::{Error, exit};
use ground::render::Style;
use ground::service::check::usage;
use ground::service::{CheckInput, Service};

use crate::cli::{self, CheckArgs};
use crate::output::{code, colour_stdout, fail, print_json};
use crate::runtime::{block_on, settings};

/// Pages read for each claim unless `--pages` says otherwise.
const DEFAULT_PAGES: usize = 3;

/// Runs `ground check`.
pub fn run(args: CheckArgs) -> ExitCode {
    let what = args.claims.join(" ");
    let input = match input(&args) {
        Ok(input) => input,
        Err(e) => return fail(args.json, "claims", &what, &e),
    };
    let mut overrides = cli::overrides(
        &args.config,
        Some(&args.search),
        Some(&args.fetch),
        None,
        Some(args.pages.map_or(DEFAULT_PAGES, usize::from)),
    );
    overrides.timeout_secs = args.timeout;
    let settings = match settings(&overrides) {
        Ok(s) => s,
        Err(e) => return fail(args.json, "claims", &what, &e),
    };
    let service = Service::unbounded(settings);
    let checked = match block_on(service.check_here(input)) {
        Ok(checked) => checked,
        Err(e) => return fail(args.json, "claims", &what, &e),
    };
    for warning in &checked.warnings {
        eprintln!("{}", ground::error::warning(warning));
    }
    let _ = if args.json {
        print_json(&ground::render::check::json(&checked))
    } else {
        let style = Style::Text {
            colour: colour_stdout(),
        };
        write!(
            std::io::stdout().lock(),
            "{}",
            ground::render::check::person(&checked, style)
        )
    };
    if checked.all_supported() {
        ExitCode::SUCCESS
    } else {
        code(exit::NOT_GROUNDED)
    }
}

/// What to check, from exactly one of: the arguments, `--file`, `--cited`.
fn input(args: &CheckArgs) -> Result<CheckInput, Error> {
    let given = usize::from(!args.claims.is_empty())
        + usize::from(args.file.is_some())
        + usize::from(args.cited.is_some());
    if given != 1 {
        return Err(Error::Usage {
            message: if given == 0 {
                "nothing to check".into()
            } else {
                "give claims as arguments, or --file, or --cited, not several".into()
            },
            hint: "ground check \"CLAIM\", ground check --file FILE, or ground check --cited ANSWER.txt"
                .into(),
        });
    }
    if let Some(path) = &args.file {
        let text = read_bounded(path)?;
        let claims = ground::claims::of_text(&text).map_err(usage)?;
        return Ok(CheckInput::Claims(claims));
    }
    if let Some(path) = &args.cited {
        return Ok(CheckInput::Cited {
            text: read_bounded(path)?,
            search: args.also_search,
        });
    }
    Ok(CheckInput::Claims(args.claims.clone()))
}

/// The text of `path` (`-`: stdin), read up to [`MAX_INPUT_BYTES`]: a longer one is
/// refused without being read whole.
fn read_bounded(path: &Path) -> Result<String, Error> {
    let mut bytes = Vec::new();
    let limit = MAX_INPUT_BYTES as u64 + 1;
    let read = if path == Path::new("-") {
        std::io::stdin().take(limit).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(limit).read_to_end(&mut bytes))
    };
    read.map_err(|e| Error::ReadFile {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(usage(ClaimsError::TooLarge { bytes: bytes.len() }));
    }
    String::from_utf8(bytes).map_err(|_| Error::Usage {
        message: format!("{} is not UTF-8 text", path.display()),
        hint: "save the text as UTF-8 and check it again".into(),
    })
}
