//! The layering the crate promises, checked on its source: elements reach
//! the driver only through the selector, and neither the selector nor the
//! run loop knows an element. A file that breaks it fails here, naming
//! the line.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for e in entries {
        let p = e.expect("directory entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn src(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(rel)
}

/// Lines of `file` that name one of `modules` as a path (`crate::m`,
/// `super::m`, `m::`), outside comments.
fn mentions(file: &Path, modules: &[&str]) -> Vec<String> {
    let text = std::fs::read_to_string(file).expect("read source");
    let mut hits = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for m in modules {
            let named = code.contains(&format!("crate::{m}"))
                || code.contains(&format!("super::{m}"))
                || code.contains(&format!("{m}::"));
            if named {
                hits.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    hits
}

/// The driver's modules: what runs routers, as opposed to what the
/// routers' elements may use (the selector, the console, `sys`).
const DRIVER: &[&str] = &["driver", "runloop", "hotswap", "threads", "config"];

#[test]
fn elements_do_not_import_the_driver() {
    let mut files = Vec::new();
    rust_files(&src("elements"), &mut files);
    assert!(
        files.len() >= 10,
        "found only {} element files",
        files.len()
    );
    let hits: Vec<String> = files.iter().flat_map(|f| mentions(f, DRIVER)).collect();
    assert!(
        hits.is_empty(),
        "element files use the driver (use crate::selector instead):\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_selector_knows_no_driver_part_and_no_element() {
    let mut modules = DRIVER.to_vec();
    modules.push("elements");
    let hits = mentions(&src("selector.rs"), &modules);
    assert!(hits.is_empty(), "{}", hits.join("\n"));
}

#[test]
fn the_run_loop_knows_no_element() {
    let hits = mentions(&src("runloop.rs"), &["elements", "threads", "driver"]);
    assert!(hits.is_empty(), "{}", hits.join("\n"));
}

#[test]
fn the_check_sees_a_driver_import() {
    let dir = std::env::temp_dir().join(format!("layering-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let f = dir.join("bad.rs");
    std::fs::write(
        &f,
        "use crate::driver::selector;\n// crate::driver in a comment\n",
    )
    .expect("write");
    let hits = mentions(&f, DRIVER);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(hits.len(), 1, "{hits:?}");
}
