//! `fsmlog collect`: one poll with `--once`, else the loop until SIGTERM or SIGINT (a second
//! one ends it at once).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use signal_hook::consts::{SIGINT, SIGTERM};

use crate::cli::CollectArgs;
use crate::collect;
use crate::ending::Ending;

/// Runs the collector.
pub fn run(args: &CollectArgs) -> Result<Ending> {
    let plan = args.plan();
    if args.once {
        collect::once(&plan)?;
        return Ok(Ending::default());
    }
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [SIGTERM, SIGINT] {
        signal_hook::flag::register_conditional_shutdown(signal, 1, Arc::clone(&stop))?;
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    collect::run(&plan, &stop)?;
    Ok(Ending::default())
}
