//! The micro-VM guest image (`x86_64-unknown-none`). Built by the VMM's
//! build script; on the host target this binary only explains itself.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

#[cfg(not(target_os = "none"))]
fn main() {
    eprintln!(
        "clickos-guest is the micro-VM image; it is built for x86_64-unknown-none \
         and embedded in the clickos binary (see crates/vmm/build.rs)"
    );
    std::process::exit(2);
}
