use click_lang::*;

fn parse(s: &str) -> FlatConfig {
    match parse_config(s, "t.click", &[]) {
        Ok(c) => c,
        Err(e) => panic!(
            "unexpected errors: {:?}",
            e.iter().map(|e| e.to_string()).collect::<Vec<_>>()
        ),
    }
}

fn errs(s: &str) -> Vec<String> {
    match parse_config(s, "t.click", &[]) {
        Ok(c) => panic!("expected errors, got {c:?}"),
        Err(e) => e.iter().map(|e| e.to_string()).collect(),
    }
}

fn names(c: &FlatConfig) -> Vec<&str> {
    c.elements.iter().map(|e| e.name.as_str()).collect()
}

fn conns(c: &FlatConfig) -> Vec<String> {
    c.connections
        .iter()
        .map(|k| {
            format!(
                "{}[{}]->[{}]{}",
                c.elements[k.from].name, k.from_port, k.to_port, c.elements[k.to].name
            )
        })
        .collect()
}

#[test]
fn declarations_and_connections() {
    let c = parse("a :: Queue(10); b, c :: Counter; a -> b; b[1] -> [2] c; a [1] -> c;");
    assert_eq!(names(&c), ["a", "b", "c"]);
    assert_eq!(c.elements[0].class, "Queue");
    assert_eq!(c.elements[0].config, "10");
    assert_eq!(c.elements[1].config, "");
    assert_eq!(conns(&c), ["a[0]->[0]b", "a[1]->[0]c", "b[1]->[2]c"]);
}

#[test]
fn anonymous_naming() {
    let c = parse("InfiniteSource -> q :: Queue -> Discard; Idle -> Idle;");
    assert_eq!(
        names(&c),
        ["InfiniteSource@1", "q", "Discard@3", "Idle@4", "Idle@5"]
    );
    assert_eq!(c.elements[1].class, "Queue");
}

#[test]
fn anonymous_name_conflict_is_bumped() {
    let c = parse("Idle -> Discard; Idle@1 :: Idle;");
    assert_eq!(names(&c), ["Idle@2", "Discard@2", "Idle@1"]);
}

#[test]
fn inline_declarations_in_chain() {
    let c = parse("src :: InfiniteSource(LIMIT 5) -> q :: Queue(20) -> d :: Discard;");
    assert_eq!(names(&c), ["src", "q", "d"]);
    assert_eq!(c.elements[0].config, "LIMIT 5");
    assert_eq!(conns(&c), ["src[0]->[0]q", "q[0]->[0]d"]);
}

#[test]
fn comments_and_quotes() {
    let c = parse("// line comment\n a :: Print(\"a ) // not a comment\", 'x)y') /* block\n comment */ ; a -> Discard");
    assert_eq!(c.elements[0].config, "\"a ) // not a comment\", 'x)y'");
    assert_eq!(c.elements[1].landmark.line, 3);
}

#[test]
fn nested_parens_in_config() {
    let c = parse("a :: Foo(x (y, z) w);");
    assert_eq!(c.elements[0].config, "x (y, z) w");
}

#[test]
fn landmarks() {
    let c = parse("\n\n  a :: Idle;\nb :: Discard;\na -> b;");
    assert_eq!(
        c.elements[0].landmark,
        Landmark {
            file: "t.click".into(),
            line: 3,
            col: 3
        }
    );
    assert_eq!(c.elements[0].landmark.to_string(), "t.click:3");
    assert_eq!(c.connections[0].landmark.line, 5);
}

#[test]
fn line_directives_inside_a_configuration() {
    // Click's lexer-08 test: a directive inside the parentheses is
    // processed and left out of the configuration string
    let c = parse("m :: Message(\n# 100 \"foobar.click\"\n\"test\");\nm2 :: Message(\"test2\");");
    assert_eq!(c.elements[0].config.trim(), "\"test\"");
    assert_eq!(c.elements[0].landmark.to_string(), "t.click:1");
    assert_eq!(c.elements[1].landmark.to_string(), "foobar.click:101");
}

#[test]
fn duplicate_connections_removed() {
    let c = parse("a :: Idle; b :: Discard; a -> b; a -> b; a[0] -> [0]b;");
    assert_eq!(c.connections.len(), 1);
}

