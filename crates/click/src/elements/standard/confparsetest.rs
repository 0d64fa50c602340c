//! ConfParseTest: Click's configuration-parsing regression checks
//! (elements/test/confparsetest.cc), run against this implementation's
//! argument parsing (`click_lang::args`), its fixed-point reader and
//! unparsers (`common::unparse`) and its [`Timestamp`].
//!
//! Click's checks are kept in Click's order. Where a check exercises
//! something we have no equivalent of (Click's C++ `String` and
//! `StringAccum` classes, saturating integer parsing, IPv6 addresses, ...),
//! it is left out with a comment saying why; where our API differs in
//! shape (times in nanoseconds rather than Click's `SecondsArg(precision)`
//! integers), the check is adapted to the same values in our units.

use crate::common::unparse::{unparse_real2, unparse_with_mask};
use crate::prelude::*;
use crate::time::Timestamp;
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;
use click_lang::args::{
    parse_bandwidth, parse_time_ns, skip_comment_space, split_args, split_words, uncomment,
    unquote, Args, FromArg, IpPrefix, RawString,
};

/// `ConfParseTest`.
#[derive(Default)]
pub struct ConfParseTest;

pub static SPEC: ClassSpec = ClassSpec {
    name: "ConfParseTest",
    port_count: "0/0",
    processing: "a/a",
    group: "test",
    signature: "ConfParseTest()",
    summary: "Runs configuration parsing regression tests.",
    description: "When initialized, runs the checks of Click's ConfParseTest \
(elements/test/confparsetest.cc) against this implementation's argument parsing: \
uncommenting and unquoting, splitting arguments at commas and words at spaces, integers \
with their ranges and overflow, fixed-point reals, times, bandwidths, IP prefixes, \
timestamps and keyword-argument reading. If every check passes it prints `All tests pass!` \
under `FILE:LINE: While initializing 'NAME :: ConfParseTest':`; otherwise each failed check \
is an error naming its expression (`confparsetest.rs:LINE: test 'EXPR' failed`) and the \
router fails to initialize. Click's checks of its C++ String class, of saturating integer \
parsing, of IPv6 addresses and of error message wording have no counterpart here and are \
not run.",
    ports: "none",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: true,
    make: || Box::new(ConfParseTest),
};

/// Collects failed checks: `confparsetest.rs:LINE: test 'EXPR' failed`.
#[derive(Default)]
pub(crate) struct Checks {
    pub(crate) failed: Vec<String>,
}

impl Checks {
    pub(crate) fn check(&mut self, ok: bool, line: u32, expr: &str) {
        if !ok {
            self.failed
                .push(format!("confparsetest.rs:{line}: test '{expr}' failed"));
        }
    }

    /// The initialize result: `Ok` when every check passed, else the
    /// failures, one a line.
    pub(crate) fn result(self) -> Result<(), String> {
        if self.failed.is_empty() {
            Ok(())
        } else {
            Err(self.failed.join("\n"))
        }
    }
}

macro_rules! check {
    ($c:expr, $e:expr) => {
        $c.check($e, line!(), stringify!($e))
    };
}

/// One argument parsed as a `T`, `None` if the parser rejects it.
fn int<T: FromArg>(s: &str) -> Option<T> {
    T::from_arg(s).ok()
}

/// Click's FixedPointArg(16) followed by `cp_unparse_real2(_, 16)`.
fn fixed16(s: &str) -> Option<String> {
    crate::elements::standard::red::parse_fixed16(s)
        .ok()
        .map(|v| unparse_real2(v, 16))
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| String::from(*s)).collect()
}

fn ms(n: i64) -> Timestamp {
    Timestamp::from_nsec(n * 1_000_000)
}

const ZERO: Timestamp = Timestamp::ZERO;
const S: i64 = 1_000_000_000;

