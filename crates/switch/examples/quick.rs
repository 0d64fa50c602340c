use clickos_switch::ports::mem::{MemSink, MemSource};
use clickos_switch::{SwitchHandle, SwitchOptions};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
fn main() {
    let size: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(60);
    let patch = std::env::args().nth(2).is_some_and(|s| s == "patch");
    let mut f = vec![0u8; size];
    f[..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
    let sw = SwitchHandle::spawn(SwitchOptions {
        burst: 256,
        ..Default::default()
    })
    .unwrap();
    let sink = MemSink::new(1024, 2048, 0);
    let log = sink.log();
    let d = sw.add_port("d", sink.spec()).unwrap();
    sw.insert([2, 0, 0, 0, 0, 2], d).unwrap();
    let (src, go) = MemSource::gated(vec![f], u64::MAX);
    let s = sw.add_port("s", src.spec()).unwrap();
    if patch {
        sw.patch(s, Some(d)).unwrap();
    }
    go.store(true, Ordering::Release);
    std::thread::sleep(Duration::from_millis(200));
    let a = log.frames.load(Ordering::Relaxed);
    let t = Instant::now();
    std::thread::sleep(Duration::from_secs(2));
    let b = log.frames.load(Ordering::Relaxed);
    println!(
        "{size} B {}: {:.2} Mp/s",
        if patch { "patch" } else { "mac" },
        (b - a) as f64 / t.elapsed().as_secs_f64() / 1e6
    );
    // memcpy baseline
    let src = vec![7u8; size];
    let mut bufs = vec![0u8; 1024 * 2048];
    let n = 50_000_000u64;
    let t = Instant::now();
    let mut k = 0;
    for _ in 0..n {
        let off = k * 2048;
        bufs[off..off + size].copy_from_slice(std::hint::black_box(&src));
        k += 1;
        if k == 1024 {
            k = 0;
        }
    }
    std::hint::black_box(&bufs);
    println!(
        "memcpy {size} B: {:.2} Mp/s",
        n as f64 / t.elapsed().as_secs_f64() / 1e6
    );
}