#[test]
fn compound_basic() {
    let c = parse(
        "elementclass Foo { input -> q :: Queue -> output }\n\
         src :: Idle; f :: Foo; dst :: Discard; src -> f -> dst;",
    );
    assert_eq!(names(&c), ["src", "dst", "f/q"]);
    assert_eq!(conns(&c), ["src[0]->[0]f/q", "f/q[0]->[0]dst"]);
    assert_eq!(c.elements[2].landmark.line, 1);
}

#[test]
fn compound_formals_positional_and_keyword() {
    let c = parse(
        "elementclass Foo { $cap, BURST $b | input -> q :: Queue($cap) -> u :: Unqueue(BURST $b) -> output }\n\
         Idle -> f :: Foo(100, BURST 8) -> Discard;",
    );
    let q = c.element_index("f/q").unwrap();
    let u = c.element_index("f/u").unwrap();
    assert_eq!(c.elements[q].config, "100");
    assert_eq!(c.elements[u].config, "BURST 8");
    // keyword first works too
    let c = parse(
        "elementclass Foo { $cap, BURST $b | input -> q :: Queue($cap, $b) -> output }\n\
         Idle -> f :: Foo(BURST 4, 7) -> Discard;",
    );
    assert_eq!(c.elements[c.element_index("f/q").unwrap()].config, "7, 4");
}

#[test]
fn compound_wrong_arg_count() {
    let e = errs("elementclass Foo { $a, $b | input -> output }\nIdle -> f :: Foo(1) -> Discard;");
    assert!(
        e[0].starts_with("t.click:2: no match for 'Foo[1 argument, 1 input, 1 output]'"),
        "{e:?}"
    );
}

#[test]
fn nested_compounds_and_references() {
    let c = parse(
        "elementclass Inner { $x | input -> c :: Counter($x) -> output }\n\
         elementclass Outer { $y | input -> i :: Inner($y) -> j :: Inner(z$y) -> output }\n\
         Idle -> o :: Outer(7) -> Discard;",
    );
    assert_eq!(names(&c), ["Idle@1", "Discard@3", "o/i/c", "o/j/c"]);
    assert_eq!(c.elements[2].config, "7");
    assert_eq!(c.elements[3].config, "z7");
    assert_eq!(
        conns(&c),
        [
            "Idle@1[0]->[0]o/i/c",
            "o/i/c[0]->[0]o/j/c",
            "o/j/c[0]->[0]Discard@3"
        ]
    );
}

#[test]
fn nested_definition_inside_compound() {
    let c = parse(
        "elementclass Outer { elementclass In { input -> Counter -> output } input -> In -> output }\n\
         Idle -> Outer -> Discard;",
    );
    assert_eq!(names(&c), ["Idle@1", "Discard@3", "Outer@2/In@1/Counter@1"]);
}

#[test]
fn anonymous_compound() {
    let c = parse("Idle -> { input -> Counter -> output } -> Discard;");
    assert_eq!(names(&c), ["Idle@1", "Discard@3", "@2/Counter@1"]);
    assert_eq!(conns(&c).len(), 2);
}

#[test]
fn compound_multiple_ports() {
    let c = parse(
        "elementclass Two { input[0] -> a :: Counter -> [1] output; input[1] -> b :: Counter -> [0]output }\n\
         s1 :: Idle; s2 :: Idle; t :: Two; d0 :: Discard; d1 :: Discard;\n\
         s1 -> [0] t; s2 -> [1] t; t[0] -> d0; t[1] -> d1;",
    );
    assert_eq!(
        conns(&c),
        [
            "s1[0]->[0]t/a",
            "s2[0]->[0]t/b",
            "t/a[0]->[0]d1",
            "t/b[0]->[0]d0"
        ]
    );
}

#[test]
fn compound_passthrough() {
    let c = parse("elementclass P { input -> output } Idle -> P -> P -> Discard;");
    assert_eq!(conns(&c), ["Idle@1[0]->[0]Discard@4"]);
}

#[test]
fn compound_port_errors() {
    let e = errs("elementclass C { input -> Counter -> output } a :: C; Idle -> [1] a -> Discard;");
    assert!(e.iter().any(|m| m.contains("'a' has no input 1")), "{e:?}");
    assert!(e.iter().any(|m| m.contains("'a' input 0 unused")), "{e:?}");
    let e = errs("elementclass C { input -> Counter -> [1] output }");
    assert!(
        e.iter().any(|m| m.contains("'C' output 0 missing")),
        "{e:?}"
    );
    let e = errs("elementclass C { Idle -> input; output -> Discard }");
    assert!(
        e.iter()
            .any(|m| m.contains("pseudoelement 'input' may only be used as output")),
        "{e:?}"
    );
    assert!(
        e.iter()
            .any(|m| m.contains("pseudoelement 'output' may only be used as input")),
        "{e:?}"
    );
}

