//! TokenBucketTest: Click's TokenBucket unit test, run against this
//! implementation's TokenBucket (`common::rate`).

use crate::common::rate::TokenBucket;
use crate::prelude::*;
use alloc::format;
use alloc::vec::Vec;

/// `TokenBucketTest`.
#[derive(Default)]
pub struct TokenBucketTest;

pub static SPEC: ClassSpec = ClassSpec {
    name: "TokenBucketTest",
    port_count: "0/0",
    processing: "a/a",
    group: "test",
    signature: "TokenBucketTest()",
    summary: "Runs token bucket regression tests.",
    description: "When initialized, runs the checks of Click's TokenBucketTest \
(elements/test/tokenbuckettest.cc) against the token bucket the rate elements use, and \
prints `All tests pass!` under `FILE:LINE: While initializing 'NAME :: TokenBucketTest':` \
if they do; otherwise each failed check is an error and the router fails to initialize.",
    ports: "none",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: true,
    make: || Box::new(TokenBucketTest),
};

const HZ: i64 = 1000;
const MAX: u64 = u32::MAX as u64;

/// The checks, in Click's order; the failed ones' line numbers.
fn run_checks() -> Vec<u32> {
    let mut failed = Vec::new();
    let mut check = |ok: bool, line: u32| {
        if !ok {
            failed.push(line);
        }
    };
    let mut tb = TokenBucket::default();
    tb.assign(1024, 2048);
    check((1022..=1026).contains(&tb.effective_rate()), line!());
    check((2046..=2050).contains(&tb.effective_capacity()), line!());
    tb.set_full();
    tb.refill_jiffies(0);
    check(tb.remove_if(1024), line!());
    check(tb.remove_if(1024), line!());
    check(!tb.remove_if(1024), line!());
    tb.refill_jiffies(HZ * 99 / 100);
    check(!tb.remove_if(1024), line!());
    tb.refill_jiffies(HZ);
    check(tb.remove_if(1024), line!());
    check(!tb.remove_if(1024), line!());

    // a capacity below a jiffy's tokens is raised
    let mut tb2 = TokenBucket::new(1024 * 1024 * 1024, 1);
    check(tb2.full(), line!());
    check(tb2.remove_if(1000), line!());

    let mut tb3 = TokenBucket::new(1, 1024 * 1024 * 1024);
    check(tb3.remove_if(2 * (MAX / HZ as u64)), line!());

    // the rate ends up very slightly less than 2
    let mut tb4 = TokenBucket::new(2, 1);
    tb4.refill_jiffies(0);
    tb4.clear();
    let t = i64::from(tb4.jiffies_until_contains(1));
    tb4.refill_jiffies(t);
    check(tb4.contains(1), line!());

    tb4.refill_jiffies(0);
    tb4.clear();
    let done_at = i64::from(tb4.jiffies_until_contains(1));
    let mut cur = 0i64;
    while cur < done_at {
        check(cur == done_at - 1 || !tb4.contains(1), line!());
        check(
            i64::from(tb4.jiffies_until_contains(1)) <= done_at - cur,
            line!(),
        );
        cur += 1;
        tb4.refill_jiffies(cur);
    }
    check(tb4.contains(1), line!());

    tb4.assign_unlimited(true);
    check(tb4.effective_rate() == MAX, line!());
    check(tb4.effective_capacity() == MAX, line!());

    for _ in 0..2 {
        tb4.assign_unlimited(false);
        tb4.clear();
        tb4.refill_jiffies(cur);
        check(tb4.effective_rate() == 0, line!());
        check(tb4.effective_capacity() == MAX, line!());
        check(tb4.empty(), line!());

        tb4.assign(0, 1024);
        check(tb4.effective_rate() == 0, line!());
        check(tb4.effective_capacity() == 1024, line!());
    }
    failed
}

impl Element for TokenBucketTest {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let failed = run_checks();
        if failed.is_empty() {
            cx.error_line(&format!(
                "{}: While initializing '{}':",
                cx.landmark(),
                cx.declaration()
            ));
            cx.error_line("  All tests pass!");
            return Ok(());
        }
        let lines: Vec<String> = failed
            .iter()
            .map(|l| format!("tokenbuckettest.rs:{l}: test failed"))
            .collect();
        Err(lines.join("\n"))
    }

    crate::element_any!();
}
