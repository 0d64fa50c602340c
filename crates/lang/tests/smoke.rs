use click_lang::*;

#[test]
fn smoke() {
    let c = parse_config("a :: Queue(10); Idle -> a -> Discard;", "f.click", &[]).unwrap();
    let s = unparse(&c);
    println!("{s}");
    let names: Vec<_> = c.elements.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["a", "Idle@2", "Discard@3"]);
}
