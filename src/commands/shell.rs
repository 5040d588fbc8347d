//! `fsmlog completions SHELL` and `fsmlog man`: what a shell and `man` need, written from the
//! same command-line definition clap parses.

use std::io::Write;

use anyhow::Result;
use clap::CommandFactory;

use crate::cli::Cli;
use crate::ending::Ending;
use crate::sink::Sink;

/// Prints the completion script of a shell.
pub fn completions(shell: clap_complete::Shell) -> Result<Ending> {
    let mut command = Cli::command();
    Sink::Stdout.write(|mut out| {
        clap_complete::generate(shell, &mut command, "fsmlog", &mut out);
        Ok(())
    })?;
    Ok(Ending::default())
}

/// Prints one roff manual page: fsmlog's, then a section per command with its synopsis,
/// description, options and examples.
pub fn man() -> Result<Ending> {
    let mut page = Vec::new();
    write_man(&mut page)?;
    let page = ascii_roff(&String::from_utf8_lossy(&page));
    Sink::Stdout.write(|out| Ok(out.write_all(page.as_bytes())?))?;
    Ok(Ending::default())
}

/// The page in ASCII: each other character as groff's `\[uXXXX]`, so that groff reads it
/// without a guess at the encoding (man-db runs preconv; plain `groff -man` does not).
fn ascii_roff(page: &str) -> String {
    let mut out = String::with_capacity(page.len());
    for c in page.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.push_str(&format!("\\[u{:04X}]", c as u32));
        }
    }
    out
}

fn write_man(mut out: &mut dyn Write) -> Result<()> {
    let command = Cli::command();
    let page = clap_mangen::Man::new(command.clone());
    page.render_title(&mut out)?;
    page.render_name_section(&mut out)?;
    page.render_synopsis_section(&mut out)?;
    page.render_description_section(&mut out)?;
    page.render_options_section(&mut out)?;
    write_subcommands(out, &command, "fsmlog", ".SH")?;
    for sub in command.get_subcommands() {
        write_command(out, &command, sub, "fsmlog")?;
    }
    write!(out, "{EXIT_STATUS}")?;
    page.render_version_section(&mut out)?;
    Ok(())
}

/// The exit codes every command keeps, for CI.
const EXIT_STATUS: &str = ".SH \"EXIT STATUS\"
.TP
0
The command did what was asked: the gate passed, or there was no gate.
.TP
1
A gate failed: check beyond its baseline, diff or issues with what its --fail-on names
(diff by default: something newly unexpected), rules lint with a mistake.
.TP
2
A usage or input error: an unknown option, a file that is missing or cannot be read, a
damaged row (the rest is still reported), nothing read where a gate needs machines.
";

/// A command's subcommands, each naming the section of this page that describes it (there
/// is one page, not one per command).
fn write_subcommands(
    out: &mut dyn Write,
    command: &clap::Command,
    name: &str,
    heading: &str,
) -> Result<()> {
    let subs: Vec<_> = command
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
        .collect();
    if subs.is_empty() {
        return Ok(());
    }
    writeln!(out, "{heading} SUBCOMMANDS")?;
    for sub in subs {
        let full = format!("{name} {}", sub.get_name());
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        writeln!(
            out,
            ".TP\n\\fB{}\\fR (section {})\n{}",
            roff_text(&full),
            roff_text(&full.to_uppercase()),
            roff_text(&about)
        )?;
    }
    Ok(())
}

/// A command's own section, and its subcommands' after it.
fn write_command(
    out: &mut dyn Write,
    root: &clap::Command,
    command: &clap::Command,
    parent: &str,
) -> Result<()> {
    let name = format!("{parent} {}", command.get_name());
    let upper = name.to_uppercase();
    writeln!(out, ".SH \"{upper}\"")?;
    // The command's own page, without its title, under this section.
    let sub = command
        .clone()
        .name(name.clone())
        .bin_name(name.clone())
        .version(root.get_version().unwrap_or_default().to_string());
    let page = clap_mangen::Man::new(sub);
    let mut body = Vec::new();
    page.render_synopsis_section(&mut body)?;
    page.render_description_section(&mut body)?;
    page.render_options_section(&mut body)?;
    write_subcommands(&mut body, command, &name, ".SS")?;
    if let Some(after) = command.get_after_help() {
        writeln!(body, ".PP\n.nf\n{}\n.fi", roff_text(&after.to_string()))?;
    }
    // Each section heading of the command becomes a subsection of this one.
    let text = String::from_utf8_lossy(&body).replace(".SH ", ".SS ");
    out.write_all(text.as_bytes())?;
    for child in command.get_subcommands() {
        write_command(out, root, child, &name)?;
    }
    Ok(())
}

/// Plain text for roff: backslashes doubled, and a line starting with `.` or `'` kept as text.
fn roff_text(text: &str) -> String {
    text.replace('\\', "\\\\")
        .lines()
        .map(|l| {
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
