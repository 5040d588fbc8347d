//! The `fsmlog` binary: parse the command line, run the command, tell how it ended and map
//! that to an exit code (0 ok, 1 a gate failed, 2 bad usage or unreadable input).

use std::io::{self, ErrorKind};
use std::process::ExitCode;

use clap::Parser;
use fsmlog::Cli;

fn main() -> ExitCode {
    let cli = match Cli::try_parse_from(fsmlog::metalctl_spellings(std::env::args_os())) {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() { 2 } else { 0 });
        }
    };
    match fsmlog::run(cli) {
        Ok(ending) => {
            let _ = ending.tell(&mut io::stderr().lock());
            ExitCode::from(ending.exit_code())
        }
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            // Errors name files and quote rule files, which come from anywhere; a message of
            // several lines (each mistake of a rule file) keeps its lines.
            let text = format!("{err:#}");
            let lines: Vec<_> = text.lines().map(fsmlog::escape::text).collect();
            eprintln!("fsmlog: {}", lines.join("\n"));
            ExitCode::from(2)
        }
    }
}

/// A reader that closed the pipe (`fsmlog … | head`) is not an error.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == ErrorKind::BrokenPipe)
    })
}

// The replay allocates per event and frees across threads; mimalloc handles that pattern far
// better than the system allocator (measured with bench/compare.sh).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