#[test]
fn synonym_classes() {
    let c = parse("elementclass MyQ Queue; q :: MyQ(5); Idle -> MyQ -> Discard;");
    assert_eq!(c.elements[0].class, "Queue");
    assert_eq!(names(&c), ["q", "Idle@2", "MyQ@3", "Discard@4"]);
    let c = parse(
        "elementclass A { input -> Counter -> output } elementclass B A; Idle -> B -> Discard;",
    );
    assert_eq!(names(&c), ["Idle@1", "Discard@3", "B@2/Counter@1"]);
}

#[test]
fn overloads() {
    let c = parse(
        "elementclass X { input -> a :: Counter -> output || input -> b :: Counter -> output; input[1] -> b }\n\
         s :: Idle; t :: Idle; x1 :: X; x2 :: X; s -> x1 -> Discard; s -> x2 -> Discard; t -> [1] x2;",
    );
    assert!(c.element_index("x1/a").is_some());
    assert!(c.element_index("x2/b").is_some());
}

#[test]
fn defines_and_variables() {
    let c = parse("define($N 10, $NAME foo); q :: Queue($N); p :: Print(${NAME}x, $UNKNOWN, '$N', \"$N\", ${Z-def});");
    assert_eq!(c.elements[0].config, "10");
    assert_eq!(c.elements[1].config, "foox, $UNKNOWN, '$N', \"10\", def");
}

#[test]
fn caller_defines_override() {
    let defs = vec![
        ("N".to_string(), "99".to_string()),
        ("EXTRA".to_string(), "e".to_string()),
    ];
    let c = parse_config("define($N 10); q :: Queue($N, $EXTRA);", "t", &defs).unwrap();
    assert_eq!(c.elements[0].config, "99, e");
}

#[test]
fn variable_in_double_quotes_is_escaped() {
    let c = parse("define($S a\\b); p :: Print(\"$S\");");
    assert_eq!(c.elements[0].config, "\"a\\\\b\"");
}

#[test]
fn compound_local_define() {
    let c = parse("elementclass C { $a | define($b $a$a); input -> q :: Queue($b) -> output } Idle -> C(x) -> Discard;");
    assert_eq!(c.elements[c.element_index("C@2/q").unwrap()].config, "xx");
}

#[test]
fn requirements() {
    let c = parse("require(foo, package \"bar\"); Idle -> Discard;");
    assert_eq!(c.requirements, ["foo", "package bar"]);
}

#[test]
fn error_redeclaration() {
    let e = errs("a :: Idle;\na :: Discard;");
    assert_eq!(
        e,
        [
            "t.click:2: redeclaration of element 'a'",
            "t.click:1: element 'a' previously declared here"
        ]
    );
}

#[test]
fn error_syntax() {
    let e = errs("a :: Idle; a -> ) ;");
    assert!(
        e.iter().any(|m| m == "t.click:1: syntax error near ')'"),
        "{e:?}"
    );
    let e = errs("a :: Idle; a -> b;");
    assert_eq!(e, ["t.click:1: undeclared element 'b'"]);
    let e = errs("input -> Discard;");
    assert_eq!(e, ["t.click:1: undeclared element 'input'"]);
    let e = errs("elementclass A { input -> output ");
    assert!(e.iter().any(|m| m.contains("expected '}'")), "{e:?}");
    let e = errs("a :: ;");
    assert!(
        e.iter()
            .any(|m| m.contains("missing element type in declaration")),
        "{e:?}"
    );
    let e = errs("Idle [0] -> [x] Discard;");
    assert!(
        e.iter()
            .any(|m| m.contains("port number should be integer")),
        "{e:?}"
    );
    let e = errs("define(N 3);");
    assert_eq!(e, ["t.click:1: bad 'define' declaration: not a variable"]);
    let e = errs("Idle -> Discard [0];");
    assert!(
        e.iter()
            .any(|m| m.contains("output ports ignored at end of chain")),
        "{e:?}"
    );
    let e = errs("[0] Idle -> Discard;");
    assert!(
        e.iter()
            .any(|m| m.contains("input ports ignored at start of chain")),
        "{e:?}"
    );
    let e = errs("123 :: Idle;");
    assert!(e.iter().any(|m| m.contains("all-digit component")), "{e:?}");
}

