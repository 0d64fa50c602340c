//! `docs/elements.md` is generated from the element classes' own
//! documentation (`clickos elements --markdown`). This test fails, without
//! writing anything, when the committed file differs; regenerate it with
//! `cargo run -p clickos -- elements --markdown > docs/elements.md` or
//! `UPDATE_REFERENCE=1 cargo test -p clickos --test reference`.

mod common;
use common::*;

#[test]
fn docs_elements_md_is_current() {
    let r = run_in(None, bin(), &["elements", "--markdown"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert!(r.out.starts_with("# Element reference"));
    for class in [
        "FromDevice",
        "FromDevice (inside an instance)",
        "ToDevice (inside an instance)",
        "FromNetFront",
        "ToNetFront",
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
    if old == r.out {
        return;
    }
    if std::env::var("UPDATE_REFERENCE").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &r.out).unwrap();
        eprintln!("docs/elements.md regenerated (UPDATE_REFERENCE=1): commit it");
        return;
    }
    let line = old
        .lines()
        .zip(r.out.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| old.lines().count().min(r.out.lines().count()))
        + 1;
    panic!(
        "docs/elements.md is stale (first difference at line {line}); regenerate it with\n  \
         cargo run -p clickos -- elements --markdown > docs/elements.md\n\
         or UPDATE_REFERENCE=1 cargo test -p clickos --test reference, and commit it"
    );
}

/// ClickOS's names for the vNIC elements are documented "inside an
/// instance" beside the user level's FromDevice/ToDevice, which `clickos
/// run` keeps.
#[test]
fn instance_variants_are_documented_beside_the_user_level_classes() {
    let r = run_in(None, bin(), &["elements"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    for line in [
        "FromDevice (inside an instance)",
        "ToDevice (inside an instance)",
    ] {
        assert!(r.out.contains(line), "{line} missing from:\n{}", r.out);
    }
    let r = run_in(None, bin(), &["elements", "ToDevice"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let inst = r
        .out
        .find("ToDevice (inside an instance):")
        .expect("the instance's ToDevice");
    assert!(r.out[..inst].contains("(user level)"), "{}", r.out);
    assert!(r.out[inst..].contains("ToDevice([DEVID, BURST, KEYWORDS])"));
}
