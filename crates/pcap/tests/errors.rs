//! Specific malformed inputs and the errors they produce.

mod common;

use click_pcap::{linktype, Error, Format, PcapReader};
use common::*;

fn pad4(mut v: Vec<u8>) -> Vec<u8> {
    while v.len() & 3 != 0 {
        v.push(0);
    }
    v
}

fn block(big: bool, btype: u32, body: &[u8]) -> Vec<u8> {
    let body = pad4(body.to_vec());
    let total = (12 + body.len()) as u32;
    let enc = |x: u32| {
        if big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        }
    };
    let mut v = enc(btype).to_vec();
    v.extend_from_slice(&enc(total));
    v.extend_from_slice(&body);
    v.extend_from_slice(&enc(total));
    v
}

fn shb(big: bool, major: u16) -> Vec<u8> {
    let mut b = Vec::new();
    if big {
        b.extend_from_slice(&0x1a2b_3c4du32.to_be_bytes());
        b.extend_from_slice(&major.to_be_bytes());
        b.extend_from_slice(&0u16.to_be_bytes());
        b.extend_from_slice(&(-1i64).to_be_bytes());
    } else {
        b.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
        b.extend_from_slice(&major.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&(-1i64).to_le_bytes());
    }
    block(big, 0x0a0d_0d0a, &b)
}

fn idb(lt: u16, snaplen: u32, opts: &[(u16, &[u8])]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&lt.to_le_bytes());
    b.extend_from_slice(&0u16.to_le_bytes());
    b.extend_from_slice(&snaplen.to_le_bytes());
    for (code, val) in opts {
        b.extend_from_slice(&code.to_le_bytes());
        b.extend_from_slice(&(val.len() as u16).to_le_bytes());
        b = pad4([b, val.to_vec()].concat());
    }
    if !opts.is_empty() {
        b.extend_from_slice(&[0, 0, 0, 0]);
    }
    block(false, 1, &b)
}

fn epb(ifid: u32, units: u64, data: &[u8], orig: u32) -> Vec<u8> {
    let mut b = Vec::new();
    for x in [
        ifid,
        (units >> 32) as u32,
        units as u32,
        data.len() as u32,
        orig,
    ] {
        b.extend_from_slice(&x.to_le_bytes());
    }
    b.extend_from_slice(data);
    block(false, 6, &b)
}

fn first_error(bytes: &[u8]) -> Error {
    let (_, e) = read_all(bytes);
    e.expect("an error")
}

#[test]
fn bad_magic_and_empty() {
    assert!(matches!(first_error(b""), Error::Empty));
    let e = first_error(b"GIF89a........................");
    assert!(
        matches!(e, Error::BadMagic { magic } if &magic == b"GIF8"),
        "{e}"
    );
    assert!(e.to_string().contains("47494638"), "{e}");
    let e = first_error(&[0xd4, 0xc3]);
    assert!(e.is_truncated(), "{e}");
}

#[test]
fn unsupported_versions() {
    let mut v = data("udp-64.pcap");
    v[4] = 3;
    assert!(matches!(
        first_error(&v),
        Error::UnsupportedVersion { major: 3, .. }
    ));
    let v = shb(false, 2);
    assert!(matches!(
        first_error(&v),
        Error::UnsupportedVersion {
            major: 2,
            offset: 0,
            ..
        }
    ));
}

#[test]
fn modified_pcap_magic() {
    // Kuznetzov's format: 8 extra bytes per record header.
    let src = data("udp-64.pcap");
    let (want, _) = read_all(&src);
    let mut v = src[..24].to_vec();
    v[0..4].copy_from_slice(&0xa1b2_cd34u32.to_le_bytes());
    let mut off = 24;
    while off < src.len() {
        let caplen = u32::from_le_bytes(src[off + 8..off + 12].try_into().unwrap()) as usize;
        v.extend_from_slice(&src[off..off + 16]);
        v.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        v.extend_from_slice(&src[off + 16..off + 16 + caplen]);
        off += 16 + caplen;
    }
    let r = PcapReader::new(&v[..]).unwrap();
    assert!(matches!(r.format(), Format::Pcap { modified: true, .. }));
    let got: Vec<_> = r.map(Result::unwrap).collect();
    assert_eq!(got, want);
}

#[test]
fn pcapng_good_hand_built() {
    let v = [
        shb(false, 1),
        idb(101, 0, &[(9, &[0x83])]), // 2^-3 s
        epb(0, (1000 << 3) | 5, &[0x45, 0, 0, 20], 20),
        shb(true, 1),
        // a big-endian section with no interfaces, followed by EOF
    ]
    .concat();
    let (recs, err) = read_all(&v);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(recs.len(), 1);
    assert_eq!((recs[0].ts_sec, recs[0].ts_nsec), (1000, 625_000_000));
    assert_eq!(recs[0].linktype, linktype::RAW);
    assert_eq!((recs[0].caplen, recs[0].orig_len), (4, 20));
}