#[test]
fn collects_multiple_errors() {
    let e = errs("a :: Idle; a :: Idle; b -> a; c -> a;");
    assert!(e.len() >= 3, "{e:?}");
}

#[test]
fn is_class_option() {
    let known = |n: &str| n == "queue";
    let opts = ParseOptions {
        is_class: Some(&known),
    };
    let c = parse_config_with("queue -> d :: Discard;", "t", &[], &opts).unwrap();
    assert_eq!(c.elements[0].name, "queue@1");
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let s = "{".repeat(10000);
    assert!(parse_config(&s, "t", &[]).is_err());
    let s = format!(
        "Idle -> {} -> Discard",
        "{ input -> ".repeat(500) + &" output }".repeat(500)
    );
    assert!(parse_config(&s, "t", &[]).is_err());
}

#[test]
fn exponential_expansion_is_bounded() {
    let mut s = String::from("elementclass C0 { input -> Counter -> output }\n");
    for i in 1..30 {
        s.push_str(&format!(
            "elementclass C{i} {{ input -> C{p} -> C{p} -> output }}\n",
            p = i - 1
        ));
    }
    s.push_str("Idle -> C29 -> Discard;");
    assert!(parse_config(&s, "t", &[]).is_err());
}

#[test]
fn unparse_format() {
    let c =
        parse("require(foo); a :: Idle; b :: Queue(5); c :: Discard; a -> b -> c; b[1] -> [1]c;");
    assert_eq!(
        unparse(&c),
        "require(foo);\n\na :: Idle;\nb :: Queue(5);\nc :: Discard;\n\na -> b\n    -> c;\nb [1] -> [1] c;\n"
    );
}

#[test]
fn unparse_round_trip() {
    let srcs = [
        "Idle -> q :: Queue(10) -> Unqueue -> Discard;",
        "elementclass Foo { $cap | input -> q :: Queue($cap) -> output } s :: Idle; s -> f :: Foo(5) -> Discard; s -> Foo(6) -> Discard;",
        "a :: Idle; b :: Tee(2); a -> b; b[1] -> Discard; b -> Discard; b[0] -> c :: Counter -> b;",
        "require(x, y); p :: Print(\"hi, there\", 'a)b');",
    ];
    for s in srcs {
        let c = parse(s);
        let u = unparse(&c);
        let c2 = parse_config(&u, "t.click", &[]).unwrap_or_else(|e| panic!("{u}\n{e:?}"));
        let strip = |c: &FlatConfig| {
            (
                c.elements
                    .iter()
                    .map(|e| (e.name.clone(), e.class.clone(), e.config.clone()))
                    .collect::<Vec<_>>(),
                c.connections
                    .iter()
                    .map(|k| (k.from, k.from_port, k.to, k.to_port))
                    .collect::<Vec<_>>(),
                c.requirements.clone(),
            )
        };
        assert_eq!(strip(&c), strip(&c2), "{u}");
    }
}

#[test]
fn line_directive() {
    let c = parse("# 10 \"other.click\"\na :: Idle;");
    assert_eq!(c.elements[0].landmark.to_string(), "other.click:10");
}

#[test]
fn indexed_variables_pick_words() {
    // ${v[N]} is the Nth word of $v; N can itself be a variable; past the
    // end it is empty
    let c = parse(
        "elementclass F { $a, $n | input -> p :: P(\"${a[0]}\", ${a[2]}, <${a[9]}>, ${a[$n]}) -> output }
         i :: I -> f :: F(x y z, 1) -> o :: O;",
    );
    let p = c.elements.iter().find(|e| e.name == "f/p").unwrap();
    assert_eq!(p.config, "\"x\", z, <>, y");
}

