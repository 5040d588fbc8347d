//! The members of metal-api's machine object the direct reader reads: the event container,
//! where the machine is, who has it, its state and tags.

use crate::input::raw::lenient::{Loose, Slot, Text};
use crate::input::raw::shapes::{
    EventsField, RawAllocation, RawEventBlock, RawIpmi, RawItem, RawNetworks, RawRef, RawState,
    RawTags,
};

use super::reader::Reader;

impl<'a> Reader<'a> {
    /// metal-api's event container.
    fn block(&mut self) -> Option<RawEventBlock<'a>> {
        let mut block = RawEventBlock::default();
        self.object(|r, key| {
            match key {
                b"log" => block.log = r.events()?,
                b"last_error_event" => block.last_error_event = r.maybe_event()?,
                b"last_event_time" => block.last_event_time = r.text()?,
                b"crash_loop" => block.crash_loop = r.flag()?,
                b"failed_machine_reclaim" => block.failed_machine_reclaim = r.flag()?,
                _ => r.skip()?,
            }
            Some(())
        })?;
        Some(block)
    }

    /// An object of which one text member is read (the last where it repeats), or `null`.
    fn one_member(&mut self, name: &[u8]) -> Option<Option<Loose<Text<'a>>>> {
        if self.null() {
            return Some(None);
        }
        let mut member = Loose::default();
        self.object(|r, key| {
            if key == name {
                r.text().map(|text| member = Loose(text))
            } else {
                r.skip()
            }
        })?;
        Some(Some(member))
    }

    /// An object named by its `id` (`partition`, `size`, `image`), or `null`.
    fn reference(&mut self) -> Option<Option<RawRef<'a>>> {
        Some(self.one_member(b"id")?.map(|id| RawRef { id }))
    }

    /// A machine's allocation, of which who has it is read.
    fn allocation(&mut self) -> Option<RawAllocation<'a>> {
        let mut allocation = RawAllocation::default();
        self.object(|r, key| {
            match key {
                b"hostname" => allocation.hostname = Loose(r.text()?),
                b"project" => allocation.project = Loose(r.text()?),
                b"role" => allocation.role = Loose(r.text()?),
                b"image" => allocation.image = Loose(r.reference()?),
                b"networks" if r.audit => allocation.networks = r.networks()?,
                _ => r.skip()?,
            }
            Some(())
        })?;
        Some(allocation)
    }

    /// The machine object: the members the careful path reads of a machine, and any other key
    /// it reads (another format's) sends the element there.
    pub(super) fn item(&mut self) -> Option<RawItem<'a>> {
        let mut item = RawItem::default();
        self.object(|r, key| {
            match key {
                b"id" => item.id = r.text()?,
                b"liveliness" => item.liveliness = r.text()?,
                b"events" => {
                    item.events = if r.null() {
                        Slot::Null
                    } else if r.peek()? == b'{' {
                        Slot::Value(EventsField::Block(r.block()?))
                    } else {
                        return None;
                    }
                }
                b"allocation" => {
                    item.allocation = if r.null() {
                        Slot::Null
                    } else {
                        Slot::Value(Loose(Some(r.allocation()?)))
                    }
                }
                b"partition" => {
                    item.partition = match r.reference()? {
                        None => Slot::Null,
                        partition => Slot::Value(Loose(partition)),
                    }
                }
                b"size" => item.size = Loose(r.reference()?),
                b"rackid" | b"rack" => item.rack = Loose(r.text()?),
                b"state" => item.state = Loose(r.state()?),
                b"tags" => item.tags = r.tags()?,
                b"ipmi" if r.audit => item.ipmi = Loose(r.ipmi()?),
                // Only the audit reads it (see `ReadMode::Audit`).
                b"ipmi" => r.skip()?,
                key if RawItem::KEYS.iter().any(|k| k.as_bytes() == key) => return None,
                _ => r.skip()?,
            }
            Some(())
        })?;
        Some(item)
    }

    /// A machine's state, or `null`.
    fn state(&mut self) -> Option<Option<RawState<'a>>> {
        Some(self.one_member(b"value")?.map(|value| RawState { value }))
    }

    /// A machine's tags, of which those metal-metrics-exporter reads are kept; `null` is
    /// none.
    fn tags(&mut self) -> Option<RawTags<'a>> {
        let mut tags = RawTags::default();
        if self.null() {
            return Some(tags);
        }
        self.eat(b'[')?;
        self.space();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(tags);
        }
        loop {
            self.space();
            tags.add(self.string()?);
            if !self.more(b']')? {
                return Some(tags);
            }
        }
    }

    /// An allocation's networks, of which the ASNs are read; `null` is none. Anything the
    /// careful path reads loosely (an element that is no object, an ASN that is no plain
    /// integer or string) is left to it.
    fn networks(&mut self) -> Option<RawNetworks<'a>> {
        let mut networks = RawNetworks::default();
        if self.null() {
            return Some(networks);
        }
        self.eat(b'[')?;
        self.space();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(networks);
        }
        loop {
            self.space();
            let mut asn = None;
            self.object(|r, key| match key {
                b"asn" => {
                    asn = r.asn()?;
                    Some(())
                }
                _ => r.skip(),
            })?;
            networks.asns.extend(asn);
            if !self.more(b']')? {
                return Some(networks);
            }
        }
    }

    /// An ASN as the careful path takes it: a string, or an integer as its digits (a number
    /// it would write otherwise, negative, with a fraction or long, is left to it).
    fn asn(&mut self) -> Option<Option<Text<'a>>> {
        if self.peek()? != b'"' && self.peek()? != b'n' {
            let rest: &'a [u8] = &self.bytes[self.at..];
            let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            let plain = digits > 0 && digits <= 18 && (digits == 1 || rest[0] != b'0');
            if !plain || matches!(rest.get(digits), Some(b'.' | b'e' | b'E')) {
                return None;
            }
            let text = std::str::from_utf8(&rest[..digits]).ok()?;
            self.at += digits;
            return Some(Some(Text(text.into())));
        }
        self.text()
    }

    /// A machine's `ipmi`, of which the address, MAC and last update are read (never the
    /// credentials); `null` is none.
    fn ipmi(&mut self) -> Option<Option<RawIpmi<'a>>> {
        if self.null() {
            return Some(None);
        }
        let mut ipmi = RawIpmi::default();
        self.object(|r, key| {
            match key {
                b"address" => ipmi.address = Loose(r.text()?),
                b"mac" => ipmi.mac = Loose(r.text()?),
                b"last_updated" => ipmi.last_updated = Loose(r.text()?),
                _ => r.skip()?,
            }
            Some(())
        })?;
        Some(Some(ipmi))
    }
}
