//! Drives `ground extract`'s engine without the CLI layer (handy for profiling):
//! `cargo run --release --example extract_dir -- [--input-dir D --output-dir O] [--url U] [FILE...]`.

use std::path::PathBuf;

use ground::extract_command::{self, ExtractArgs};

fn main() {
    let mut args = ExtractArgs::default();
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--input-dir" => args.input_dir = it.next().map(PathBuf::from),
            "--output-dir" => args.output_dir = it.next().map(PathBuf::from),
            "--url" => args.url = it.next(),
            _ => args.files.push(PathBuf::from(arg)),
        }
    }
    if let Err(err) = extract_command::run(&args) {
        eprintln!("error: {err}");
        std::process::exit(2);
    }
}
