//! `ground chat`: a conversation in the terminal, each turn answered like `ground
//! answer` ([`answer_and_print`]) as a turn of a saved session ([`Session`]), with
//! line editing and history (rustyline) and a few slash commands. With stdin not a
//! terminal it reads one question per line ([`read_line`]), so it scripts too.
//!
//! Ctrl-C while an answer is under way cancels that answer (the runtime's Ctrl-C
//! ends the run as interrupted) and the prompt comes back with the session as it
//! was; at the prompt it clears the line; Ctrl-D ends the chat.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use ground::error::{exit, report};
use ground::render::Style;
use ground::report::Strictness;
use ground::session::{self, Session};
use ground::settings::Settings;
use ground::text::sanitize_line;

use crate::answering::{Printing, answer_and_print};
use crate::cli::{ChatArgs, Format};
use crate::conversation::{held, save_turn, state_dir};
use crate::input::read_line;
use crate::output::{code, colour_stdout};
use crate::runtime::{block_on, ready_model, settings};

const HELP: &str = "Ask a question, then follow-ups. Commands:
  /sources      the sources read so far, numbered as in every answer
  /new          forget this conversation and start afresh
  /save FILE    write the conversation to FILE as Markdown with footnotes
  /quit         end (Ctrl-D too); Ctrl-C cancels an answer under way";

/// Runs `ground chat`.
pub fn run(args: ChatArgs) -> ExitCode {
    let mut overrides = args.run.overrides(args.pages, args.timeout);
    overrides.images = args.images;
    let name = args.session.clone().unwrap_or_else(session::new_chat_name);
    // The chat holds its session until it ends (see `ground::session::hold`).
    let opened = settings(&overrides)
        .and_then(|s| block_on(ready_model(s, args.quiet, None)))
        .and_then(|s| Ok((held(&s, &name)?, s)));
    let ((mut session, _hold), settings) = match opened {
        Ok(opened) => opened,
        Err(e) => {
            eprintln!("{}", e.report());
            return code(e.exit_code());
        }
    };
    let printing = Printing {
        json: false,
        pack: false,
        quiet: args.quiet,
        // On a terminal each answer ends with its related searches; piped, it does not.
        related: false,
        verbose: false,
        style: match args.format {
            Format::Text => Style::Text {
                colour: colour_stdout(),
            },
            Format::Markdown => Style::Markdown,
        },
        strictness: Strictness::Lenient,
        events: None,
    };
    let mut chat = Chat {
        session: &mut session,
        settings: &settings,
        printing,
        first_failure: None,
        interrupted: false,
    };
    if std::io::stdin().is_terminal() {
        chat.interactive()
    } else {
        chat.piped()
    }
}

/// The hint when the terminal cannot be used for the chat.
const PIPE_HINT: &str = "pipe the questions in instead, one per line";

/// What a line asked for.
enum Step {
    /// Go on to the next line.
    Next,
    /// End the chat.
    Quit,
}

/// A chat under way.
struct Chat<'a> {
    session: &'a mut Session,
    settings: &'a Settings,
    printing: Printing,
    /// The exit code of the first turn that failed (piped chats end with it).
    first_failure: Option<ExitCode>,
    /// Whether the last answer was cancelled with Ctrl-C.
    interrupted: bool,
}

