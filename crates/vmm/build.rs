//! Builds the micro-VM guest image (`clickos-guest` for
//! `x86_64-unknown-none`) with a nested cargo and puts the ELF in OUT_DIR,
//! where `src/image.rs` embeds it.
//!
//! The nested build uses its own target directory (`target/guest`), so it
//! does not wait for the outer build's lock, and its own flags: the
//! workspace's release profile (fat LTO) plus `-C panic=abort` (profiles
//! cannot set a per-target panic strategy; the prebuilt `core` for this
//! target is panic=abort) and the static relocation model (fixed PT_LOAD
//! addresses at IMAGE_GPA). Nothing of the outer build's flags leaks in.
use std::path::{Path, PathBuf};
use std::process::Command;

const GUEST_RUSTFLAGS: &[&str] = &["-Cpanic=abort", "-Crelocation-model=static"];

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let ws = manifest.parent().unwrap().parent().unwrap().to_path_buf();
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-changed=build.rs");
    for c in ["guest", "click", "lang", "wire", "classify", "ring"] {
        let d = ws.join("crates").join(c);
        for f in ["src", "Cargo.toml", "build.rs", "link.ld"] {
            if d.join(f).exists() {
                println!("cargo:rerun-if-changed={}", d.join(f).display());
            }
        }
    }
    for f in ["Cargo.toml", "Cargo.lock", "rust-toolchain.toml"] {
        println!("cargo:rerun-if-changed={}", ws.join(f).display());
    }
    println!("cargo:rerun-if-env-changed=CLICKOS_GUEST_ELF");

    let dest = out.join("clickos-guest.elf");
    // An externally built image (e.g. a cross build) can be supplied.
    if let Ok(p) = std::env::var("CLICKOS_GUEST_ELF") {
        std::fs::copy(&p, &dest).unwrap_or_else(|e| panic!("copy {p}: {e}"));
        return;
    }
    ensure_guest_target(&ws);
    let target_dir = ws.join("target").join("guest");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&ws)
        .args([
            "build",
            "-p",
            "clickos-guest",
            "--bin",
            "clickos-guest",
            "--release",
        ])
        .args(["--target", "x86_64-unknown-none"])
        .arg("--target-dir")
        .arg(&target_dir);
    // Keep the outer build's settings out of the guest build.
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("CARGO_PROFILE_")
            || k.starts_with("CARGO_BUILD_")
            || k.starts_with("CARGO_TARGET_")
            || k.starts_with("CARGO_CFG_")
            || k.starts_with("CARGO_FEATURE_")
            || k.starts_with("CARGO_PKG_")
            || k.starts_with("CARGO_ENCODED_")
            || k.starts_with("DEP_")
            || matches!(
                k.as_str(),
                "RUSTFLAGS"
                    | "RUSTDOCFLAGS"
                    | "RUSTC_WRAPPER"
                    | "RUSTC_WORKSPACE_WRAPPER"
                    | "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "CARGO_CRATE_NAME"
                    | "OUT_DIR"
                    | "TARGET"
                    | "HOST"
                    | "PROFILE"
                    | "OPT_LEVEL"
                    | "DEBUG"
                    | "NUM_JOBS"
                    | "RUSTC_LINKER"
                    | "CLIPPY_ARGS"
                    | "CLIPPY_CONF_DIR"
                    | "__CARGO_FIX_PLZ"
            )
        {
            cmd.env_remove(&k);
        }
    }
    cmd.env("CARGO_ENCODED_RUSTFLAGS", GUEST_RUSTFLAGS.join("\x1f"));
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run cargo for the guest image: {e}"));
    if !status.success() {
        panic!("building the guest image (clickos-guest for x86_64-unknown-none) failed: {status}");
    }
    let elf = target_dir.join("x86_64-unknown-none/release/clickos-guest");
    copy_if_changed(&elf, &dest);
}

/// The guest needs the `x86_64-unknown-none` standard library (`core`,
/// `alloc`). `rust-toolchain.toml` names the target, but rustup only
/// installs a toolchain file's targets together with the toolchain itself:
/// a machine that already had the pinned toolchain lacks it. Install it
/// here, so the README's first command works on a fresh machine.
fn ensure_guest_target(ws: &Path) {
    const TARGET: &str = "x86_64-unknown-none";
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let installed = |root: &Path| root.join("lib/rustlib").join(TARGET).join("lib").is_dir();
    if sysroot.as_deref().is_some_and(installed) {
        return;
    }
    println!(
        "cargo:warning=the {TARGET} target (the micro-VM guest's) is missing; installing it with rustup"
    );
    let mut cmd = Command::new("rustup");
    cmd.current_dir(ws).args(["target", "add", TARGET]);
    // Add it to the toolchain this build runs with, not rustup's default.
    if let Some(toolchain) = sysroot
        .as_deref()
        .and_then(|r| r.file_name())
        .and_then(|n| n.to_str())
    {
        cmd.args(["--toolchain", toolchain]);
    }
    match cmd.status() {
        Ok(s) if s.success() => {}
        Ok(s) => panic!(
            "`rustup target add {TARGET}` failed ({s}); install the target by hand \
             (scripts/setup does) or set CLICKOS_GUEST_ELF to a prebuilt guest image"
        ),
        Err(e) => panic!(
            "the {TARGET} target is not installed and rustup cannot be run ({e}); \
             install the target for this toolchain or set CLICKOS_GUEST_ELF to a prebuilt guest image"
        ),
    }
}

fn copy_if_changed(from: &Path, to: &Path) {
    let new = std::fs::read(from).unwrap_or_else(|e| panic!("read {}: {e}", from.display()));
    if std::fs::read(to).ok().as_deref() != Some(&new[..]) {
        std::fs::write(to, &new).unwrap_or_else(|e| panic!("write {}: {e}", to.display()));
    }
}
