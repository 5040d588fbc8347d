//! A pair's verdict as a view shows it: its line with the precedents as links, what it rests
//! on, and the metalctl commands to run next for the component it names.

use crate::diagnose::{Action, Component, Kind, PairVerdict, Precedent};
use crate::render::doc::{Doc, Piece, Tone, Value, argument, label};
use crate::render::sentence;

/// The verdict's line and, indented below it, what it rests on.
pub fn verdict_lines(doc: &mut Doc, v: &PairVerdict) {
    let tone = match v.kind {
        Kind::Accept | Kind::Swallow => Tone::Strong,
        Kind::Undecided | Kind::Liveness => Tone::Plain,
        _ => Tone::Bad,
    };
    doc.line(verdict_line(v, tone));
    for basis in &v.evidence {
        doc.line(vec![label(format!("  {}", sentence::basis(basis)))]);
    }
}

/// The commands to run next on `machine` for the component a verdict asks to look at.
pub fn next_steps(doc: &mut Doc, v: &PairVerdict, machine: &str) {
    let Some(component) = v.component.filter(|_| v.action == Action::Investigate) else {
        return;
    };
    let steps = commands(component);
    if steps.is_empty() {
        return;
    }
    let what = match component {
        Component::Machine => "the machine",
        Component::Firmware => "its firmware",
        other => other.name(),
    };
    doc.line(vec![label(format!("next, to look at {what}:"))]);
    for (command, why) in steps {
        doc.command(metalctl(command, machine), vec![label(*why)]);
    }
}

/// A metalctl command on one machine, safe to paste: the id quoted for the shell, and after
/// `--` where it starts with `-` (cobra would read `-u…` as metalctl's --url); a command
/// ending in `=` takes the id as that option's value.
pub fn metalctl(command: &str, machine: &str) -> Vec<Piece> {
    let command = if command.ends_with('=') {
        format!("  {command}")
    } else if machine.starts_with('-') {
        format!("  {command} -- ")
    } else {
        format!("  {command} ")
    };
    vec![label(command), argument(machine.to_string())]
}

/// What to run next for a component to look at: only read-only commands metalctl has
/// (cmd/machine.go, cmd/switch.go), each with what it shows.
fn commands(component: Component) -> &'static [(&'static str, &'static str)] {
    const IPMI_EVENTS: (&str, &str) = (
        "metalctl machine ipmi events",
        "the BMC's hardware and power events around it",
    );
    const CONSOLE: (&str, &str) = (
        "metalctl machine console --ipmi",
        "the serial console, where metal-hammer and the firmware write",
    );
    match component {
        Component::MetalHammer => &[CONSOLE, IPMI_EVENTS],
        Component::MetalCore => &[(
            "metalctl switch connected-machines --machine-id=",
            "the machine's leaf switches: metal-core there sends Phoned Home, and logs it",
        )],
        Component::MetalApi => &[(
            "metalctl machine describe",
            "the allocation: whether a reinstall was asked for",
        )],
        Component::Firmware => &[IPMI_EVENTS, CONSOLE],
        Component::Machine => &[
            IPMI_EVENTS,
            (
                "metalctl machine issues",
                "what metal-api itself finds wrong with the machine",
            ),
        ],
        Component::Fsm => &[],
    }
}

/// A verdict's line with its precedents as links.
fn verdict_line(v: &PairVerdict, tone: Tone) -> Vec<Piece> {
    let link = |p: Precedent| {
        Piece::from(Value::Link {
            text: p.name(),
            url: p.url(),
        })
        .tone(tone)
    };
    let mut line = vec![label(sentence::verdict_head(v)).tone(tone)];
    if let Some(p) = v.precedent {
        line.push(label(" · as in ").tone(tone));
        line.push(link(p));
    }
    if let Some(h) = &v.handled_by {
        let release = label(format!(" · {}", sentence::handled_release(h))).tone(tone);
        let tail = label(sentence::handled_tail(h)).tone(tone);
        match h.precedent {
            Some(p) => line.extend([
                release,
                label(" (").tone(tone),
                link(p),
                label(")").tone(tone),
                tail,
            ]),
            None => line.extend([release, tail]),
        }
    }
    line
}
