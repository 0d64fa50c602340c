//! `docs/elements.md` is generated from the element classes' own
//! documentation (`clickos elements --markdown`). This test regenerates it
//! and fails when the committed file was stale, so the change shows up in
//! `git diff` and gets committed.

mod common;
use common::*;

#[test]
fn docs_elements_md_is_current() {
    let r = run_in(None, bin(), &["elements", "--markdown"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert!(r.out.starts_with("# Element reference"));
    for class in [
        "FromDump",
        "ToDump",
        "FromIPSummaryDump",
        "ToIPSummaryDump",
        "Discard",
    ] {
        assert!(
            r.out.contains(&format!("## {class}\n")),
            "{class} missing from the reference"
        );
    }
    let path = root().join("docs/elements.md");
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    if old != r.out {
        std::fs::write(&path, &r.out).unwrap();
        panic!("docs/elements.md was stale; it has been regenerated: commit it");
    }
}
