//! Property tests: nothing in this crate panics on arbitrary input, a
//! parsed configuration survives unparse -> parse unchanged, and generated
//! configurations parse to exactly the elements and connections written.
use click_lang::*;
use proptest::prelude::*;

/// A configuration without its landmarks: (elements as (name, class,
/// config), connections as (from, port, to, port) by name, requirements).
type Shape = (
    Vec<(String, String, String)>,
    Vec<(String, usize, String, usize)>,
    Vec<String>,
);

fn shape(c: &FlatConfig) -> Shape {
    (
        c.elements
            .iter()
            .map(|e| (e.name.clone(), e.class.clone(), e.config.clone()))
            .collect(),
        c.connections
            .iter()
            .map(|k| {
                (
                    c.elements[k.from].name.clone(),
                    k.from_port,
                    c.elements[k.to].name.clone(),
                    k.to_port,
                )
            })
            .collect(),
        c.requirements.clone(),
    )
}

/// Unparses `c`, parses the text again and checks nothing changed.
fn round_trip(c: &FlatConfig) -> Result<(), TestCaseError> {
    let u = unparse(c);
    let again = parse_config(&u, "u", &[])
        .map_err(|e| TestCaseError::fail(format!("unparsed text does not parse: {e:?}\n{u}")))?;
    prop_assert_eq!(shape(&again), shape(c), "unparsed:\n{}", u);
    Ok(())
}

/// A small random router: declared elements with arguments, then
/// connections with explicit ports.
#[derive(Clone, Debug)]
struct Gen {
    elements: Vec<(String, String, Vec<String>)>,
    connections: Vec<(usize, usize, usize, usize)>,
}

fn generated() -> impl Strategy<Value = Gen> {
    let class = prop::sample::select(vec![
        "Queue", "Counter", "Discard", "Idle", "Tee", "Foo", "IPFilter",
    ]);
    let arg = prop::sample::select(vec![
        "1",
        "10.0.0.1",
        "allow tcp port 80",
        "\"a, b\"",
        "LIMIT 5",
        "-",
        "12/0800",
        "ab(c, d)e",
        "x y z",
    ]);
    (1usize..7)
        .prop_flat_map(move |n| {
            (
                prop::collection::vec((class.clone(), prop::collection::vec(arg.clone(), 0..4)), n),
                prop::collection::vec((0..n, 0usize..3, 0..n, 0usize..3), 0..10),
            )
        })
        .prop_map(|(els, conns)| Gen {
            elements: els
                .into_iter()
                .enumerate()
                .map(|(i, (c, a))| {
                    (
                        format!("e{i}"),
                        c.to_string(),
                        a.iter().map(|s| s.to_string()).collect(),
                    )
                })
                .collect(),
            connections: conns,
        })
}

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
    fn parse_never_panics_and_round_trips(s in config_text()) {
        let defs = vec![("x".to_string(), "1".to_string())];
        if let Ok(c) = parse_config(&s, "f", &defs) {
            round_trip(&c)?;
        }
    }

    #[test]
    fn generated_configurations_parse_as_written(g in generated()) {
        let mut text = String::new();
        for (name, class, args) in &g.elements {
            text.push_str(&format!("{name} :: {class}({});\n", args.join(", ")));
        }
        for (f, fp, t, tp) in &g.connections {
            text.push_str(&format!("e{f} [{fp}] -> [{tp}] e{t};\n"));
        }
        let c = parse_config(&text, "g", &[])
            .map_err(|e| TestCaseError::fail(format!("{e:?}\n{text}")))?;
        let want_elements: Vec<(String, String, String)> = g
            .elements
            .iter()
            .map(|(n, c, a)| (n.clone(), c.clone(), a.join(", ")))
            .collect();
        let want_connections: Vec<(String, usize, String, usize)> = g
            .connections
            .iter()
            .map(|(f, fp, t, tp)| (format!("e{f}"), *fp, format!("e{t}"), *tp))
            .collect();
        let (elements, mut connections, _) = shape(&c);
        prop_assert_eq!(elements, want_elements, "{}", text);
        // duplicates are kept once; order is not part of the meaning
        let mut want = want_connections;
        want.sort();
        want.dedup();
        connections.sort();
        prop_assert_eq!(connections, want, "{}", text);
        round_trip(&c)?;
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
