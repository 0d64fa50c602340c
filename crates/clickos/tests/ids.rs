//! SnortIDS end to end: `clickos run` reads a pcap written here, a rules
//! FILE, writes alert lines to the console and ALERT_FILE, and sends the
//! passed and dropped packets to two ToDump files.

mod common;
use common::*;

fn frame(
    src: [u8; 4],
    dst: [u8; 4],
    proto: u8,
    sp: u16,
    dp: u16,
    flags: u8,
    payload: &[u8],
) -> Vec<u8> {
    let l4: Vec<u8> = match proto {
        6 => {
            let mut h = vec![0u8; 20];
            h[0..2].copy_from_slice(&sp.to_be_bytes());
            h[2..4].copy_from_slice(&dp.to_be_bytes());
            h[12] = 5 << 4;
            h[13] = flags;
            h
        }
        17 => {
            let mut h = vec![0u8; 8];
            h[0..2].copy_from_slice(&sp.to_be_bytes());
            h[2..4].copy_from_slice(&dp.to_be_bytes());
            h[4..6].copy_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
            h
        }
        _ => vec![8, 0, 0, 0, 0, 1, 0, 1],
    };
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    let total = 20 + l4.len() + payload.len();
    let mut ip = vec![0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    ip[8] = 64;
    ip[9] = proto;
    ip[12..16].copy_from_slice(&src);
    ip[16..20].copy_from_slice(&dst);
    let c = click::wire::checksum::ip_checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&l4);
    f.extend_from_slice(payload);
    f
}

fn records(path: &std::path::Path) -> Vec<Vec<u8>> {
    let mut r = click_pcap::PcapReader::open(path).unwrap();
    let mut v = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        v.push(rec.data);
    }
    v
}

#[test]
fn snortids_on_a_pcap() {
    let dir = tmpdir("ids");
    let client = [10, 1, 1, 5];
    let server = [192, 168, 7, 80];
    let pkts = [
        // 0: handshake, no alert
        frame(client, server, 6, 40001, 80, 0x02, b""),
        // 1: a request for /etc/passwd: alert (to_server, established)
        frame(
            client,
            server,
            6,
            40001,
            80,
            0x18,
            b"GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n",
        ),
        // 2: the same from the server side: flow:to_server does not hold
        frame(server, client, 6, 80, 40001, 0x18, b"GET /../../etc/passwd"),
        // 3: shellcode-ish bytes: drop
        frame(
            client,
            server,
            6,
            40001,
            80,
            0x18,
            b"AAAA\x90\x90\x90\x90\xcc\xccBBBB",
        ),
        // 4: DNS query for a bad domain: pcre, alert
        frame(
            client,
            [8, 8, 8, 8],
            17,
            5353,
            53,
            0,
            b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x04EVIL\x07example\x03com\x00",
        ),
        // 5: ping: alert
        frame(client, server, 1, 0, 0, 0, b"ping-data"),
        // 6: from the trusted host: pass rule wins over the drop rule
        frame(
            [10, 1, 1, 9],
            server,
            6,
            40002,
            80,
            0x18,
            b"\x90\x90\x90\x90\xcc\xcc",
        ),
        // 7: a cut IP header (malformed, passed)
        {
            let mut f = frame(client, server, 6, 40001, 80, 0x18, b"x");
            f.truncate(14 + 12);
            f
        },
    ];
    let input = dir.join("in.pcap");
    {
        let mut w =
            click_pcap::PcapWriter::create(&input, click_pcap::WriterOptions::default()).unwrap();
        for (i, p) in pkts.iter().enumerate() {
            w.write_packet(1_700_000_000 + i as i64, 250_000_000, p.len() as u32, p)
                .unwrap();
        }
        w.flush().unwrap();
    }
    let rules = dir.join("local.rules");
    std::fs::write(
        &rules,
        "# local rules\n\
         ipvar HOME_NET 192.168.0.0/16\n\
         alert tcp !$HOME_NET any -> $HOME_NET 80 (msg:\"WEB passwd access\"; flow:to_server,established; content:\"/etc/passwd\", nocase; classtype:attempted-recon; sid:1000001; rev:2;)\n\
         drop tcp any any -> $HOME_NET any (msg:\"NOP sled\"; content:\"|90 90 90 90|\"; content:\"|cc cc|\", distance 0, within 2; classtype:shellcode-detect; sid:1000002;)\n\
         pass tcp 10.1.1.9 any -> any any (content:\"|90|\"; sid:1000003;)\n\
         alert udp any any -> any 53 (msg:\"DNS evil domain\"; pcre:\"/\\x04evil\\x07example/i\"; sid:1000004;)\n\
         alert icmp any any -> $HOME_NET any (msg:\"ICMP to home\"; priority:3; sid:1000005;)\n",
    )
    .unwrap();
    let alerts = dir.join("alerts.txt");
    let pass = dir.join("pass.pcap");
    let drop = dir.join("drop.pcap");
    let cfg = format!(
        "FromDump({}, STOP true) -> MarkIPHeader(14) -> ids :: SnortIDS(FILE {}, ALERT_FILE {});\n\
         ids[0] -> ToDump({});\n\
         ids[1] -> ToDump({});",
        input.display(),
        rules.display(),
        alerts.display(),
        pass.display(),
        drop.display()
    );
    let r = click(&[
        "-e",
        &cfg,
        "-h",
        "ids.count",
        "-h",
        "ids.drops",
        "-h",
        "ids.alerts_total",
        "-h",
        "ids.malformed",
        "-h",
        "ids.passed",
        "-h",
        "ids.stats",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let want_alerts = "11/14-22:13:21.250000  [**] [1:1000001:2] WEB passwd access [**] [Classification: Attempted Information Leak] [Priority: 2] {TCP} 10.1.1.5:40001 -> 192.168.7.80:80\n\
11/14-22:13:23.250000  [**] [1:1000002:1] NOP sled [**] [Classification: Executable Code was Detected] [Priority: 1] {TCP} 10.1.1.5:40001 -> 192.168.7.80:80\n\
11/14-22:13:24.250000  [**] [1:1000004:1] DNS evil domain [**] [Priority: 0] {UDP} 10.1.1.5:5353 -> 8.8.8.8:53\n\
11/14-22:13:25.250000  [**] [1:1000005:1] ICMP to home [**] [Priority: 3] {ICMP} 10.1.1.5 -> 192.168.7.80\n";
    assert_eq!(std::fs::read_to_string(&alerts).unwrap(), want_alerts);
    assert_eq!(r.err, want_alerts, "console alert lines");
    assert_eq!(
        r.out,
        "ids.count:\n8\n\nids.drops:\n1\n\nids.alerts_total:\n4\n\nids.malformed:\n1\n\nids.passed:\n1\n\n\
ids.stats:\n1:1000001:2 alert matches 1 events 1\n1:1000002:1 drop matches 2 events 1\n1:1000003:1 pass matches 1 events 1\n\
1:1000004:1 alert matches 1 events 1\n1:1000005:1 alert matches 1 events 1\n\n"
    );
    let passed = records(&pass);
    let dropped = records(&drop);
    let want_pass: Vec<Vec<u8>> = [0, 1, 2, 4, 5, 6, 7]
        .iter()
        .map(|&i| pkts[i].clone())
        .collect();
    assert_eq!(passed, want_pass);
    assert_eq!(dropped, vec![pkts[3].clone()]);
}