/// Click's checks, in Click's order.
pub(crate) fn run_checks(c: &mut Checks) {
    // cp_uncomment, cp_unquote
    check!(c, uncomment("  a  b  ") == "a  b");
    check!(
        c,
        uncomment("  a /* whatever */   // whatever\n    b  ") == "a b"
    );
    check!(c, uncomment("  \" /*???  */ \"  ") == "\" /*???  */ \"");
    check!(
        c,
        unquote("\"\\n\" abc /* 123 */ '/* def */'") == "\n abc /* def */"
    );

    // cp_eat_space: our equivalent returns where the space ends
    check!(c, skip_comment_space("       ", 0) == 7);
    check!(c, skip_comment_space("  a  b  ", 0) == 2);

    // cp_argvec, cp_spacevec
    check!(c, split_args("a, b, c") == strings(&["a", "b", "c"]));
    check!(c, split_args("  a /*?*/ b,  c, ") == strings(&["a b", "c"]));
    check!(c, split_args("\"x, y\" // ?") == strings(&["\"x, y\""]));
    check!(c, split_words("a  b, c") == strings(&["a", "b,", "c"]));
    check!(
        c,
        split_words("  'a /*?*/ b'c") == strings(&["'a /*?*/ b'c"])
    );

    // cp_integer. Click's cp_integer saturates on overflow (and sets
    // cp_errno); we have only IntArg's behaviour, which rejects, so the
    // overflow cases are checked below with IntArg's expectations.
    check!(c, int::<i32>("0") == Some(0));
    check!(c, int::<i32>("-0") == Some(0));
    check!(c, int::<u32>("0") == Some(0));
    check!(c, int::<u32>("-0").is_none());
    check!(c, int::<u32>("4294967294") == Some(4294967294));
    check!(c, int::<u32>("0xFFFFFFFE") == Some(4294967294));
    check!(c, int::<i32>("2147483647") == Some(2147483647));
    check!(c, int::<i32>("-2147483648") == Some(i32::MIN));
    // (cp_integer's partial parse up to an end pointer has no counterpart.)
    check!(c, int::<i32>("-127 ").is_none());
    check!(c, int::<i64>("9223372036854775807") == Some(i64::MAX));
    check!(c, int::<i64>("-9223372036854775808") == Some(i64::MIN));

    // IntArg. Click's CHECK_ERR also compares the error message ("invalid
    // number", "out of range, bound 4294967295"); ours are worded as
    // Click's older cp_va parsers did ("expected unsigned integer", "out
    // of range"), so only the outcome and value are checked. IntArg's
    // parse_saturating has no counterpart (no element of ours saturates).
    check!(c, int::<i32>("-5") == Some(-5));
    check!(c, int::<u32>("aoeu").is_none());
    check!(c, int::<u32>("4294967296").is_none());
    check!(c, int::<u32>("42949672961939").is_none());
    check!(c, int::<u32>("0xFFFFFFFFF").is_none());
    check!(c, int::<i32>("4294967296").is_none());
    check!(c, int::<i32>("2147483648").is_none());
    check!(c, int::<i32>("-2147483649").is_none());
    check!(c, int::<i32>("-4294967296").is_none());
    check!(c, int::<i8>("97") == Some(97));
    check!(c, int::<i8>("128").is_none());
    check!(c, int::<i64>("-5") == Some(-5));
    check!(c, int::<u64>("18446744073709551616").is_none());

    // BoundedIntArg: our Args has no bounded reader (elements check their
    // ranges themselves), so those checks are not run.

    // FixedPointArg and cp_unparse_real2. Our only fixed-point reader is
    // RED's (16 fraction bits, nonnegative), so Click's 1- and 8-bit and
    // negative cases are not run.
    check!(c, fixed16("0.3").as_deref() == Some("0.3"));
    check!(c, fixed16("0.49").as_deref() == Some("0.49"));
    check!(c, fixed16("0.499").as_deref() == Some("0.499"));
    check!(c, fixed16("0.4999").as_deref() == Some("0.4999"));
    check!(c, fixed16("0.49999").as_deref() == Some("0.49998"));
    check!(c, fixed16("0.499999").as_deref() == Some("0.5"));
    check!(c, fixed16("0.49998").as_deref() == Some("0.49998"));
    check!(c, fixed16("0.999999").as_deref() == Some("1"));

    // SecondsArg. Ours returns nanoseconds (callers round to their own
    // precision), so Click's SecondsArg(PRECISION) results are checked as
    // the nanosecond values they round from.
    check!(c, parse_time_ns("3600") == Ok(3600 * S));
    check!(c, parse_time_ns("3600s") == Ok(3600 * S));
    check!(c, parse_time_ns("3.6e6 msec") == Ok(3600 * S));
    check!(c, parse_time_ns("60m") == Ok(3600 * S));
    check!(c, parse_time_ns("1 hr") == Ok(3600 * S));
    check!(c, parse_time_ns("1.99 hr") == Ok(7164 * S));
    check!(c, parse_time_ns("1.99 s") == Ok(1_990_000_000));
    check!(c, parse_time_ns("1ms") == Ok(1_000_000));
    check!(c, parse_time_ns("1.9ms") == Ok(1_900_000));

    // BandwidthArg (bytes per second). Click's status_unitless (a bare
    // number) has no counterpart: ours takes it as bytes per second.
    check!(c, parse_bandwidth("8") == Ok(8));
    check!(c, parse_bandwidth("8 baud") == Ok(1));
    check!(c, parse_bandwidth("8Kbps") == Ok(1000));
    check!(c, parse_bandwidth("8KBps") == Ok(8000));

    // IPPrefixArg
    check!(
        c,
        IpPrefix::from_arg("18.26.4/24")
            .is_ok_and(|p| unparse_with_mask(p.addr.into(), p.mask.into()) == "18.26.4.0/24")
    );
    check!(c, IpPrefix::from_arg("18.26.4/28").is_err());

    // IPv6 addresses: our argument parser has none (AddressInfo stores
    // IPv6 names with core's parser, and no element takes IPv6 arguments),
    // so Click's cp_ip6_address and IP6Address checks are not run.

    // Timestamp (`-t` is `ZERO - t` here; Click's jiffies and timeval
    // conversions have no counterpart).
    let t = ZERO - ms(1001);
    check!(c, t.sec() == -2 && t.subsec_usec() == 999000);
    check!(c, t.to_string() == "-1.001000");
    let t2 = Timestamp::from_sec_nsec(-10, 0);
    check!(c, t2.sec() == -10 && t2.subsec_nsec() == 0);
    check!(c, t2.to_string() == "-10.000000");
    check!(c, t2 < t);
    check!(c, (ZERO - t2).to_string() == "10.000000");
    check!(c, (ZERO - t).to_string() == "1.001000");
    check!(c, ZERO - t2 > t);
    check!(c, (ZERO - t + t2).to_string() == "-8.999000");
    let t = ms(999);
    check!(c, (t + t).to_string() == "1.998000");
    check!(c, (ZERO - t - t).to_string() == "-1.998000");
    check!(c, ZERO - t == ms(-999));
    check!(c, t == Timestamp::from_sec_usec(0, 999000));
    check!(
        c,
        t.nsec() == 999_000_000 && (ZERO - t).nsec() == -999_000_000
    );
    let t = ZERO - ms(10000001);
    check!(c, t.sec() == -10001 && t.subsec_usec() == 999000);

    // Click's String and StringAccum checks (substring with negative
    // offsets, shared storage, out-of-memory strings, hash codes,
    // find_left) test Click's C++ string class, and click_strcmp its
    // natural-order comparison; neither exists here, so they are not run.

    // cp_va_kparse / Args::read of a size
    let mut a = Args::from_vec(vec![String::from("SIZE 123456789")]);
    check!(c, a.read::<usize>("SIZE") == Ok(Some(123456789)));
    check!(c, a.complete().is_ok());

    // read_all_with(AnyArg) and read
    let mut a = Args::new("A 1, B 2, A 3, A 4   , A 5");
    let results = a.read_all::<RawString>("A");
    let b = a.read::<i32>("B");
    check!(c, a.complete().is_ok());
    check!(c, b == Ok(Some(2)));
    check!(
        c,
        results.is_ok_and(|r| r.iter().map(|x| x.0.as_str()).eq(["1", "3", "4", "5"]))
    );

    let mut a = Args::new("B 3");
    let results = a.read_all::<RawString>("A");
    let b = a.read::<i32>("B");
    check!(c, a.complete().is_ok());
    check!(c, results.is_ok_and(|r| r.is_empty()) && b == Ok(Some(3)));

    // read_all, then consume (leaving B unread, which is no error)
    let mut a = Args::new("A 1, B 2, A 3, A 4, A 5");
    let results = a.read_all::<RawString>("A");
    check!(
        c,
        results.is_ok_and(|r| r.iter().map(|x| x.0.as_str()).eq(["1", "3", "4", "5"]))
    );
    check!(c, a.remaining() == 1);

    // read_or_set: ours reads an Option the caller defaults
    let mut a = Args::new("A 1");
    check!(c, a.read::<i32>("A") == Ok(Some(1)));
    check!(c, a.read::<i32>("B") == Ok(None));
    check!(c, a.complete().is_ok());

    // read_mp of positional arguments
    let mut a = Args::from_vec(strings(&["1", "2"]));
    check!(c, a.read_mp::<i32>("A") == Ok(1));
    check!(c, a.read_mp::<i32>("B") == Ok(2));
    check!(c, a.complete().is_ok());
}

impl Element for ConfParseTest {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let mut checks = Checks::default();
        run_checks(&mut checks);
        checks.result()?;
        cx.error_line(&format!(
            "{}: While initializing '{}':",
            cx.landmark(),
            cx.declaration()
        ));
        cx.error_line("  All tests pass!");
        Ok(())
    }

    crate::element_any!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clicks_checks_pass() {
        let mut c = Checks::default();
        run_checks(&mut c);
        assert_eq!(c.failed, Vec::<String>::new());
    }

    #[test]
    fn a_failed_check_is_reported_with_its_expression() {
        let mut c = Checks::default();
        check!(c, int::<u32>("1") == Some(1));
        let line = line!() + 1;
        check!(c, int::<u32>("4294967296") == Some(0));
        check!(c, uncomment(" x ") == "x");
        assert_eq!(
            c.result(),
            Err(format!(
                "confparsetest.rs:{line}: test 'int::<u32>(\"4294967296\") == Some(0)' failed"
            ))
        );
        assert_eq!(Checks::default().result(), Ok(()));
    }
}
