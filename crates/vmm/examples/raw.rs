use clickos_vmm::*;
use std::sync::Arc;
fn main() {
    let cfg = VmConfig {
        id: 1,
        memory: DEFAULT_MEMORY,
        vnics: vec![],
        fault_injection: false,
        console: Arc::new(|id, t| println!("[{id}] {t}")),
    };
    let which = std::env::args().nth(1).unwrap_or_default();
    let code: Vec<u8> = match which.as_str() {
        // mov dx,0x504; mov eax,7; out dx,eax
        "exit" => vec![0x66, 0xba, 0x04, 0x05, 0xb8, 7, 0, 0, 0, 0xef],
        // push rax (stack page fault); then exit
        "push" => vec![0x50, 0x66, 0xba, 0x04, 0x05, 0xb8, 7, 0, 0, 0, 0xef],
        // write to heap page at 0x300000: mov byte [0x300000], 1 ; exit
        "heap" => vec![
            0xc6, 0x04, 0x25, 0x00, 0x00, 0x30, 0x00, 0x01, 0x66, 0xba, 0x04, 0x05, 0xb8, 7, 0, 0,
            0, 0xef,
        ],
        // read boot info then exit
        "read" => vec![
            0x8a, 0x04, 0x25, 0x00, 0x10, 0x00, 0x00, 0x66, 0xba, 0x04, 0x05, 0xb8, 7, 0, 0, 0,
            0xef,
        ],
        // out CTRL_DONE (ioeventfd) then exit
        "kick" => vec![
            0x66, 0xba, 0x03, 0x05, 0x31, 0xc0, 0xef, 0x66, 0xba, 0x04, 0x05, 0xb8, 7, 0, 0, 0,
            0xef,
        ],
        // out IDLE twice then exit
        "idle" => vec![
            0x66, 0xba, 0x01, 0x05, 0x31, 0xc0, 0xef, 0xef, 0x66, 0xba, 0x04, 0x05, 0xb8, 7, 0, 0,
            0, 0xef,
        ],
        _ => vec![0x0f, 0x0b],
    };
    let vm = Vm::create_raw(&cfg, &code).unwrap();
    vm.join();
    println!("{which}: {:?}", vm.exit());
}
