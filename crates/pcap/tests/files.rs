//! The reader against the committed corpus in tests/data (see manifest.tsv).

mod common;

use click_pcap::{linktype, Format, PcapReader, Record};
use common::*;

#[test]
fn every_file_matches_manifest() {
    let manifest = manifest();
    for name in FILES {
        let expected = manifest
            .get(*name)
            .unwrap_or_else(|| panic!("{name} missing from manifest"));
        let mut r = PcapReader::open(data_dir().join(name)).unwrap();
        let mut buf = Vec::new();
        let mut i = 0;
        while let Some(meta) = r.next_into(&mut buf).unwrap() {
            let e = &expected[i];
            let ctx = format!("{name} record {i} ({})", e.desc);
            assert_eq!(meta.ts_sec, e.ts_sec, "{ctx}");
            assert_eq!(meta.ts_nsec, e.ts_nsec, "{ctx}");
            assert_eq!(meta.caplen, e.caplen, "{ctx}");
            assert_eq!(buf.len(), e.caplen as usize, "{ctx}");
            assert_eq!(meta.orig_len, e.orig_len, "{ctx}");
            assert_eq!(meta.linktype, e.linktype, "{ctx}");
            assert_eq!(crc32(&buf), e.crc, "{ctx}");
            i += 1;
        }
        assert_eq!(i, expected.len(), "{name}: record count");
        assert_eq!(r.records_read(), expected.len() as u64);
        assert_eq!(r.offset(), data(name).len() as u64, "{name}: consumed all");
        // Fused after EOF.
        assert!(r.next_into(&mut buf).unwrap().is_none());
    }
}

#[test]
fn expected_counts_and_formats() {
    let cases: &[(&str, usize, Format, Option<u32>)] = &[
        (
            "udp-64.pcap",
            20,
            classic(false, false),
            Some(linktype::EN10MB),
        ),
        (
            "mixed.pcap",
            52,
            classic(false, false),
            Some(linktype::EN10MB),
        ),
        ("mixed.pcapng", 52, Format::PcapNg, None),
        (
            "nanosec.pcap",
            5,
            classic(true, false),
            Some(linktype::EN10MB),
        ),
        (
            "bigendian.pcap",
            5,
            classic(false, true),
            Some(linktype::EN10MB),
        ),
        (
            "router-in.pcap",
            30,
            classic(false, false),
            Some(linktype::EN10MB),
        ),
        ("raw.pcap", 3, classic(false, false), Some(linktype::RAW)),
        (
            "sll.pcap",
            3,
            classic(false, false),
            Some(linktype::LINUX_SLL),
        ),
        ("null.pcap", 3, classic(false, false), Some(linktype::NULL)),
        ("multi.pcapng", 7, Format::PcapNg, None),
    ];
    for &(name, count, format, lt) in cases {
        let r = PcapReader::open(data_dir().join(name)).unwrap();
        assert_eq!(r.format(), format, "{name}");
        assert_eq!(r.linktype(), lt, "{name}");
        let recs: Vec<Record> = r.map(Result::unwrap).collect();
        assert_eq!(recs.len(), count, "{name}");
    }
}

fn classic(nanosecond: bool, big_endian: bool) -> Format {
    Format::Pcap {
        nanosecond,
        big_endian,
        modified: false,
    }
}

#[test]
fn udp64_contents() {
    let recs: Vec<Record> = PcapReader::open(data_dir().join("udp-64.pcap"))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut last = None;
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(r.data.len(), 64);
        assert_eq!(r.orig_len, 64);
        assert_eq!(&r.data[12..14], &[0x08, 0x00]);
        assert_eq!(&r.data[26..30], &[10, 0, 0, 1]);
        assert_eq!(&r.data[30..34], &[10, 0, 0, 2]);
        assert_eq!(&r.data[34..38], &[0x04, 0xd2, 0x16, 0x2e]); // 1234 -> 5678
        assert_eq!(&r.data[42..46], &(i as u32).to_be_bytes());
        let t = r.meta().timestamp_nanos();
        assert!(last.is_none_or(|l| t > l), "timestamps increase");
        last = Some(t);
    }
}

#[test]
fn mixed_pcap_and_pcapng_agree() {
    let a: Vec<Record> = PcapReader::new(&data("mixed.pcap")[..])
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let b: Vec<Record> = PcapReader::new(&data("mixed.pcapng")[..])
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(a, b);
    // A few landmarks described in tests/data/README.md.
    assert_eq!(a[32].data.len(), 10, "runt frame");
    assert_eq!(a[40].data.len(), 1514, "full-size frame");
    assert_eq!((a[51].caplen, a[51].orig_len), (96, 1000), "snapped record");
    assert!(a[51].meta().is_snapped());
}

