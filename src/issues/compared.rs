//! What metal-api judges by comparing a machine with every other machine of the query
//! (`Config.Machines`): asn-not-unique (issues/asn-uniqueness.go) among firewalls, and
//! bmc-no-distinct-ip (issues/non-distinct-bmc-ip.go) among BMCs.

use std::collections::{BTreeSet, HashMap};

/// The fleet's firewall ASNs and BMC addresses, each with the machines that hold it.
#[derive(Debug, Default)]
pub struct Compared {
    /// Per ASN, a machine id for each of a firewall's networks that announces it (as
    /// metal-api lists a machine once per such network).
    asns: HashMap<u32, Vec<String>>,
    /// Per BMC address (not empty), the machines that have it.
    bmc_addresses: HashMap<String, Vec<String>>,
}

impl Compared {
    /// Takes a machine into account: a firewall's networks' ASNs (0 none, as in metal-api),
    /// its BMC's address (empty none).
    pub fn add(&mut self, machine: &str, firewall_asns: &[u32], bmc_address: Option<&str>) {
        for asn in firewall_asns.iter().filter(|&&asn| asn != 0) {
            let ids = self.asns.entry(*asn).or_default();
            ids.push(machine.to_string());
        }
        if let Some(address) = bmc_address.filter(|a| !a.is_empty()) {
            let ids = self.bmc_addresses.entry(address.to_string()).or_default();
            ids.push(machine.to_string());
        }
    }

    /// Of a firewall's ASNs, those another firewall announces too, smallest first, each with
    /// those machines (by id, once per network).
    pub fn shared_asns(&self, machine: &str, asns: &[u32]) -> Vec<(u32, Vec<String>)> {
        let own: BTreeSet<u32> = asns.iter().copied().filter(|&asn| asn != 0).collect();
        own.into_iter()
            .filter_map(|asn| {
                let others = others(self.asns.get(&asn), machine);
                (!others.is_empty()).then_some((asn, others))
            })
            .collect()
    }

    /// The other machines whose BMC has this address, by id; none for an empty one.
    pub fn shared_bmc_address(&self, machine: &str, address: &str) -> Vec<String> {
        if address.is_empty() {
            return Vec::new();
        }
        others(self.bmc_addresses.get(address), machine)
    }
}

/// The ids but `machine`'s, sorted.
fn others(ids: Option<&Vec<String>>, machine: &str) -> Vec<String> {
    let mut others: Vec<String> = ids
        .into_iter()
        .flatten()
        .filter(|id| *id != machine)
        .cloned()
        .collect();
    others.sort();
    others
}
