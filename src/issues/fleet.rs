//! What metal-api judges by comparing a machine with every other machine of the query
//! (`Config.Machines`): asn-not-unique (issues/asn-uniqueness.go) among firewalls, and
//! bmc-no-distinct-ip (issues/non-distinct-bmc-ip.go) among BMCs.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::MachineFacts;

/// The fleet's firewall ASNs and BMC addresses, each with the machines that hold it.
#[derive(Debug, Default)]
pub struct Fleet {
    /// Per ASN, a machine id for each of a firewall's networks that announces it (as
    /// metal-api lists a machine once per such network).
    asns: HashMap<u32, Vec<String>>,
    /// Per BMC address (not empty), the machines that have it.
    bmc_addresses: HashMap<String, Vec<String>>,
}

/// Whether metal-api takes the machine for a firewall: allocated, with the role `firewall`.
pub fn firewall(m: &MachineFacts) -> bool {
    m.allocated == Some(true)
        && m
            .place
            .as_deref()
            .is_some_and(|p| p.role.as_deref() == Some("firewall"))
}

/// A firewall's ASNs (not 0), each once.
fn asns(m: &MachineFacts) -> BTreeSet<u32> {
    match m.place.as_deref() {
        Some(place) if firewall(m) => place.asns.iter().copied().collect(),
        _ => BTreeSet::new(),
    }
}

impl Fleet {
    /// Gathers the machines judged together.
    pub fn of(machines: &[MachineFacts]) -> Fleet {
        let mut fleet = Fleet::default();
        for m in machines {
            if firewall(m)
                && let Some(place) = m.place.as_deref()
            {
                for asn in &place.asns {
                    fleet.asns.entry(*asn).or_default().push(m.machine.clone());
                }
            }
            if let Some(bmc) = m.bmc.as_deref()
                && !bmc.address.is_empty()
            {
                let ids = fleet.bmc_addresses.entry(bmc.address.clone()).or_default();
                ids.push(m.machine.clone());
            }
        }
        fleet
    }

    /// The firewall's ASNs that another firewall announces too, smallest first, each with
    /// those machines (by id, once per network); empty for a machine that is no firewall.
    pub fn shared_asns(&self, m: &MachineFacts) -> Vec<(u32, Vec<String>)> {
        let mut shared = BTreeMap::new();
        for asn in asns(m) {
            let mut others: Vec<String> = self
                .asns
                .get(&asn)
                .into_iter()
                .flatten()
                .filter(|id| **id != m.machine)
                .cloned()
                .collect();
            if !others.is_empty() {
                others.sort();
                shared.insert(asn, others);
            }
        }
        shared.into_iter().collect()
    }

    /// The other machines whose BMC has the machine's address, by id; none where it has
    /// no address.
    pub fn shared_bmc_address(&self, m: &MachineFacts) -> Vec<String> {
        let Some(bmc) = m.bmc.as_deref().filter(|b| !b.address.is_empty()) else {
            return Vec::new();
        };
        let mut others: Vec<String> = self
            .bmc_addresses
            .get(&bmc.address)
            .into_iter()
            .flatten()
            .filter(|id| **id != m.machine)
            .cloned()
            .collect();
        others.sort();
        others
    }
}
