use click_lang::args::*;
use core::net::Ipv4Addr;

fn v(x: &[&str]) -> Vec<String> {
    x.iter().map(|s| s.to_string()).collect()
}

#[test]
fn split() {
    assert_eq!(split_args(""), Vec::<String>::new());
    assert_eq!(split_args("a, b, c"), v(&["a", "b", "c"]));
    assert_eq!(split_args("a, , b"), v(&["a", "", "b"]));
    assert_eq!(split_args("  a /*?*/ b,  c, "), v(&["a b", "c"]));
    assert_eq!(split_args("\"x, y\" // ?"), v(&["\"x, y\""]));
    assert_eq!(split_args("'a,b', \\<2c>"), v(&["'a,b'", "\\<2c>"]));
    assert_eq!(split_words("a  b, c"), v(&["a", "b,", "c"]));
    assert_eq!(split_words("  'a /*?*/ b'c"), v(&["'a /*?*/ b'c"]));
    assert_eq!(uncomment("  a /* Comment */       b  "), "a b");
    assert_eq!(uncomment("  a   b  "), "a   b");
}

#[test]
fn unquoting() {
    assert_eq!(
        unquote("\"\\n\" abc /* 123 */ '/* def */'"),
        "\n abc /* def */"
    );
    assert_eq!(unquote("\"a\"'b'c"), "abc");
    assert_eq!(
        unquote("\"\\<48 65 6c6C 6f>\\x21\\101\""),
        "HelloA!".replace("A!", "!A")
    );
    assert_eq!(unquote("\\<41 42>"), "AB");
    assert_eq!(unquote("'\\n'"), "\\n");
    assert_eq!(unquote(&quote("a\"b$\n")), "a\"b$\n");
    assert_eq!(parse_string("\"a b\"").unwrap(), "a b");
    assert!(parse_string("a b").is_err());
}

#[test]
fn scalars() {
    assert_eq!(parse_bool("true"), Ok(true));
    assert_eq!(parse_bool("no"), Ok(false));
    assert_eq!(parse_bool("off"), Ok(false));
    assert_eq!(parse_bool("maybe"), Err("expected bool".into()));
    assert_eq!(parse_i64("-12"), Ok(-12));
    assert_eq!(parse_i64("0x1f"), Ok(31));
    assert_eq!(parse_i64("010"), Ok(8));
    assert_eq!(parse_i64("1_000"), Ok(1000));
    assert_eq!(parse_i64("x"), Err("expected integer".into()));
    assert_eq!(parse_u64("-1"), Err("expected unsigned integer".into()));
    assert_eq!(
        parse_u64("18446744073709551616"),
        Err("out of range".into())
    );
    assert_eq!(parse_i64("-9223372036854775808"), Ok(i64::MIN));
    assert_eq!(parse_f64("1.5e2"), Ok(150.0));
    assert!(parse_f64("1.5x").is_err());
}

#[test]
fn addresses() {
    assert_eq!(parse_ipv4("10.0.0.1"), Ok(Ipv4Addr::new(10, 0, 0, 1)));
    assert!(parse_ipv4("10.0.0").is_err());
    assert!(parse_ipv4("10.0.0.256").is_err());
    assert_eq!(
        parse_ipv4_prefix("10.0.0.0/8"),
        Ok((Ipv4Addr::new(10, 0, 0, 0), Ipv4Addr::new(255, 0, 0, 0)))
    );
    assert_eq!(
        parse_ipv4_prefix("10/8"),
        Ok((Ipv4Addr::new(10, 0, 0, 0), Ipv4Addr::new(255, 0, 0, 0)))
    );
    assert_eq!(
        parse_ipv4_prefix("1.2.3.4/255.255.0.0"),
        Ok((Ipv4Addr::new(1, 2, 3, 4), Ipv4Addr::new(255, 255, 0, 0)))
    );
    assert_eq!(
        parse_ipv4_prefix("1.2.3.4"),
        Ok((Ipv4Addr::new(1, 2, 3, 4), Ipv4Addr::new(255, 255, 255, 255)))
    );
    assert_eq!(
        parse_ipv4_prefix("0.0.0.0/0").unwrap().1,
        Ipv4Addr::new(0, 0, 0, 0)
    );
    assert!(parse_ipv4_prefix("1.2.3.4/33").is_err());
    // Click's ConfParseTest: an abbreviated address must cover the mask
    assert_eq!(
        parse_ipv4_prefix("18.26.4/24"),
        Ok((Ipv4Addr::new(18, 26, 4, 0), Ipv4Addr::new(255, 255, 255, 0)))
    );
    assert!(parse_ipv4_prefix("18.26.4/28").is_err());
    assert!(parse_ipv4_prefix("10/255.255.0.0").is_err());
    assert_eq!(
        parse_ether("00:11:22:aa:BB:f"),
        Ok([0, 0x11, 0x22, 0xaa, 0xbb, 0xf])
    );
    assert_eq!(
        parse_ether("00-11-22-33-44-55"),
        Ok([0, 0x11, 0x22, 0x33, 0x44, 0x55])
    );
    assert!(parse_ether("00:11:22:33:44").is_err());
    assert!(parse_ether("00:11:22:33:44:+5").is_err());
}

