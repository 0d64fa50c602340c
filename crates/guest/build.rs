//! Links the micro-VM image (`x86_64-unknown-none` only) with `link.ld` at
//! `clickos_ring::layout::IMAGE_GPA`. Host builds are unaffected.
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    println!("cargo:rerun-if-changed=link.ld");
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("none") {
        println!("cargo:rustc-link-arg-bins=-T{dir}/link.ld");
        println!("cargo:rustc-link-arg-bins=--no-dynamic-linker");
        println!("cargo:rustc-link-arg-bins=-znorelro");
        println!("cargo:rustc-link-arg-bins=--gc-sections");
        println!("cargo:rustc-link-arg-bins=-zmax-page-size=4096");
    }
}
