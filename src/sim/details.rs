//! What a real `metalctl machine list -o json` holds besides a machine's events: partition,
//! size, hardware (NICs with their LLDP neighbours, disks with partitions, CPUs), BIOS, IPMI
//! with FRU and power data, state, LED state, tags and, for most machines, an allocation — of
//! the size and variety metal-api's v1 `MachineResponse` has, so that benchmarks read what
//! operators export. fsmlog reads none of it but `id` and `allocation`.

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};

fn mac(rng: &mut ChaCha8Rng) -> String {
    let b: [u8; 6] = rng.random();
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        b[0] & 0xfe,
        b[1],
        b[2],
        b[3],
        b[4],
        b[5]
    )
}

fn pick<'a>(rng: &mut ChaCha8Rng, from: &[&'a str]) -> &'a str {
    from[rng.random_range(0..from.len())]
}

fn serial(rng: &mut ChaCha8Rng, prefix: &str) -> String {
    format!("{prefix}{:010}", rng.random_range(0..10_000_000_000u64))
}

/// The fields of one machine besides `id`, `name`, `liveliness` and `events`.
pub fn details(seed: u64, index: u64) -> Map<String, Value> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed.rotate_left(17) ^ index ^ 0x00D3_7A11);
    let rack = rng.random_range(1..40);
    let partition = pick(
        &mut rng,
        &["fra-equ01", "fra-equ02", "ams-dc1", "nbg-w8101"],
    );
    let size = pick(
        &mut rng,
        &[
            "c1-large-x86",
            "c1-xlarge-x86",
            "s2-xlarge-x86",
            "n1-medium-x86",
            "g1-medium-x86",
        ],
    );
    let switches = ["leaf01", "leaf02"];
    let nics: Vec<Value> = (0..rng.random_range(2..7))
        .map(|i| {
            let neighbours: Vec<Value> = switches
                .iter()
                .take(if i < 2 { 1 } else { 0 })
                .map(|sw| {
                    json!({
                        "mac": mac(&mut rng),
                        "name": format!("Ethernet{}", rng.random_range(0..64) * 4),
                        "identifier": format!("r{rack:02}{sw}"),
                        "hostname": format!("r{rack:02}{sw}.{partition}"),
                        "vrf": null,
                        "neighbors": [],
                    })
                })
                .collect();
            json!({
                "mac": mac(&mut rng),
                "name": format!("lan{i}"),
                "identifier": format!("0000:{:02x}:00.{}", 0x18 + i, i % 2),
                "vrf": null,
                "neighbors": neighbours,
            })
        })
        .collect();
    let disks: Vec<Value> = (0..rng.random_range(1..9))
        .map(|i| {
            let partitions: Vec<Value> = if i == 0 {
                ["efi", "root", "varlib"]
                    .iter()
                    .enumerate()
                    .map(|(p, label)| {
                        json!({
                            "device": format!("/dev/nvme0n1p{}", p + 1),
                            "number": p + 1,
                            "mountpoint": (["/boot/efi", "/", "/var/lib"][p]),
                            "size": ([536_870_912u64, 53_687_091_200, 0][p]),
                            "filesystem": (["vfat", "ext4", "ext4"][p]),
                            "label": label,
                            "gpt_type": (["ef00", "8300", "8300"][p]),
                            "gpt_guid": format!("{:032x}", rng.random::<u128>()),
                        })
                    })
                    .collect()
            } else {
                Vec::new()
            };
            json!({
                "name": format!("/dev/nvme{i}n1"),
                "size": ([960_197_124_096u64, 1_920_383_410_176, 3_840_755_982_336][rng.random_range(0..3)]),
                "partitions": partitions,
            })
        })
        .collect();
    let cores = [16, 32, 48, 64][rng.random_range(0..4)];
    let cpus: Vec<Value> = (0..rng.random_range(1..3))
        .map(|_| {
            json!({
                "vendor": "AuthenticAMD",
                "model": pick(&mut rng, &["AMD EPYC 7402P 24-Core Processor", "AMD EPYC 9354 32-Core Processor", "AMD EPYC 7313P 16-Core Processor"]),
                "cores": cores,
                "threads": cores * 2,
            })
        })
        .collect();
    let board = pick(&mut rng, &["H12SSL-i", "X11DPT-B", "H13SSL-N"]);
    let allocated = rng.random_bool(0.7);
    let allocation = if allocated {
        let project = format!("{:032x}", rng.random::<u128>());
        json!({
            "creator": "someone@example.com",
            "created": "2025-06-02T10:11:12.000Z",
            "name": format!("shoot--{}--worker-{:05x}", pick(&mut rng, &["prod", "stage", "dev"]), rng.random_range(0..0xfffff)),
            "description": "",
            "project": project,
            "image": {"id": pick(&mut rng, &["ubuntu-24.04.20250601", "debian-12.0.20250512", "firewall-ubuntu-3.0"]), "name": "ubuntu", "features": ["machine"], "os": "ubuntu", "version": "24.04.20250601", "usage": ["machine"]},
            "filesystemlayout": {"id": "default", "name": "default", "description": "default layout"},
            "networks": [
                {"networkid": format!("{:032x}", rng.random::<u128>()), "prefixes": ["10.130.0.0/22"], "ips": [format!("10.130.{}.{}", rng.random_range(0..4), rng.random_range(1..255))], "vrf": rng.random_range(1000..9000), "asn": 4_200_000_000u64 + rng.random_range(0..1000), "private": true, "underlay": false, "nat": true, "destinationprefixes": []},
                {"networkid": "internet", "prefixes": ["212.34.80.0/22"], "ips": [], "vrf": 104_009, "asn": 4_200_000_000u64, "private": false, "underlay": false, "nat": true, "destinationprefixes": ["0.0.0.0/0"]},
            ],
            "hostname": "shoot-worker",
            "ssh_pub_keys": [format!("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA{:040x} deploy", rng.random::<u128>())],
            "user_data": "",
            "succeeded": true,
            "reinstall": false,
            "boot_info": {"image_id": "ubuntu-24.04", "primary_disk": "/dev/nvme0n1", "os_partition": "/dev/nvme0n1p2", "initrd": "/boot/initrd.img", "cmdline": "console=ttyS1,115200n8 root=UUID=0000", "kernel": "/boot/vmlinuz", "bootloaderid": "metal-ubuntu"},
            "role": "machine",
            "vpn": null,
        })
    } else {
        Value::Null
    };
    let mut tags = vec![
        format!("machine.metal-stack.io/rack={rack:02}"),
        format!(
            "machine.metal-stack.io/chassis=r{rack:02}c{}",
            rng.random_range(1..5)
        ),
    ];
    if allocated {
        tags.push("cluster.metal-stack.io/id=shoot-prod".to_string());
        tags.push(format!(
            "kubernetes.io/hostname=shoot-worker-{:05x}",
            rng.random_range(0..0xfffff)
        ));
    }
    let mut m = Map::new();
    m.insert("description".into(), json!(""));
    m.insert("created".into(), json!("2024-11-04T08:15:42.000Z"));
    m.insert("changed".into(), json!("2025-06-20T12:00:00.000Z"));
    m.insert(
        "partition".into(),
        json!({"id": partition, "name": partition, "description": format!("partition {partition}"),
               "bootconfig": {"imageurl": "https://images.metal-stack.io/metal-os/stable/metal-hammer/img.tar.lz4", "kernelurl": "https://images.metal-stack.io/metal-hammer/vmlinuz", "commandline": "console=ttyS1,115200n8 ip=dhcp"},
               "privatenetworkprefixlength": 22}),
    );
    m.insert("rackid".into(), json!(format!("rack-{rack:02}")));
    m.insert(
        "size".into(),
        json!({"id": size, "name": size, "description": "",
               "constraints": [{"type": "cores", "min": cores, "max": cores}, {"type": "memory", "min": 274_877_906_944u64, "max": 274_877_906_944u64}, {"type": "storage", "min": 960_197_124_096u64, "max": 7_681_511_964_672u64}]}),
    );
    m.insert(
        "hardware".into(),
        json!({"memory": 274_877_906_944u64, "cpu_cores": cores, "nics": nics, "disks": disks, "cpus": cpus, "gpus": []}),
    );
    m.insert(
        "bios".into(),
        json!({"version": pick(&mut rng, &["2.6", "2.7", "3.0a"]), "vendor": "American Megatrends Inc.", "date": "01/24/2024"}),
    );
    m.insert(
        "ipmi".into(),
        json!({
            "address": format!("10.1.{rack}.{}:623", rng.random_range(1..255)),
            "mac": mac(&mut rng),
            "user": "metal",
            "password": "",
            "interface": "lanplus",
            "fru": {
                "chassis_part_number": "CSE-LA15TS-R609LPP",
                "chassis_part_serial": serial(&mut rng, "C5150LN"),
                "board_mfg": "Supermicro",
                "board_mfg_serial": serial(&mut rng, "OM"),
                "board_part_number": board,
                "product_manufacturer": "Supermicro",
                "product_part_number": format!("SYS-1015CS-{board}"),
                "product_serial": serial(&mut rng, "S"),
            },
            "bmcversion": pick(&mut rng, &["01.01.06", "01.02.04", "01.03.10"]),
            "powerstate": pick(&mut rng, &["ON", "ON", "ON", "OFF"]),
            "powermetric": {"averageconsumedwatts": rng.random_range(120..400), "intervalinmin": 60, "maxconsumedwatts": rng.random_range(400..600), "minconsumedwatts": rng.random_range(80..120)},
            "powersupplies": [{"status": {"health": "OK", "state": "Enabled"}}, {"status": {"health": "OK", "state": "Enabled"}}],
            "last_updated": "2025-06-20T12:00:00.000Z",
        }),
    );
    m.insert("allocation".into(), allocation);
    m.insert(
        "state".into(),
        json!({"value": "", "description": "", "issuer": "", "metal_hammer_version": pick(&mut rng, &["v0.13.2", "v0.14.1"])}),
    );
    m.insert(
        "ledstate".into(),
        json!({"value": "LED-OFF", "description": ""}),
    );
    m.insert("tags".into(), json!(tags));
    m
}
