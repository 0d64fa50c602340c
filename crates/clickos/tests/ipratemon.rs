//! IPRateMonitor against stock Click: the same configurations under
//! `--simtime` (virtual time, so rates are exact) give the `look` output
//! that Click 2.1 (kohler/click 9197a59) printed for them, recorded below.

mod common;
use common::*;

const FWD: &str = "RatedSource(DATA \\<4500003200004000401126b90a0000010a00000204d2162e001e000000000000000000000000000000000000000000000000>";
const REV: &str = "RatedSource(DATA \\<4500003200004000401126b90a0000020a00000104d2162e001e000000000000000000000000000000000000000000000000>";
const OTHER: &str = "RatedSource(DATA \\<45000032000040004011000014000001c0a8010104d2162e001e000000000000000000000000000000000000000000000000>";

fn look(cfg: &str, extra: &[&str]) -> String {
    let mut args = vec!["run", "--simtime", "-e", cfg, "-h", "m.look"];
    for h in extra {
        args.extend(["-h", h]);
    }
    let r = run_in(None, bin(), &args);
    assert_eq!(r.code, 0, "{}", r.err);
    r.out
}

#[test]
fn zooms_into_a_busy_host_forward_and_reverse() {
    // 10.0.0.1 sends 1,000 packets a second (input 0); replies to it
    // (input 1) come at 400 a second: every level down to the host
    // carries both rates
    let cfg = format!(
        "{FWD}, RATE 1000, LIMIT 3000, STOP true) -> CheckIPHeader -> [0]m :: IPRateMonitor(PACKETS, 1, 600);
         {REV}, RATE 400, LIMIT 1200) -> CheckIPHeader -> [1]m;
         m[0] -> c0 :: Counter -> Discard; m[1] -> c1 :: Counter -> Discard;"
    );
    assert_eq!(
        look(&cfg, &["c0.count", "c1.count", "m.thresh"]),
        "m.look:\n373\n10\t998.169\t401.367\n\t10.0\t998.169\t401.367\n\
         \t\t10.0.0\t998.169\t401.367\n\t\t\t10.0.0.1\t998.169\t401.367\n\n\
         c0.count:\n3000\n\nc1.count:\n1199\n\nm.thresh:\n600\n\n"
    );
}

#[test]
fn prefixes_below_the_threshold_stay_folded() {
    let cfg = format!(
        "{FWD}, RATE 1000, LIMIT 2000, STOP true) -> CheckIPHeader -> m :: IPRateMonitor(PACKETS, 1, 2000) -> Discard;
         {OTHER}, RATE 300, LIMIT 600) -> MarkIPHeader -> m;"
    );
    assert_eq!(look(&cfg, &[]), "248\n10\t998.169\t0\n20\t298.096\t0\n");
}

#[test]
fn bytes_with_a_memory_bound() {
    // 50-byte packets: 10.0.0.1 at 50,000 bytes a second zooms (THRESH
    // 20,000), 20.0.0.1 at 15,000 does not; MEMORY 100 kB is 102,400 bytes
    let cfg = format!(
        "{FWD}, RATE 1000, LIMIT 2000, STOP true) -> CheckIPHeader -> m :: IPRateMonitor(BYTES, 1, 20000, 100) -> Discard;
         {OTHER}, RATE 300, LIMIT 600) -> MarkIPHeader -> m;"
    );
    assert_eq!(
        look(&cfg, &["m.memmax"]),
        "m.look:\n248\n10\t49981.812\t0\n\t10.0\t49981.812\t0\n\t\t10.0.0\t49981.812\t0\n\
         \t\t\t10.0.0.1\t49981.812\t0\n20\t14915.283\t0\n\nm.memmax:\n102400\n\n"
    );
}

#[test]
fn bad_configurations_are_refused() {
    for (args, want) in [
        ("PACKETS, 1.5, 10", "ratio must be between 0 and 1"),
        (
            "FRAMES, 1, 10",
            "monitor type should be \"PACKETS\" or \"BYTES\"",
        ),
        ("PACKETS, 1", "THRESH"),
    ] {
        let cfg = format!("Idle -> m :: IPRateMonitor({args}) -> Discard;");
        let r = run_in(None, bin(), &["run", "-e", &cfg]);
        assert!(r.code != 0 && r.err.contains(want), "{args}: {}", r.err);
    }
}