#[test]
fn pcapng_unknown_interface() {
    let v = [shb(false, 1), idb(1, 0, &[]), epb(1, 0, b"abcd", 4)].concat();
    let e = first_error(&v);
    let off = (shb(false, 1).len() + idb(1, 0, &[]).len()) as u64;
    assert!(
        matches!(e, Error::UnknownInterface { interface_id: 1, defined: 1, offset, record: 0 } if offset == off),
        "{e}"
    );
    // Interfaces do not survive a new section.
    let v = [
        shb(false, 1),
        idb(1, 0, &[]),
        epb(0, 0, b"ab", 2),
        shb(false, 1),
        epb(0, 0, b"ab", 2),
    ]
    .concat();
    let (recs, e) = read_all(&v);
    assert_eq!(recs.len(), 1);
    assert!(
        matches!(
            e,
            Some(Error::UnknownInterface {
                record: 1,
                defined: 0,
                ..
            })
        ),
        "{e:?}"
    );
}

#[test]
fn pcapng_malformed_blocks() {
    let base = [shb(false, 1), idb(1, 0, &[])].concat();
    let at = base.len() as u64;

    // trailer mismatch
    let mut b = epb(0, 0, b"abcd", 4);
    let n = b.len();
    b[n - 4] ^= 0x40;
    let e = first_error(&[base.clone(), b].concat());
    assert!(
        matches!(&e, Error::Malformed { offset, .. } if *offset == at),
        "{e}"
    );
    assert!(e.to_string().contains("trailer"), "{e}");

    // length not a multiple of 4
    let mut b = epb(0, 0, b"abcd", 4);
    b[4] += 1;
    let e = first_error(&[base.clone(), b].concat());
    assert!(matches!(e, Error::Malformed { .. }), "{e}");

    // caplen bigger than the block
    let mut b = epb(0, 0, b"abcd", 4);
    b[20..24].copy_from_slice(&100u32.to_le_bytes());
    let e = first_error(&[base.clone(), b].concat());
    assert!(e.to_string().contains("does not fit"), "{e}");

    // bad tsresol
    let v = [shb(false, 1), idb(1, 0, &[(9, &[20])])].concat();
    assert!(first_error(&v).to_string().contains("if_tsresol"));
    let v = [shb(false, 1), idb(1, 0, &[(9, &[0x80 | 64])])].concat();
    assert!(first_error(&v).to_string().contains("if_tsresol"));

    // option running past the end of the IDB
    let mut b = idb(1, 0, &[(2, b"eth0")]);
    b[18..20].copy_from_slice(&200u16.to_le_bytes());
    let e = first_error(&[shb(false, 1), b].concat());
    assert!(e.to_string().contains("runs past"), "{e}");

    // bad byte-order magic in a later section
    let mut s = shb(false, 1);
    s[8] = 0;
    let e = first_error(&[base.clone(), s].concat());
    assert!(e.to_string().contains("byte-order magic"), "{e}");

    // block shorter than its fixed part
    let e = first_error(&[base.clone(), block(false, 6, &[0; 8])].concat());
    assert!(matches!(e, Error::Malformed { .. }), "{e}");
}

#[test]
fn spb_respects_snaplen() {
    let mut body = 1000u32.to_le_bytes().to_vec();
    body.extend_from_slice(&[7u8; 64]);
    let v = [shb(false, 1), idb(1, 16, &[]), block(false, 3, &body)].concat();
    let (recs, err) = read_all(&v);
    assert!(err.is_none(), "{err:?}");
    assert_eq!((recs[0].caplen, recs[0].orig_len), (16, 1000));
    assert_eq!((recs[0].ts_sec, recs[0].ts_nsec), (0, 0));
}

#[test]
fn set_max_record_len() {
    let bytes = data("mixed.pcap");
    let mut r = PcapReader::new(&bytes[..]).unwrap();
    r.set_max_record_len(100);
    let mut buf = Vec::new();
    let mut n = 0;
    let e = loop {
        match r.next_into(&mut buf) {
            Ok(Some(_)) => n += 1,
            Ok(None) => panic!("expected an error"),
            Err(e) => break e,
        }
    };
    assert_eq!(n, 40, "record 40 (1514 bytes) is the first longer than 100");
    assert!(
        matches!(
            e,
            Error::TooLarge {
                record: 40,
                len: 1514,
                limit: 100,
                ..
            }
        ),
        "{e}"
    );
}