#[test]
fn multi_pcapng_interfaces() {
    let recs: Vec<Record> = PcapReader::open(data_dir().join("multi.pcapng"))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let ifs: Vec<(u32, u32)> = recs.iter().map(|r| (r.interface_id, r.linktype)).collect();
    assert_eq!(
        ifs,
        vec![
            (0, linktype::EN10MB),
            (1, linktype::RAW),
            (0, linktype::EN10MB),
            (0, linktype::EN10MB),
            (0, linktype::LINUX_SLL),
            (1, linktype::EN10MB),
            (0, linktype::LINUX_SLL),
        ]
    );
}

/// A reader that hands out at most `n` bytes per read call.
struct Dribble<'a> {
    data: &'a [u8],
    n: usize,
}

impl std::io::Read for Dribble<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.n.min(buf.len()).min(self.data.len());
        buf[..k].copy_from_slice(&self.data[..k]);
        self.data = &self.data[k..];
        Ok(k)
    }
}

#[test]
fn short_reads_give_same_result() {
    for name in FILES {
        let bytes = data(name);
        let (want, err) = read_all(&bytes);
        assert!(err.is_none());
        for n in [1, 3, 7] {
            let got: Vec<Record> = PcapReader::new(Dribble { data: &bytes, n })
                .unwrap()
                .map(Result::unwrap)
                .collect();
            assert_eq!(got, want, "{name} with {n}-byte reads");
        }
    }
}

/// `next_borrowed` (records lent from the reader's buffer where they lie
/// whole) gives what the copying path gives, for every file, whatever
/// the size of the source's reads, with the offset and count in step.
#[test]
fn next_borrowed_matches() {
    for name in FILES {
        let bytes = data(name);
        let (want, _) = read_all(&bytes);
        for n in [1, 7, 1000, usize::MAX] {
            let mut r = PcapReader::new(Dribble { data: &bytes, n }).unwrap();
            let mut i = 0;
            while let Some((meta, d)) = r.next_borrowed().unwrap() {
                assert_eq!(meta, want[i].meta(), "{name} record {i}, {n}-byte reads");
                assert_eq!(d, &want[i].data[..], "{name} record {i}, {n}-byte reads");
                i += 1;
                assert_eq!(r.records_read(), i as u64);
            }
            assert_eq!(i, want.len(), "{name}, {n}-byte reads");
            assert_eq!(r.offset(), bytes.len() as u64, "{name}: consumed all");
            assert!(r.next_borrowed().unwrap().is_none());
        }
    }
}

/// A classic file cut anywhere: `next_borrowed` yields the records that
/// are whole, then the same truncation error as the copying path.
#[test]
fn next_borrowed_reports_truncation() {
    for name in FILES.iter().filter(|n| n.ends_with(".pcap")) {
        let bytes = data(name);
        for cut in (25..bytes.len()).step_by(13) {
            let part = &bytes[..cut];
            let (want, werr) = read_all(part);
            let mut r = PcapReader::new(part).unwrap();
            let mut got = 0;
            let err = loop {
                match r.next_borrowed() {
                    Ok(Some((_, d))) => {
                        assert_eq!(d, &want[got].data[..], "{name} cut at {cut}");
                        got += 1;
                    }
                    Ok(None) => break None,
                    Err(e) => break Some(e.to_string()),
                }
            };
            assert_eq!(got, want.len(), "{name} cut at {cut}");
            assert_eq!(err, werr.map(|e| e.to_string()), "{name} cut at {cut}");
        }
    }
}

/// Every prefix of every file: records read are a prefix of the full list,
/// and the read ends either cleanly or with a truncation error.  For classic
/// pcap, a clean end happens exactly at record boundaries.
#[test]
fn every_truncation_is_reported() {
    for name in FILES {
        let bytes = data(name);
        let (full, _) = read_all(&bytes);
        let classic = !name.ends_with("pcapng");
        let mut boundaries = vec![24u64];
        if classic {
            let mut r = PcapReader::new(&bytes[..]).unwrap();
            let mut buf = Vec::new();
            while r.next_into(&mut buf).unwrap().is_some() {
                boundaries.push(r.offset());
            }
        }
        for cut in 0..bytes.len() {
            let (recs, err) = read_all(&bytes[..cut]);
            assert!(recs.len() <= full.len());
            assert_eq!(&recs[..], &full[..recs.len()], "{name} cut at {cut}");
            match err {
                None => {
                    if classic {
                        assert!(
                            boundaries.contains(&(cut as u64)),
                            "{name}: clean EOF at {cut}"
                        );
                    }
                }
                Some(click_pcap::Error::Empty) => assert_eq!(cut, 0),
                Some(e) => {
                    assert!(e.is_truncated(), "{name} cut at {cut}: {e}");
                    if classic && cut >= 24 {
                        assert!(
                            !boundaries.contains(&(cut as u64)),
                            "{name}: error at boundary {cut}"
                        );
                        let msg = e.to_string();
                        assert!(
                            msg.contains("truncated") && msg.contains("byte offset"),
                            "{msg}"
                        );
                        assert!(
                            msg.contains(&format!("record index {}", recs.len())),
                            "{msg}"
                        );
                    }
                }
            }
        }
    }
}