impl Chat<'_> {
    /// Reads lines with editing and history until /quit or Ctrl-D.
    fn interactive(&mut self) -> ExitCode {
        let mut editor = match rustyline::DefaultEditor::new() {
            Ok(editor) => editor,
            Err(e) => {
                eprintln!(
                    "{}",
                    report(&format!("cannot start line editing: {e}"), Some(PIPE_HINT))
                );
                return code(exit::INTERNAL);
            }
        };
        if !self.printing.quiet {
            eprintln!(
                "ground chat: conversation {:?} ({} turns, {} sources; --session NAME resumes one). /help for commands, Ctrl-D to end.",
                self.session.name,
                self.session.turns.len(),
                self.session.evidence.sources.len()
            );
        }
        loop {
            match editor.readline("> ") {
                Ok(line) => {
                    let line = line.trim();
                    if line.is_empty() {
                        continue;
                    }
                    let _ = editor.add_history_entry(line);
                    if let Step::Quit = self.line(line) {
                        break;
                    }
                    println!();
                }
                // Ctrl-C at the prompt clears the line; the chat goes on.
                Err(rustyline::error::ReadlineError::Interrupted) => continue,
                Err(rustyline::error::ReadlineError::Eof) => break,
                Err(e) => {
                    eprintln!(
                        "{}",
                        report(&format!("cannot read the terminal: {e}"), Some(PIPE_HINT))
                    );
                    return code(exit::INTERNAL);
                }
            }
        }
        ExitCode::SUCCESS
    }

    /// One question (or command) per line of stdin, each answer printed in turn;
    /// ends with the first failed turn's exit code, else 0. A line is read up to
    /// [`crate::input::MAX_LINE_BYTES`] (a longer one, or one that is not UTF-8, is that turn's
    /// usage error and the chat goes on); Ctrl-C during an answer ends a piped chat
    /// (a script asked to stop), with exit code 130.
    fn piped(&mut self) -> ExitCode {
        let mut stdin = std::io::stdin().lock();
        let mut answered = false;
        for n in 1.. {
            let line = match read_line(&mut stdin) {
                Ok(Some(line)) => line,
                Ok(None) => break,
                Err(problem) => {
                    eprintln!(
                        "{}",
                        report(
                            &format!("line {n} of stdin {problem}"),
                            Some("one question per line, as UTF-8 text")
                        )
                    );
                    self.first_failure.get_or_insert(code(exit::USAGE));
                    continue;
                }
            };
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            // A blank line between answers.
            if answered && !line.starts_with('/') {
                println!();
            }
            answered |= !line.starts_with('/');
            if let Step::Quit = self.line(line) {
                break;
            }
            if self.interrupted {
                return code(exit::INTERRUPTED);
            }
        }
        self.first_failure.unwrap_or(ExitCode::SUCCESS)
    }

    /// A command or a question.
    fn line(&mut self, line: &str) -> Step {
        let (command, rest) = match line.split_once(char::is_whitespace) {
            Some((command, rest)) => (command, rest.trim()),
            None => (line, ""),
        };
        match command {
            "/quit" | "/exit" => return Step::Quit,
            "/help" => println!("{HELP}"),
            "/sources" => print!("{}", sources_list(self.session)),
            "/new" => {
                self.session.clear();
                self.save();
                eprintln!("ground: a new conversation");
            }
            "/save" if rest.is_empty() => {
                eprintln!(
                    "{}",
                    report("/save needs a file name", Some("/save notes.md"))
                )
            }
            "/save" => self.save_transcript(Path::new(rest)),
            other if other.starts_with('/') => eprintln!(
                "{}",
                report(
                    &format!("unknown command {other}"),
                    Some("/help lists the commands")
                )
            ),
            _ => self.ask(line),
        }
        Step::Next
    }

    /// Answers a question as the session's next turn and saves the session.
    fn ask(&mut self, question: &str) {
        let (exit_code, report) =
            answer_and_print(question, Some(self.session), self.settings, &self.printing);
        self.interrupted = exit_code == code(exit::INTERRUPTED);
        match report {
            Some(report) => save_turn(self.session, &report, self.settings),
            None => {
                self.first_failure.get_or_insert(exit_code);
            }
        }
    }

    /// Saves the session, saying on stderr when it cannot be.
    fn save(&mut self) {
        if let Err(e) = state_dir(self.settings).and_then(|dir| self.session.save(dir)) {
            eprintln!("{}", e.report());
        }
    }

    /// `/save FILE`: the conversation as Markdown.
    fn save_transcript(&self, path: &Path) {
        let text = ground::render::transcript::markdown(self.session);
        match std::fs::write(path, text) {
            Ok(()) => eprintln!(
                "ground: saved {} turns to {}",
                self.session.turns.len(),
                path.display()
            ),
            Err(e) => eprintln!(
                "{}",
                report(
                    &format!("cannot write {}: {e}", path.display()),
                    Some("give /save a writable path")
                )
            ),
        }
    }
}

/// The session's sources, one line each, numbered as in every answer.
fn sources_list(session: &Session) -> String {
    if session.evidence.sources.is_empty() {
        return "No sources read yet.\n".into();
    }
    session
        .evidence
        .sources
        .iter()
        .map(|s| {
            format!(
                "[{}] {} {}\n",
                s.number,
                sanitize_line(&s.title),
                sanitize_line(&s.url)
            )
        })
        .collect()
}
