//! Simulated fleets, for the fleet generator (`examples/gen_fleet.rs`), the benches and the
//! tests: seeded machines that provision, reboot, get reclaimed and misbehave as real fleets
//! do, and the hardware sections a real export carries. Built only with the `sim` feature,
//! which the tests, benches and examples turn on.

pub mod details;
pub mod fleet;
