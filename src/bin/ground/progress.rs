//! A model download's progress on stderr: a bar with bytes, rate and time left on a
//! terminal, one line per 10 % otherwise (logs stay short), nothing with `-q`.

use std::io::IsTerminal;

use ground::llm::embedded::models::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Draws one download's progress.
pub struct DownloadProgress {
    name: String,
    bar: Option<ProgressBar>,
    quiet: bool,
    /// The last tenth reported as a line.
    tenth: Option<u64>,
}

impl DownloadProgress {
    /// Progress for downloading `name`; silent when `quiet`.
    pub fn new(name: &str, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(
                "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            bar.set_style(style);
            bar.set_message(format!("downloading {name}"));
            bar
        });
        Self {
            name: name.to_string(),
            bar,
            quiet,
            tenth: None,
        }
    }

    /// Hears one progress report.
    pub fn update(&mut self, progress: Progress) {
        if let Some(bar) = &self.bar {
            if let Some(total) = progress.total {
                bar.set_length(total);
            }
            bar.set_position(progress.done);
            return;
        }
        if self.quiet {
            return;
        }
        let Some(total) = progress.total.filter(|t| *t > 0) else {
            return;
        };
        let tenth = progress.done.saturating_mul(10) / total;
        if self.tenth != Some(tenth) {
            if self.tenth.is_none() && progress.resumed_from > 0 {
                eprintln!(
                    "ground: resuming the download of {} at {} MB",
                    self.name,
                    progress.resumed_from / 1_000_000
                );
            }
            self.tenth = Some(tenth);
            eprintln!(
                "ground: downloading {}: {}% ({} of {} MB)",
                self.name,
                tenth * 10,
                progress.done / 1_000_000,
                total / 1_000_000
            );
        }
    }

    /// Ends the bar (it stays on screen when the download finished).
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}
