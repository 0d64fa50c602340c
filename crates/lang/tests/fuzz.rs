//! Property tests: nothing in this crate panics on arbitrary input.
use click_lang::*;
use proptest::prelude::*;

fn config_text() -> impl Strategy<Value = String> {
    let atoms = prop::sample::select(vec![
        "a",
        "b",
        "Queue",
        "::",
        "->",
        "=>",
        "[",
        "]",
        "(",
        ")",
        "{",
        "}",
        ",",
        ";",
        "|",
        "||",
        "...",
        "$x",
        "${x}",
        "input",
        "output",
        "elementclass",
        "define",
        "require",
        "\"",
        "'",
        "//",
        "/*",
        "*/",
        "\n",
        " ",
        "0",
        "1",
        "Foo",
        "X",
        "@",
        "/",
        "\\<",
        ">",
        "#",
        "é",
        "\u{1F600}",
    ]);
    prop_oneof![
        prop::collection::vec(atoms, 0..60).prop_map(|v| v.join(" ")),
        prop::collection::vec(
            prop::sample::select(vec![
                "{", "}", "(", ")", "[", "]", "-> ", "=> ", "x", "[0]", ";"
            ]),
            0..400
        )
        .prop_map(|v| v.concat()),
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn parse_never_panics(s in config_text()) {
        let defs = vec![("x".to_string(), "1".to_string())];
        if let Ok(c) = parse_config(&s, "f", &defs) {
            let u = unparse(&c);
            let _ = parse_config(&u, "f", &[]);
        }
    }

    #[test]
    fn arg_parsers_never_panic(s in any::<String>()) {
        let _ = split_args(&s);
        let _ = split_words(&s);
        let _ = unquote(&s);
        let _ = uncomment(&s);
        let _ = parse_bool(&s);
        let _ = parse_i64(&s);
        let _ = parse_u64(&s);
        let _ = parse_f64(&s);
        let _ = parse_ipv4(&s);
        let _ = parse_ipv4_prefix(&s);
        let _ = parse_ether(&s);
        let _ = parse_time_ns(&s);
        let _ = parse_bandwidth(&s);
        let _ = parse_string(&s);
        let mut a = Args::new(&s);
        let _ = a.read_p::<u32>("A");
        let _ = a.read::<Seconds>("B");
        let _ = a.read_all::<IpPrefix>("C");
        let _ = a.read_mp::<String>("D");
        let _ = a.complete();
    }

    #[test]
    fn numeric_like_strings(s in "[-+0-9.xXeE_a-fA-F:/ ]{0,24}(s|ms|us|ns|min|h|d|bps|Mbps|kBps)?") {
        let _ = parse_i64(&s);
        let _ = parse_u64(&s);
        let _ = parse_f64(&s);
        let _ = parse_time_ns(&s);
        let _ = parse_bandwidth(&s);
        let _ = parse_ipv4_prefix(&s);
        let _ = parse_ether(&s);
    }

    #[test]
    fn split_args_round_trip(v in prop::collection::vec("[a-z0-9]{1,5}", 1..6)) {
        let joined = v.join(", ");
        prop_assert_eq!(split_args(&joined), v);
    }
}
