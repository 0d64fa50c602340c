//! PPPoEServer: discovery, LCP and IPCP exchanges byte for byte, the data
//! path's checks both ways, timers, and malformed frames.

mod common;
mod frames;

use common::*;
use frames::{echo, eth, hex, Ip};

const S: [u8; 6] = [0x02, 0, 0, 0, 0, 0xfe];
const C: [u8; 6] = [0x52, 0x54, 0, 0, 0, 0x01];
const OTHER: [u8; 6] = [0x52, 0x54, 0, 0, 0, 0x02];

fn config(extra: &str) -> String {
    format!(
        "Idle -> [0]s :: PPPoEServer(ETH 02:00:00:00:00:fe, LOCAL 100.64.0.1, POOL 100.64.0.0/29, AC_NAME ac{extra});
         Idle -> [1]s;
         s[0] -> out :: Collect; s[1] -> up :: Collect; s[2] -> none :: Collect;"
    )
}

fn h(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A PPPoE frame from `src` to `dst`.
fn pppoe(dst: [u8; 6], src: [u8; 6], ty: u16, code: u8, sid: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = vec![0x11, code];
    v.extend_from_slice(&sid.to_be_bytes());
    v.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    v.extend_from_slice(payload);
    eth(dst, src, ty, &v)
}

/// A PPP frame of `proto` in session `sid` from the client.
fn ppp(sid: u16, proto: u16, body: &[u8]) -> Vec<u8> {
    let mut v = proto.to_be_bytes().to_vec();
    v.extend_from_slice(body);
    pppoe(S, C, 0x8864, 0, sid, &v)
}

fn cp(code: u8, id: u8, data: &[u8]) -> Vec<u8> {
    let mut v = vec![code, id];
    v.extend_from_slice(&((data.len() + 4) as u16).to_be_bytes());
    v.extend_from_slice(data);
    v
}

fn out() -> Vec<Vec<u8>> {
    let v = collected_data("out");
    clear_collected();
    v
}

const PADI: &str = "0101 0000 0103 0004 deadbeef";

/// Brings session 1 up: discovery, LCP both ways, IPCP with a Reject, a
/// Nak and an Ack. Returns the router and our LCP magic number.
fn open_session(r: &TestRouter) -> [u8; 4] {
    clear_collected();
    r.inject("s", 0, &[pppoe([0xff; 6], C, 0x8863, 0x09, 0, &h(PADI))]);
    let o = out();
    assert_eq!(o.len(), 1);
    // PADO: AC-Name "ac", the Service-Name asked for, Host-Uniq echoed
    assert_eq!(
        hex(&o[0]),
        hex(&h("525400000001 0200000000fe 8863 1107 0000 0012
                0102 0002 6163  0101 0000  0103 0004 deadbeef"))
    );
    r.inject("s", 0, &[pppoe(S, C, 0x8863, 0x19, 0, &h(PADI))]);
    let o = out();
    assert_eq!(
        hex(&o[0]),
        hex(&h("525400000001 0200000000fe 8863 1165 0001 000c
                0101 0000  0103 0004 deadbeef"))
    );
    assert_eq!(r.read("s.count"), "1");
    assert!(r
        .read("s.sessions")
        .starts_with("1 52:54:00:00:00:01 100.64.0.2 lcp up 0 0 down 0 0 uptime"));

    // the client's LCP Configure-Request: we send ours, then Ack theirs
    r.inject(
        "s",
        0,
        &[ppp(1, 0xc021, &cp(1, 1, &h("0104 05d4 0506 11223344")))],
    );
    let o = out();
    assert_eq!(o.len(), 2);
    let magic: [u8; 4] = o[0][32..36].try_into().unwrap();
    assert_eq!(
        hex(&o[0]),
        hex(&h(&format!(
            "525400000001 0200000000fe 8864 1100 0001 0010 c021 0101 000e 0104 05d4 0506 {}",
            hex(&magic)
        )))
    );
    assert_eq!(
        hex(&o[1]),
        hex(&h("525400000001 0200000000fe 8864 1100 0001 0010
                c021 0201 000e 0104 05d4 0506 11223344"))
    );
    // the client acks ours: LCP is open, IPCP starts with our address
    let mut ack = h("0104 05d4 0506");
    ack.extend_from_slice(&magic);
    r.inject("s", 0, &[ppp(1, 0xc021, &cp(2, 1, &ack))]);
    let o = out();
    assert_eq!(
        hex(&o[0]),
        hex(&h("525400000001 0200000000fe 8864 1100 0001 000c
                8021 0101 000a 0306 64400001"))
    );
    assert!(r.read("s.sessions").contains(" ipcp "));

    // VJ compression is rejected, alone
    r.inject(
        "s",
        0,
        &[ppp(
            1,
            0x8021,
            &cp(1, 1, &h("0206 002d 0f01 0306 00000000")),
        )],
    );
    assert_eq!(
        hex(&out()[0]),
        hex(&h("525400000001 0200000000fe 8864 1100 0001 000c
                8021 0401 000a 0206 002d 0f01"))
    );
    // 0.0.0.0: Nak with the pool's first free address
    r.inject("s", 0, &[ppp(1, 0x8021, &cp(1, 2, &h("0306 00000000")))]);
    assert_eq!(
        hex(&out()[0]),
        hex(&h("525400000001 0200000000fe 8864 1100 0001 000c
                8021 0302 000a 0306 64400002"))
    );
    r.inject("s", 0, &[ppp(1, 0x8021, &cp(1, 3, &h("0306 64400002")))]);
    assert_eq!(
        hex(&out()[0]),
        hex(&h("525400000001 0200000000fe 8864 1100 0001 000c
                8021 0203 000a 0306 64400002"))
    );
    r.inject("s", 0, &[ppp(1, 0x8021, &cp(2, 1, &h("0306 64400001")))]);
    assert!(out().is_empty());
    assert!(r.read("s.sessions").contains(" open "));
    magic
}

#[test]
fn discovery_lcp_ipcp_exchanges() {
    let r = router(&config(", COOKIE false"));
    let magic = open_session(&r);

    // Echo-Request: Echo-Reply with our magic and the data echoed
    r.inject("s", 0, &[ppp(1, 0xc021, &cp(9, 7, &h("11223344 cafe")))]);
    assert_eq!(
        hex(&out()[0]),
        hex(&h(&format!(
            "525400000001 0200000000fe 8864 1100 0001 000c c021 0a07 000a {} cafe",
            hex(&magic)
        )))
    );
    // an unknown LCP code: Code-Reject carrying it
    r.inject("s", 0, &[ppp(1, 0xc021, &cp(42, 3, &h("00")))]);
    let o = out();
    assert_eq!(hex(&o[0][20..23]), "c02107");
    assert_eq!(hex(&o[0][26..]), hex(&h("2a03 0005 00")));

    // LCP Terminate-Request: Terminate-Ack, then the client's PADT ends it
    r.inject("s", 0, &[ppp(1, 0xc021, &cp(5, 9, &[]))]);
    assert_eq!(
        hex(&out()[0]),
        hex(&h(
            "525400000001 0200000000fe 8864 1100 0001 0006 c021 0609 0004"
        ))
    );
    assert!(r.read("s.sessions").contains(" closing "));
    // a PADT from another MAC is refused
    r.inject("s", 0, &[pppoe(S, OTHER, 0x8863, 0xa7, 1, &[])]);
    assert_eq!(r.read("s.count"), "1");
    assert_eq!(r.read("s.bad_mac"), "1");
    r.inject("s", 0, &[pppoe(S, C, 0x8863, 0xa7, 1, &[])]);
    assert_eq!(r.read("s.count"), "0");
    assert_eq!(r.read("s.sessions"), "");
    assert_eq!(r.read("s.padt_in"), "2");
    // the address went back to the pool
    r.inject("s", 0, &[pppoe(S, C, 0x8863, 0x19, 0, &h(PADI))]);
    assert!(r
        .read("s.sessions")
        .starts_with("2 52:54:00:00:00:01 100.64.0.2 lcp"));
}

#[test]
fn lcp_naks_and_rejects() {
    let r = router(&config(", COOKIE false"));
    r.inject("s", 0, &[pppoe(S, C, 0x8863, 0x19, 0, &h(PADI))]);
    clear_collected();
    // MRU over ours: Nak with 1492; ACCM and PFC: Rejected first
    r.inject(
        "s",
        0,
        &[ppp(
            1,
            0xc021,
            &cp(1, 1, &h("0104 05dc 0206 00000000 0702 0506 11223344")),
        )],
    );
    let o = out();
    assert_eq!(o.len(), 2);
    assert_eq!(
        hex(&o[1][20..]),
        hex(&h("c021 0401 000c 0206 00000000 0702"))
    );
    r.inject(
        "s",
        0,
        &[ppp(1, 0xc021, &cp(1, 2, &h("0104 05dc 0506 11223344")))],
    );
    assert_eq!(hex(&out()[0][20..]), hex(&h("c021 0302 0008 0104 05d4")));
    // the client rejects our MRU: we ask again without it
    r.inject("s", 0, &[ppp(1, 0xc021, &cp(4, 1, &h("0104 05d4")))]);
    let o = out();
    assert_eq!(hex(&o[0][20..26]), hex(&h("c021 0102 000a")));
    assert_eq!(o[0][26], 5);
    // Authentication-Protocol (PAP) is not something we do: rejected
    r.inject("s", 0, &[ppp(1, 0xc021, &cp(1, 3, &h("0304 c023")))]);
    assert_eq!(hex(&out()[0][20..]), hex(&h("c021 0403 0008 0304 c023")));
    // IPCP before LCP is open: dropped
    r.inject("s", 0, &[ppp(1, 0x8021, &cp(1, 1, &h("0306 00000000")))]);
    assert!(out().is_empty());
    assert_eq!(r.read("s.bad_protocol"), "1");
}

#[test]
fn data_path_both_ways() {
    let r = router(&config(", COOKIE false"));
    open_session(&r);
    let ipu = Ip::new([100, 64, 0, 2], [192, 0, 2, 2], 1, &echo(1, 1, b"hello")).bytes();
    // upstream, with Ethernet padding after the PPPoE payload
    let mut f = ppp(1, 0x0021, &ipu);
    f.extend_from_slice(&[0xee; 12]);
    r.inject("s", 0, &[f]);
    let up = collected("up");
    assert_eq!(up.len(), 1);
    assert_eq!(up[0].data, ipu);
    assert_eq!(up[0].network_header_offset, Some(0));
    // downstream: encapsulated to the client
    let ipd = Ip::new([192, 0, 2, 2], [100, 64, 0, 2], 1, &echo(1, 1, b"hello")).bytes();
    clear_collected();
    r.inject("s", 1, std::slice::from_ref(&ipd));
    let o = out();
    let mut want = h("525400000001 0200000000fe 8864 1100 0001");
    want.extend_from_slice(&((ipd.len() + 2) as u16).to_be_bytes());
    want.extend_from_slice(&[0x00, 0x21]);
    want.extend_from_slice(&ipd);
    assert_eq!(hex(&o[0]), hex(&want));
    // downstream for nobody: output 2
    let ipx = Ip::new([192, 0, 2, 2], [100, 64, 0, 3], 1, &echo(1, 1, b"x")).bytes();
    r.inject("s", 1, std::slice::from_ref(&ipx));
    assert_eq!(collected_data("none"), vec![ipx]);
    // too big for the MRU
    let big = Ip::new([192, 0, 2, 2], [100, 64, 0, 2], 17, &vec![0u8; 1480]).bytes();
    r.inject("s", 1, &[big]);
    assert_eq!(r.read("s.too_big"), "1");
    let s = r.read("s.sessions");
    assert!(
        s.contains(&format!(
            " open up 1 {} down 1 {} uptime",
            ipu.len(),
            ipd.len()
        )),
        "{s}"
    );

    // the checks: wrong session, wrong MAC, bad length, unknown protocol,
    // spoofed source
    clear_collected();
    r.inject("s", 0, &[ppp(9, 0x0021, &ipu)]);
    let mut f = ppp(1, 0x0021, &ipu);
    f[6..12].copy_from_slice(&OTHER);
    r.inject("s", 0, &[f]);
    let mut f = ppp(1, 0x0021, &ipu);
    f[18..20].copy_from_slice(&2000u16.to_be_bytes());
    r.inject("s", 0, &[f]);
    r.inject("s", 0, &[ppp(1, 0x0057, &[0x60, 0, 0, 0])]);
    let spoof = Ip::new([100, 64, 0, 5], [192, 0, 2, 2], 1, &echo(1, 1, b"x")).bytes();
    r.inject("s", 0, &[ppp(1, 0x0021, &spoof)]);
    assert!(collected("up").is_empty());
    let stats = r.read("s.stats");
    for l in [
        "bad_session 1",
        "bad_mac 1",
        "bad_length 1",
        "bad_protocol 1",
        "spoofed 1",
        "no_session 1",
    ] {
        assert!(stats.contains(l), "{l} in {stats}");
    }
    // IPv6 got a Protocol-Reject: LCP code 8, the protocol, the packet
    let o = out();
    assert_eq!(o.len(), 1);
    assert_eq!(hex(&o[0][20..23]), "c02108");
    assert_eq!(hex(&o[0][26..]), hex(&h("0057 60000000")));
}

#[test]
fn cookie_and_service_name() {
    let r = router(&config(", SERVICE_NAME internet"));
    clear_collected();
    // asking for another service: no PADO
    r.inject(
        "s",
        0,
        &[pppoe([0xff; 6], C, 0x8863, 0x09, 0, &h("0101 0003 787878"))],
    );
    assert!(out().is_empty());
    assert_eq!(r.read("s.bad_service"), "1");
    // any service: PADO names ours and carries a 16-byte cookie
    r.inject(
        "s",
        0,
        &[pppoe([0xff; 6], C, 0x8863, 0x09, 0, &h("0101 0000"))],
    );
    let o = out();
    let tags = &o[0][20..];
    assert_eq!(
        hex(&tags[..22]),
        hex(&h("0102 0002 6163 0101 0000 0101 0008 696e7465726e6574"))
    );
    assert_eq!(hex(&tags[22..26]), "01040010");
    let cookie = tags[26..42].to_vec();
    // PADR without the cookie, or with another: ignored
    r.inject("s", 0, &[pppoe(S, C, 0x8863, 0x19, 0, &h("0101 0000"))]);
    let mut bad = h("0101 0000 0104 0010");
    bad.extend_from_slice(&[0u8; 16]);
    r.inject("s", 0, &[pppoe(S, C, 0x8863, 0x19, 0, &bad)]);
    // the cookie is per MAC
    let mut good = h("0101 0000 0104 0010");
    good.extend_from_slice(&cookie);
    r.inject("s", 0, &[pppoe(S, OTHER, 0x8863, 0x19, 0, &good)]);
    assert!(out().is_empty());
    assert_eq!(r.read("s.bad_cookie"), "3");
    r.inject("s", 0, &[pppoe(S, C, 0x8863, 0x19, 0, &good)]);
    let o = out();
    assert_eq!(hex(&o[0][14..20]), "116500010004");
    // a PADR for another service: PADS with session 0 and an error
    let mut other = h("0101 0003 787878 0104 0010");
    other.extend_from_slice(&cookie);
    r.inject("s", 0, &[pppoe(S, C, 0x8863, 0x19, 0, &other)]);
    assert_eq!(r.read("s.bad_service"), "2");
    let o = out();
    assert_eq!(hex(&o[0][14..20]), "11650000001a");
    assert_eq!(
        hex(&o[0][27..]),
        hex(&h("0201 000f 756e6b6e6f776e2073657276696365"))
    );
}

#[test]
fn pool_exhaustion_refuses() {
    // /29 without network, broadcast and LOCAL: 5 addresses
    let r = router(&config(", COOKIE false"));
    for _ in 0..6 {
        r.inject("s", 0, &[pppoe(S, C, 0x8863, 0x19, 0, &h(PADI))]);
    }
    let o = out();
    assert_eq!(o.len(), 6);
    assert_eq!(hex(&o[5][14..18]), "11650000");
    assert!(hex(&o[5]).contains("0202"));
    assert_eq!(r.read("s.count"), "5");
    assert_eq!(r.read("s.refused"), "1");
    r.write("s.kill", "3").unwrap();
    assert_eq!(r.read("s.count"), "4");
    assert!(r.write("s.kill", "3").is_err());
    assert!(r.write("s.kill", "x").is_err());
    let o = out();
    assert_eq!(hex(&o[0][12..18]), "886311a70003");
}

#[test]
fn retransmits_then_gives_up() {
    let r = router(&config(", COOKIE false"));
    r.inject("s", 0, &[pppoe(S, C, 0x8863, 0x19, 0, &h(PADI))]);
    clear_collected();
    // the client never speaks: our Configure-Request every 3 s, then PADT
    r.run();
    let o = out();
    let reqs = o.iter().filter(|f| f[12..14] == [0x88, 0x64]).count();
    assert_eq!(reqs, 11);
    assert_eq!(hex(&o.last().unwrap()[12..18]), "886311a70001");
    assert_eq!(r.read("s.count"), "0");
}

#[test]
fn malformed_frames_never_panic() {
    let r = router(&config(", COOKIE false"));
    open_session(&r);
    let ipu = Ip::new([100, 64, 0, 2], [192, 0, 2, 2], 1, &echo(1, 1, b"hello")).bytes();
    let valid = [
        pppoe([0xff; 6], C, 0x8863, 0x09, 0, &h(PADI)),
        pppoe(S, C, 0x8863, 0x19, 0, &h(PADI)),
        pppoe(S, C, 0x8863, 0xa7, 7, &[]),
        ppp(1, 0x0021, &ipu),
        ppp(1, 0xc021, &cp(1, 1, &h("0104 05d4 0506 11223344"))),
        ppp(1, 0xc021, &cp(9, 7, &h("11223344 cafe"))),
        ppp(1, 0x8021, &cp(1, 3, &h("0306 64400002"))),
        ppp(1, 0x8021, &cp(2, 1, &h("0306 64400001"))),
    ];
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for f in &valid {
        // every truncation
        for n in 0..f.len() {
            r.inject("s", 0, &[f[..n].to_vec()]);
        }
        // random corruption of bytes past the MAC addresses
        for _ in 0..300 {
            let mut g = f.clone();
            for _ in 0..1 + next() % 4 {
                let i = 12 + (next() as usize) % (g.len() - 12);
                g[i] = next() as u8;
            }
            r.inject("s", 0, &[g]);
        }
    }
    // random bytes, both inputs
    for _ in 0..2000 {
        let n = (next() % 80) as usize;
        let mut g: Vec<u8> = (0..n).map(|_| next() as u8).collect();
        if n > 14 && next() % 2 == 0 {
            g[12..14].copy_from_slice(&[0x88, 0x63 + (next() % 2) as u8]);
            g[14] = 0x11;
        }
        r.inject("s", 0, &[g.clone()]);
        r.inject("s", 1, &[g]);
    }
    let _ = r.read("s.sessions");
    let _ = r.read("s.stats");
}
