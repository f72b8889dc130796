//! `ground cache stats|clear`: what the on-disk cache holds, and emptying it.
//!
//! Both actions work whatever the cache mode (`--no-cache` included): they look at
//! the configured folder, never create it, and delete only the cache's own entries.

use std::process::ExitCode;

use serde_json::json;

use ground::cache::Cache;
use ground::error::{exit, report};
use ground::render::cache;
use ground::settings::CacheSettings;

use crate::cli::{self, CacheAction, CacheArgs};
use crate::output::{code, fail};
use crate::runtime::settings;

/// Runs `ground cache`.
pub fn run(args: CacheArgs) -> ExitCode {
    let overrides = cli::overrides(&args.config, None, None, None, None);
    match settings(&overrides) {
        Ok(s) => act(&s.cache, args.action, args.json),
        Err(e) => fail(args.json, "cache", "", &e),
    }
}

/// Runs one action and returns the exit code: 0, or 2 when `clear` fails (no folder
/// configured, or a file that cannot be removed).
fn act(settings: &CacheSettings, action: CacheAction, json: bool) -> ExitCode {
    let cache = Cache::inspect(settings);
    match action {
        CacheAction::Stats => {
            let stats = cache.stats();
            if json {
                println!("{}", json!({ "action": "stats", "stats": stats }));
            } else {
                print!("{}", cache::describe(&stats));
            }
            ExitCode::SUCCESS
        }
        CacheAction::Clear => match cache.clear() {
            Ok(cleared) => {
                let dir = cache::display_dir(&settings.dir);
                if json {
                    println!(
                        "{}",
                        json!({ "action": "clear", "dir": settings.dir, "cleared": cleared })
                    );
                } else {
                    println!(
                        "Removed {} entries ({}) from {dir}.",
                        cleared.entries,
                        cache::human_bytes(cleared.bytes)
                    );
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                let message = format!("cannot clear the cache: {e}");
                let hint = if settings.dir.is_none() {
                    "set GROUND_CACHE_DIR, or [cache] dir in the config file"
                } else {
                    "check the folder's permissions, or delete it by hand"
                };
                if json {
                    println!(
                        "{}",
                        json!({ "action": "clear", "error": { "message": message, "hint": hint } })
                    );
                }
                eprintln!("{}", report(&message, Some(hint)));
                code(exit::USAGE)
            }
        },
    }
}
