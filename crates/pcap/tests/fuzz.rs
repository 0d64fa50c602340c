//! Robustness: mutated, truncated and hostile inputs never panic and never
//! cause large allocations.  A global allocator records the largest single
//! allocation made while reading.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use click_pcap::{Error, PcapReader, Record};
use common::*;

struct Tracking;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static TRACK: Cell<bool> = const { Cell::new(false) };
}

fn note(size: usize) {
    if TRACK.try_with(Cell::get).unwrap_or(false) {
        LARGEST.fetch_max(size, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        note(l.size());
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        note(l.size());
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        note(new);
        unsafe { System.realloc(p, l, new) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static GLOBAL: Tracking = Tracking;

/// Reads all of `bytes` with a reused buffer, tracking allocations; returns
/// (records, error, largest allocation).
fn read_tracked(bytes: &[u8]) -> (usize, Option<Error>, usize) {
    LARGEST.store(0, Ordering::Relaxed);
    TRACK.with(|t| t.set(true));
    let mut n = 0;
    let mut err = None;
    match PcapReader::new(bytes) {
        Err(e) => err = Some(e),
        Ok(mut r) => {
            let mut buf = Vec::new();
            loop {
                match r.next_into(&mut buf) {
                    Ok(Some(m)) => {
                        assert_eq!(m.caplen as usize, buf.len());
                        assert!(m.ts_nsec < 1_000_000_000);
                        n += 1;
                    }
                    Ok(None) => break,
                    Err(e) => {
                        // Display never panics and says where.
                        let s = e.to_string();
                        assert!(!s.is_empty());
                        err = Some(e);
                        break;
                    }
                }
            }
            assert!(r.next_into(&mut buf).unwrap().is_none(), "fused");
        }
    }
    TRACK.with(|t| t.set(false));
    (n, err, LARGEST.load(Ordering::Relaxed))
}

/// An allocation bound: eager reads are sized up to 1 MiB; beyond that only
/// what the input backs (with doubling) plus pcapng metadata blocks.
fn bound(input: usize) -> usize {
    (2 << 20) + 2 * input
}

fn mutate(rng: &mut Rng, src: &[u8]) -> Vec<u8> {
    let mut v = src.to_vec();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        match rng.below(8) {
            0 => {
                // flip a few bits
                for _ in 0..1 + rng.below(8) {
                    if !v.is_empty() {
                        let i = rng.below(v.len());
                        v[i] ^= 1 << rng.below(8);
                    }
                }
            }
            1 => {
                // overwrite an aligned u32 with an interesting value
                let vals = [
                    0u32,
                    1,
                    3,
                    11,
                    12,
                    0xff,
                    0xffff,
                    0x7fff_ffff,
                    0xffff_fff0,
                    0xffff_ffff,
                    1 << 28,
                    65536,
                    262_145,
                ];
                if v.len() >= 4 {
                    let i = rng.below(v.len() / 4) * 4;
                    let x = vals[rng.below(vals.len())];
                    let b = if rng.below(2) == 0 {
                        x.to_le_bytes()
                    } else {
                        x.to_be_bytes()
                    };
                    v[i..i + 4].copy_from_slice(&b);
                }
            }
            2 => {
                let i = rng.below(v.len() + 1);
                v.truncate(i);
            }
            3 => {
                // random byte at a random offset
                if !v.is_empty() {
                    let i = rng.below(v.len());
                    v[i] = rng.next() as u8;
                }
            }
            4 => {
                // delete a range
                if !v.is_empty() {
                    let i = rng.below(v.len());
                    let j = (i + 1 + rng.below(64)).min(v.len());
                    v.drain(i..j);
                }
            }
            5 => {
                // duplicate a range
                if !v.is_empty() {
                    let i = rng.below(v.len());
                    let j = (i + 1 + rng.below(64)).min(v.len());
                    let chunk = v[i..j].to_vec();
                    let at = rng.below(v.len() + 1);
                    v.splice(at..at, chunk);
                }
            }
            6 => {
                // random garbage tail
                for _ in 0..rng.below(40) {
                    v.push(rng.next() as u8);
                }
            }
            _ => {
                // splice in the start of another file
                let other = data(FILES[rng.below(FILES.len())]);
                let at = rng.below(v.len() + 1);
                let n = rng.below(other.len().min(128) + 1);
                v.splice(at..at, other[..n].iter().copied());
            }
        }
    }
    v
}

#[test]
fn random_mutations_never_panic_or_overallocate() {
    let iterations: usize = std::env::var("CLICK_PCAP_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1500);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut outcomes = [0usize; 3]; // clean, truncated, other error
    for name in FILES {
        let src = data(name);
        for _ in 0..iterations {
            let input = mutate(&mut rng, &src);
            let (_, err, largest) = read_tracked(&input);
            assert!(
                largest <= bound(input.len()),
                "{name}: allocation of {largest} bytes for a {}-byte input",
                input.len()
            );
            match err {
                None => outcomes[0] += 1,
                Some(e) if e.is_truncated() => outcomes[1] += 1,
                Some(_) => outcomes[2] += 1,
            }
        }
    }
    println!("clean / truncated / other errors: {outcomes:?}");
    assert!(outcomes.iter().all(|&n| n > 0), "{outcomes:?}");
}

#[test]
fn pure_noise_never_panics() {
    let mut rng = Rng(42);
    let heads: [&[u8]; 4] = [
        &[0xd4, 0xc3, 0xb2, 0xa1],
        &[0xa1, 0xb2, 0x3c, 0x4d],
        &[0x0a, 0x0d, 0x0d, 0x0a],
        &[0x34, 0xcd, 0xb2, 0xa1],
    ];
    for i in 0..4000 {
        let mut v = heads[i % 4].to_vec();
        if i % 8 >= 4 && v[0] == 0x0a {
            v.extend_from_slice(&[28, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a, 1, 0]);
        }
        for _ in 0..rng.below(300) {
            v.push(rng.next() as u8);
        }
        let (_, _, largest) = read_tracked(&v);
        assert!(largest <= bound(v.len()), "allocation of {largest}");
    }
}

fn pcap_header(snaplen: u32) -> Vec<u8> {
    let mut v = Vec::new();
    for x in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, snaplen, 1] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v
}

#[test]
fn lying_lengths_are_rejected_cheaply() {
    // caplen 200 MiB under a 4 GiB snaplen: allowed by the limits, but the
    // data is not there -> truncated, without allocating 200 MiB.
    let mut v = pcap_header(u32::MAX);
    for x in [1u32, 0, 200 << 20, 200 << 20] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.extend_from_slice(&[0u8; 100]);
    let (n, err, largest) = read_tracked(&v);
    assert_eq!(n, 0);
    let err = err.unwrap();
    assert!(err.is_truncated(), "{err}");
    assert!(largest < (2 << 20), "allocated {largest}");

    // caplen beyond 256 MiB: too large.
    let mut v = pcap_header(u32::MAX);
    for x in [1u32, 0, 300 << 20, 300 << 20] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    let (_, err, _) = read_tracked(&v);
    let err = err.unwrap();
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");
    assert!(err.to_string().contains("byte offset 24"), "{err}");

    // caplen above snaplen 65535 and above 262144: too large.
    let mut v = pcap_header(65535);
    for x in [1u32, 0, 1 << 20, 1 << 20] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    let (_, err, _) = read_tracked(&v);
    assert!(matches!(err, Some(Error::TooLarge { .. })), "{err:?}");

    // pcapng block claiming 4 GiB.
    let mut v = data("mixed.pcapng");
    let shb_len = u32::from_le_bytes(v[4..8].try_into().unwrap()) as usize;
    let idb_len = u32::from_le_bytes(v[shb_len + 4..shb_len + 8].try_into().unwrap()) as usize;
    let epb = shb_len + idb_len;
    v[epb + 4..epb + 8].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
    let (n, err, largest) = read_tracked(&v);
    assert_eq!(n, 0);
    assert!(
        matches!(err, Some(Error::TooLarge { offset, .. }) if offset == epb as u64),
        "{err:?}"
    );
    assert!(largest < (2 << 20));
}

/// Every record of `bytes` with the reader's offset after it.
fn records_with_offsets(bytes: &[u8]) -> (Vec<(Record, u64)>, Option<Error>) {
    let mut r = match PcapReader::new(bytes) {
        Ok(r) => r,
        Err(e) => return (Vec::new(), Some(e)),
    };
    let mut out = Vec::new();
    loop {
        match r.next_record() {
            Ok(Some(rec)) => out.push((rec, r.offset())),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

/// A file cut at any byte gives back exactly the records wholly before
/// the cut, unchanged, then (classic pcap) a clean end at a record
/// boundary and a truncation error anywhere else.
#[test]
fn truncation_keeps_exactly_the_whole_records() {
    for name in FILES {
        let src = data(name);
        let (all, err) = records_with_offsets(&src);
        assert!(err.is_none(), "{name}: {err:?}");
        assert!(!all.is_empty(), "{name}");
        let pcapng = src.starts_with(&[0x0a, 0x0d, 0x0d, 0x0a]);
        let step = (src.len() / 400).max(1);
        let cuts = (0..src.len())
            .step_by(step)
            .chain(all.iter().map(|a| a.1 as usize));
        for k in cuts {
            let (got, err) = records_with_offsets(&src[..k]);
            let whole = all.iter().filter(|a| a.1 as usize <= k).count();
            assert_eq!(got.len(), whole, "{name} cut at {k}: records");
            for (g, a) in got.iter().zip(&all) {
                assert_eq!(g.0, a.0, "{name} cut at {k}: a record changed");
            }
            if !pcapng && k >= 24 {
                let boundary = k == 24 || all.iter().any(|a| a.1 as usize == k);
                match &err {
                    None => assert!(boundary, "{name} cut at {k}: no error mid-record"),
                    Some(e) => {
                        assert!(!boundary, "{name} cut at {k} (a boundary): {e}");
                        assert!(e.is_truncated(), "{name} cut at {k}: {e}");
                    }
                }
            }
        }
    }
}

/// Records read from each file, written with PcapWriter and read back,
/// are the same records.
#[test]
fn write_read_round_trip() {
    for name in FILES.iter().filter(|n| n.ends_with(".pcap")) {
        let src = data(name);
        let r = PcapReader::new(&src[..]).unwrap();
        let (lt, snap) = (r.linktype().unwrap(), r.snaplen().unwrap());
        let (all, _) = records_with_offsets(&src);
        let mut w = click_pcap::PcapWriter::new(Vec::new(), lt, snap.max(65535)).unwrap();
        for (rec, _) in &all {
            w.write_record(rec).unwrap();
        }
        let out = w.into_inner().unwrap();
        let (back, err) = records_with_offsets(&out);
        assert!(err.is_none(), "{name}: {err:?}");
        assert_eq!(back.len(), all.len(), "{name}");
        for (b, a) in back.iter().zip(&all) {
            assert_eq!(b.0.data, a.0.data, "{name}");
            assert_eq!(
                (b.0.ts_sec, b.0.ts_nsec / 1000, b.0.caplen, b.0.orig_len),
                (a.0.ts_sec, a.0.ts_nsec / 1000, a.0.caplen, a.0.orig_len),
                "{name}"
            );
        }
    }
}