#[test]
fn times_and_bandwidths() {
    assert_eq!(parse_time_ns("1"), Ok(1_000_000_000));
    assert_eq!(parse_time_ns("0.5s"), Ok(500_000_000));
    assert_eq!(parse_time_ns("100ms"), Ok(100_000_000));
    assert_eq!(parse_time_ns("3us"), Ok(3_000));
    assert_eq!(parse_time_ns("7nsec"), Ok(7));
    assert_eq!(parse_time_ns("2min"), Ok(120_000_000_000));
    assert_eq!(parse_time_ns("1h"), Ok(3_600_000_000_000));
    assert_eq!(parse_time_ns("1d"), Ok(86_400_000_000_000));
    assert_eq!(parse_time_ns("-1.5"), Ok(-1_500_000_000));
    assert!(parse_time_ns("1 parsec").is_err());
    // space between number and unit (Click's ConfParseTest)
    assert_eq!(parse_time_ns("1 hr"), Ok(3_600_000_000_000));
    assert_eq!(parse_time_ns("3.6e6 msec"), Ok(3_600_000_000_000));
    assert_eq!(parse_time_ns("1.99 s"), Ok(1_990_000_000));
    assert_eq!(parse_bandwidth("8 baud"), Ok(1));
    assert_eq!(parse_bandwidth("8 KBps"), Ok(8000));
    assert_eq!(parse_bandwidth("8bps"), Ok(1));
    assert_eq!(parse_bandwidth("1Mbps"), Ok(125_000));
    assert_eq!(parse_bandwidth("1Gbps"), Ok(125_000_000));
    assert_eq!(parse_bandwidth("2kBps"), Ok(2000));
    assert_eq!(parse_bandwidth("100"), Ok(100));
    assert_eq!(parse_bandwidth("1.5MBps"), Ok(1_500_000));
    assert!(parse_bandwidth("fast").is_err());
    // Click's units with a slash, and baud (LinkUnqueue-01: 100kb/s)
    assert_eq!(parse_bandwidth("100kb/s"), Ok(12_500));
    assert_eq!(parse_bandwidth("3B/s"), Ok(3));
    assert_eq!(parse_bandwidth("2KB/s"), Ok(2000));
    assert_eq!(parse_bandwidth("9600baud"), Ok(1200));
    assert_eq!(parse_bandwidth("1Mb/s"), Ok(125_000));
    assert!(parse_bandwidth("1k").is_err());
    assert!(parse_bandwidth("1/s").is_err());
}