#[test]
fn port_lists_element_sets_and_many_to_many() {
    // a port list on one side fans out from (or into) the single port on
    // the other side
    let c = parse("c :: C; i :: I; c [0, 1, 2] -> i;");
    assert_eq!(
        sorted(conns(&c)),
        sorted_strs(&["c[0]->[0]i", "c[1]->[0]i", "c[2]->[0]i"])
    );
    let c = parse("s :: S; t :: T; s -> [1, 0] t;");
    assert_eq!(
        sorted(conns(&c)),
        sorted_strs(&["s[0]->[1]t", "s[0]->[0]t"])
    );
    // element sets: several elements on one side of an arrow
    let c = parse("a, b :: A; d :: D; a, b -> d;");
    assert_eq!(
        sorted(conns(&c)),
        sorted_strs(&["a[0]->[0]d", "b[0]->[0]d"])
    );
    // many-to-many needs '=>', and pairs ports in order
    let c = parse("x :: X; y :: Y; x [0, 1] => [1, 0] y;");
    assert_eq!(
        sorted(conns(&c)),
        sorted_strs(&["x[0]->[1]y", "x[1]->[0]y"])
    );
    // '=>' reads a missing port list as expandable
    let c = parse("x :: X; y, z :: Y; x => y, z;");
    assert_eq!(
        sorted(conns(&c)),
        sorted_strs(&["x[0]->[0]y", "x[1]->[0]z"])
    );
    // an expandable list grows to match the other side
    let c = parse("x :: X; y :: Y; x [2, ] => [0, 1, 2] y;");
    assert_eq!(
        sorted(conns(&c)),
        sorted_strs(&["x[2]->[0]y", "x[3]->[1]y", "x[4]->[2]y"])
    );
    let e = errs("x :: X; y :: Y; x [0, 1] -> [0, 1] y;");
    assert!(
        e.iter()
            .any(|l| l.contains("many-to-many connections require '=>'")),
        "{e:?}"
    );
    let e = errs("x :: X; y :: Y; x [0, 1] => [0, 1, 2] y;");
    assert!(
        e.iter()
            .any(|l| l.contains("connection mismatch: 2 outputs connected to 3 inputs")),
        "{e:?}"
    );
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn sorted_strs(v: &[&str]) -> Vec<String> {
    sorted(v.iter().map(|s| s.to_string()).collect())
}

/// Element groups `( ... )`: their elements belong to the enclosing scope,
/// `[N] ->` at the start of a chain and `-> [N]` at its end are the
/// group's own ports, and a group's port lists are implied, so `=>`
/// joins ports pairwise (Click's Bypass-02 and Shaper-01 shapes).
#[test]
fn element_groups_and_implicit_ports() {
    let c = parse(
        "s :: Switch(0)
         => ( [0] -> c0 :: Counter -> [0];
              [1] -> c1 :: Counter -> [1] )
         => r :: RoundRobinSched -> d :: Discard;",
    );
    assert!(
        names(&c).contains(&"c0") && names(&c).contains(&"c1"),
        "{:?}",
        names(&c)
    );
    assert!(!names(&c)
        .iter()
        .any(|n| n.contains("group") || n.contains("input")));
    let mut k = conns(&c);
    k.sort();
    assert_eq!(
        k,
        [
            "c0[0]->[0]r",
            "c1[0]->[1]r",
            "r[0]->[0]d",
            "s[0]->[0]c0",
            "s[1]->[0]c1"
        ]
    );
    // `input`/`output` by name, groups inside groups, a group at the start
    let c = parse(
        "a :: Idle -> ( input -> ( [0] -> x :: Counter -> [0] ) -> output ) -> b :: Discard;",
    );
    assert_eq!(conns(&c), ["a[0]->[0]x", "x[0]->[0]b"]);
    // explicit ports on a group override the implied ones
    let c = parse(
        "t :: Tee(2); t[1] -> [0]( [0] -> y :: Counter -> [0] ) -> Discard; t[0] -> Discard;",
    );
    assert!(
        conns(&c).contains(&"t[1]->[0]y".to_string()),
        "{:?}",
        conns(&c)
    );
    // implicit ports inside a compound
    let c =
        parse("elementclass E { [0] -> z :: Counter -> [0] } a :: Idle -> e :: E -> b :: Discard;");
    assert_eq!(conns(&c), ["a[0]->[0]e/z", "e/z[0]->[0]b"]);
    // errors: an unclosed group, a group's port used but not provided
    let e = errs("Idle -> ( [0] -> Counter -> [0] -> Discard;");
    assert!(e.iter().any(|l| l.contains("expected ')'")), "{e:?}");
    let e = errs("t :: Tee(2); t[0] -> ( [0] -> Discard ) [1] -> Discard; t[1] -> Discard;");
    assert!(e.iter().any(|l| l.contains("has no output 1")), "{e:?}");
}
