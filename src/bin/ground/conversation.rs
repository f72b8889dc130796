//! Conversations on disk: the session a run continues (`--session NAME`,
//! `--continue`, each `ground chat`) is kept in the state folder
//! ([`ground::session`]), opened before a run and saved after each turn.

use std::path::PathBuf;

use ground::error::Error;
use ground::report::Report;
use ground::session::{self, Hold, Session};

use crate::runtime::block_on;
use ground::settings::Settings;

/// The state folder, which sessions need.
pub fn state_dir(settings: &Settings) -> Result<&PathBuf, Error> {
    settings
        .search
        .state_dir
        .as_ref()
        .ok_or_else(|| Error::Session {
            message: "there is no state folder to keep the conversation in".into(),
            hint: "set GROUND_STATE_DIR (or XDG_STATE_HOME, or HOME)".into(),
        })
}

/// Session `name` (started when new), held for this run: its lock is taken first,
/// waiting for another run that holds it within the run's `--timeout`, then the
/// file is read.
pub fn held(settings: &Settings, name: &str) -> Result<(Session, Hold), Error> {
    let dir = state_dir(settings)?;
    let hold = block_on(session::hold(dir, name, settings.run.timeout))?;
    Ok((Session::open(dir, name)?, hold))
}

/// The session a run continues, held until the run has saved it (see [`held`]):
/// `name`'s (started when new), the most recent one with `continue_session`, or none.
pub fn open_session(
    settings: &Settings,
    name: Option<&str>,
    continue_session: bool,
) -> Result<Option<(Session, Hold)>, Error> {
    if let Some(name) = name {
        session::check_name(name)?;
        return held(settings, name).map(Some);
    }
    if !continue_session {
        return Ok(None);
    }
    let dir = state_dir(settings)?;
    let Some(name) = Session::most_recent(dir) else {
        return Err(Error::Session {
            message: format!(
                "there is no conversation to continue in {}",
                session::folder(dir).display()
            ),
            hint: "start one with `ground answer --session NAME \"...\"` or `ground chat`".into(),
        });
    };
    held(settings, &name).map(Some)
}

/// Adds the turn `report` answered to `session` and saves it; a session that cannot
/// be saved is said on stderr (the answer stands).
pub fn save_turn(session: &mut Session, report: &Report, settings: &Settings) {
    session.record(report);
    // The answer is printed whatever happens here; a turn that could not be kept is
    // said with its hint, even with -q (errors are never silenced).
    if let Err(e) = state_dir(settings).and_then(|dir| session.save(dir)) {
        eprintln!("{}", e.report());
    }
}
