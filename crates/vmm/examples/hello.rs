use clickos_vmm::*;
use std::sync::Arc;
use std::time::Duration;
fn main() {
    let cfg = VmConfig {
        id: 1,
        memory: DEFAULT_MEMORY,
        vnics: vec![],
        fault_injection: false,
        console: Arc::new(|id, t| println!("[{id}] {t}")),
    };
    let vm = Vm::create(&cfg, &mut |_| {}).unwrap();
    for _ in 0..20 {
        vm.wait_notify(Duration::from_millis(50));
        if vm.exit().is_some() {
            break;
        }
    }
    let mb = unsafe { &*(vm.control().add(0x2000) as *const clickos_ring::Mailbox) };
    println!(
        "state {} exit {:?} phases {:?}",
        mb.state.load(std::sync::atomic::Ordering::Relaxed),
        vm.exit(),
        vm.phases()
    );
}