#[test]
fn args_positional_and_keyword() {
    let mut a = Args::new("\"blah\", 10");
    assert_eq!(a.read_p::<String>("DATA").unwrap().as_deref(), Some("blah"));
    assert_eq!(a.read_p::<u32>("LIMIT").unwrap(), Some(10));
    assert_eq!(a.read::<bool>("STOP").unwrap(), None);
    assert!(a.complete().is_ok());

    let mut a = Args::new("LIMIT 10, DATA \"x y\", STOP true");
    assert_eq!(a.read_mp::<String>("DATA").unwrap(), "x y");
    assert_eq!(a.read_p::<u32>("LIMIT").unwrap(), Some(10));
    assert_eq!(a.read::<bool>("STOP").unwrap(), Some(true));
    assert!(a.complete().is_ok());

    // later keyword wins
    let mut a = Args::new("DATA a, LIMIT 10, DATA b");
    assert_eq!(a.read_mp::<String>("DATA").unwrap(), "b");

    // errors
    let mut a = Args::new("LIMIT 10");
    assert_eq!(
        a.read_m::<String>("DATA").unwrap_err(),
        "missing mandatory DATA argument"
    );
    let mut a = Args::new("");
    assert_eq!(
        a.read_mp::<String>("DATA").unwrap_err(),
        "missing mandatory DATA argument"
    );
    // like Click, a mandatory positional read takes a keyword-looking argument
    let mut a = Args::new("LIMIT 10");
    assert_eq!(
        a.read_mp::<String>("DATA").unwrap_err(),
        "DATA: expected string"
    );
    let mut a = Args::new("LIMIT ten");
    assert_eq!(
        a.read_p::<u32>("LIMIT").unwrap_err(),
        "LIMIT: expected unsigned integer"
    );
    let mut a = Args::new("DATA x, BOGUS 1");
    a.read_p::<String>("DATA").unwrap();
    assert_eq!(a.complete().unwrap_err(), "BOGUS: unknown argument");
    let mut a = Args::new("a, b, true");
    a.read_p::<String>("DATA").unwrap();
    a.read_p::<String>("LIMIT").unwrap();
    assert_eq!(a.complete().unwrap_err(), "too many arguments");
}

#[test]
fn args_mandatory_takes_keyword_looking_positional() {
    // Print(hello world): "hello" looks like a keyword, but a mandatory
    // positional read still takes the whole argument.
    let mut a = Args::new("hello world");
    assert_eq!(a.read_mp::<RawString>("LABEL").unwrap().0, "hello world");
    assert!(a.complete().is_ok());
}

#[test]
fn args_positional_after_keyword_is_too_many() {
    let mut a = Args::new("LIMIT 10, 5");
    assert_eq!(a.read_p::<u32>("LIMIT").unwrap(), Some(10));
    assert_eq!(a.read_p::<u32>("BURST").unwrap(), None);
    assert!(a.complete().is_err());
}

#[test]
fn args_read_all_and_rest() {
    let mut a = Args::new("x, ADDR 1.2.3.4, ADDR 5.6.7.8, y");
    let v: Vec<Ipv4Addr> = a.read_all("ADDR").unwrap();
    assert_eq!(v, [Ipv4Addr::new(1, 2, 3, 4), Ipv4Addr::new(5, 6, 7, 8)]);
    assert_eq!(a.rest(), v_(&["x", "y"]));
    let mut a = Args::new("PREFIX 10/8, INTERVAL 1.5ms, RATE 1Mbps, ETH 0:1:2:3:4:5");
    assert_eq!(
        a.read::<IpPrefix>("PREFIX").unwrap().unwrap().mask,
        Ipv4Addr::new(255, 0, 0, 0)
    );
    assert_eq!(
        a.read::<Seconds>("INTERVAL").unwrap(),
        Some(Seconds(1_500_000))
    );
    assert_eq!(
        a.read::<Bandwidth>("RATE").unwrap(),
        Some(Bandwidth(125_000))
    );
    assert_eq!(a.read::<[u8; 6]>("ETH").unwrap(), Some([0, 1, 2, 3, 4, 5]));
    assert!(a.complete().is_ok());
}

fn v_(x: &[&str]) -> Vec<String> {
    v(x)
}

#[test]
fn reconfigure_keyword_like_click() {
    use click_lang::args::reconfigure_keyword;
    assert_eq!(
        reconfigure_keyword("", Some(0), "CAPACITY", "10"),
        "CAPACITY 10"
    );
    assert_eq!(
        reconfigure_keyword("CAPACITY 10", Some(0), "CAPACITY", "20"),
        "CAPACITY 20"
    );
    assert_eq!(reconfigure_keyword("6", Some(0), "CAPACITY", "7"), "7");
    assert_eq!(
        reconfigure_keyword("6, CAPACITY 2", Some(0), "CAPACITY", "7"),
        "6, CAPACITY 7"
    );
    assert_eq!(reconfigure_keyword("A 1, B 2", None, "A", "3"), "B 2, A 3");
}
