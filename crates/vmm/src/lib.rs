//! The ClickOS KVM monitor: one micro-VM per Click instance, entered
//! directly in ring 3 (see `shared/MICROVM.md`: under PVM, guest ring 0 is
//! emulated and ~3000× slower, ring 3 runs natively).
//!
//! A [`Vm`] owns guest RAM (a memfd, with the guest image mapped privately
//! over its image range so text is shared between instances), one memfd
//! per vNIC (its own memslot), the wake/notify/kick eventfds, and a vCPU
//! thread that runs the guest and serves its hypercalls
//! (`clickos_ring::layout::port`). The layout is `clickos_ring::layout`.
//!
//! ```text
//! Vm::create(&config, prepare)  → control region written, prepare() called, guest running
//! vm.wake() / vm.wait_notify(t) / vm.wait_vnic(k, t)
//! vm.exit()                      → Some(Exit) once ended
//! vm.kill(why); drop(vm)
//! vm.snapshot(note) → bytes      → the guest paused (safe point), its state written
//! vm.unpause()  or  vm.kill(why)
//! Vm::restore(&snapshot::parse(bytes)?, id, console) → running again
//! ```

mod boot;
mod image;
mod seccomp;
pub mod snapshot;
mod vcpu;

use clickos_ring::layout::{self as L, BootInfo, VnicInfo};
use clickos_sys::{EventFd, Mapping};
use kvm_bindings::{kvm_regs, kvm_sregs, kvm_userspace_memory_region, Msrs};
use kvm_ioctls::{IoEventAddress, Kvm, VmFd};
use std::mem::ManuallyDrop;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::thread::JoinHandleExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

pub use boot::CONTROL_ALIAS;
pub use image::GUEST_ELF;

/// Default guest RAM.
pub const DEFAULT_MEMORY: u64 = 8 << 20;
/// The vCPU thread's stack.
const VCPU_STACK: usize = 256 << 10;
/// How long [`Vm::kill`] waits for the vCPU thread to leave the guest; a
/// thread that does not (stuck in the console sink) is abandoned.
pub const KILL_DEADLINE: Duration = Duration::from_secs(2);
/// How long [`Vm::pause`] waits for the vCPU thread to park.
pub const PAUSE_DEADLINE: Duration = Duration::from_secs(2);

/// Receives console lines: (instance id, text without trailing newline).
/// Called on the vCPU thread, which runs no guest code meanwhile: a sink
/// must not block (`clickos-instance` passes one that only queues).
pub type Console = Arc<dyn Fn(u32, &str) + Send + Sync>;

/// One vNIC's geometry.
#[derive(Clone, Copy, Debug)]
pub struct VnicConfig {
    pub slots: u32,
    pub buf_size: u32,
    pub mac: [u8; 6],
}

/// What to boot.
#[derive(Clone)]
pub struct VmConfig {
    pub id: u32,
    /// Guest RAM in bytes (rounded up to 2 MiB; ≥ 4 MiB, < 1 GiB).
    pub memory: u64,
    pub vnics: Vec<VnicConfig>,
    /// Sets `FLAG_FAULT_INJECTION` in the boot information.
    pub fault_injection: bool,
    pub console: Console,
}

/// How a VM ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exit {
    /// EXIT hypercall with this code.
    Exited(u32),
    /// PANIC hypercall: the guest's message.
    Panicked(String),
    /// A fault (triple fault), a bad hypercall or an unexpected exit.
    Crashed(String),
    /// [`Vm::kill`]; why.
    Killed(String),
}

/// Checks that `/dev/kvm` can be opened and a VM created. A success is
/// remembered for the process: creating and destroying a VM costs ~0.5 ms
/// and, now and then, 10-20 ms (the destruction waits for an SRCU grace
/// period), which the daemon paid on every create before. A failure is
/// checked again next time.
pub fn available() -> Result<(), String> {
    static OK: AtomicBool = AtomicBool::new(false);
    if OK.load(Ordering::Relaxed) {
        return Ok(());
    }
    let kvm = kvm()?;
    kvm.create_vm()
        .map(drop)
        .map_err(|e| format!("cannot create a KVM VM: {e}"))?;
    OK.store(true, Ordering::Relaxed);
    Ok(())
}

fn kvm() -> Result<&'static Kvm, String> {
    static KVM: OnceLock<Result<Kvm, String>> = OnceLock::new();
    KVM.get_or_init(|| {
        clickos_sys::raise_nofile();
        vcpu::install_signal_handlers();
        Kvm::new().map_err(|e| format!("cannot open /dev/kvm: {e}"))
    })
    .as_ref()
    .map_err(|e| e.clone())
}

/// State shared with the vCPU thread.
pub(crate) struct Shared {
    id: u32,
    console: Console,
    /// Host address of guest RAM (GPA 0).
    ram: usize,
    guard_page: u64,
    wake: EventFd,
    notify: EventFd,
    kicks: Vec<EventFd>,
    exit: Mutex<Option<Exit>>,
    killed: AtomicBool,
    /// `kill` gave up waiting for the vCPU thread (see [`KILL_DEADLINE`]).
    abandoned: AtomicBool,
    run: Mutex<RunState>,
    run_cv: Condvar,
    first_exit: Mutex<Option<Duration>>,
    /// The vCPU thread is blocked in IDLE (waiting on `wake`).
    asleep: AtomicBool,
    /// A pause is requested: the vCPU thread parks at the top of its loop.
    pause_req: AtomicBool,
    pause: Mutex<Pause>,
    pause_cv: Condvar,
}

/// The vCPU's registers at a safe point (after the instruction that
/// exited has completed).
#[derive(Clone, Copy)]
pub(crate) struct CpuState {
    pub(crate) regs: kvm_regs,
    pub(crate) sregs: kvm_sregs,
}

impl CpuState {
    fn zeroed() -> CpuState {
        CpuState {
            regs: kvm_regs::default(),
            sregs: kvm_sregs::default(),
        }
    }
}

pub(crate) enum Pause {
    Running,
    Requested,
    /// The vCPU thread is parked; its registers (or why they could not be
    /// read).
    Parked(Result<Box<CpuState>, String>),
    /// Go on running.
    Resume,
}

pub(crate) struct RunState {
    running: bool,
    /// `kvm_run.immediate_exit` in the vCPU's mapping (valid while running).
    immediate_exit: *mut u8,
    thread: libc::pthread_t,
}

// SAFETY: the raw pointer is only used under the mutex while the vCPU
// thread (which owns the mapping) is running.
unsafe impl Send for RunState {}

impl Shared {
    fn finish(&self, e: Exit) {
        {
            let mut x = self.exit.lock().unwrap();
            if x.is_none() {
                *x = Some(e);
            }
        }
        clickos_sys::signal(&self.notify);
        for k in &self.kicks {
            clickos_sys::signal(k);
        }
    }
}

/// A running (or ended) micro-VM.
pub struct Vm {
    shared: Arc<Shared>,
    /// Unmapped on drop unless the vCPU thread was abandoned (it may still
    /// read the console page or the mailbox).
    ram: ManuallyDrop<Mapping>,
    ram_fd: OwnedFd,
    vnics: Vec<(Mapping, OwnedFd, VnicInfo)>,
    vnic_cfg: Vec<VnicConfig>,
    /// The guest image (`None` for raw test code: no snapshots).
    image: Option<&'static image::Image>,
    mem: u64,
    tsc_khz: u64,
    writable_image: u64,
    phases: Vec<(&'static str, Duration)>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// What [`precopy`](Vm::precopy) sent: RAM, then each vNIC region.
    shadow: Mutex<Option<Vec<Vec<u8>>>>,
}

impl Vm {
    /// Creates and starts a VM: maps memory, writes the boot information,
    /// calls `prepare` with the host mapping of the control region, then
    /// lets the vCPU run.
    pub fn create(cfg: &VmConfig, prepare: &mut dyn FnMut(*mut u8)) -> Result<Vm, String> {
        Self::create_with(cfg, prepare, None, None)
    }

    /// Creates a VM from a snapshot ([`snapshot::parse`]) and lets it run
    /// on from where it was paused. `id` and `console` are this host's;
    /// memory and vNICs are the snapshot's. The guest's clock is set to
    /// read the wall clock again. Its vNIC rings are as they were: a host
    /// endpoint must take its indices from the shared memory
    /// (`clickos_ring::ring::Producer::resume`).
    pub fn restore(snap: &snapshot::Snapshot, id: u32, console: Console) -> Result<Vm, String> {
        if snap.flags != 0 {
            return Err("this is a part of a live migration, not a whole snapshot".into());
        }
        Self::prepare_restore(snap, id, console)?.start(None)
    }

    /// Boots raw code instead of the guest image (tests): `code` is loaded
    /// at IMAGE_GPA as one read-execute page range and entered there.
    #[doc(hidden)]
    pub fn create_raw(cfg: &VmConfig, code: &[u8]) -> Result<Vm, String> {
        Self::create_with(cfg, &mut |_| {}, Some(code), None)
    }

    fn create_with(
        cfg: &VmConfig,
        prepare: &mut dyn FnMut(*mut u8),
        raw: Option<&[u8]>,
        restore: Option<&snapshot::Snapshot>,
    ) -> Result<Vm, String> {
        Self::build(cfg, raw, restore)?.start_with(prepare, None)
    }

    /// Creates a VM from a snapshot or from the first part of a live
    /// migration ([`snapshot::FLAG_BASE`]) without running it: the VM, its
    /// memory (the pages written), vNICs, vCPU and eventfds exist, so
    /// [`PreparedVm::start`] has only the registers (and, after a base, the
    /// pages of the delta) left to load.
    pub fn prepare_restore(
        snap: &snapshot::Snapshot,
        id: u32,
        console: Console,
    ) -> Result<PreparedVm, String> {
        if snap.flags == snapshot::FLAG_DELTA {
            return Err("this is the second part of a live migration, not a snapshot".into());
        }
        let cfg = VmConfig {
            id,
            memory: snap.memory,
            vnics: snap
                .vnics
                .iter()
                .map(|v| VnicConfig {
                    slots: v.slots,
                    buf_size: v.buf_size,
                    mac: v.mac,
                })
                .collect(),
            fault_injection: false,
            console,
        };
        Self::build(&cfg, None, Some(snap))
    }

    fn build(
        cfg: &VmConfig,
        raw: Option<&[u8]>,
        restore: Option<&snapshot::Snapshot>,
    ) -> Result<PreparedVm, String> {
        let t0 = Instant::now();
        let mut phases = Vec::new();
        let mut last = t0;
        let mut lap = |name: &'static str, phases: &mut Vec<(&'static str, Duration)>| {
            let now = Instant::now();
            phases.push((name, now - last));
            last = now;
        };
        let kvm = kvm()?;
        let raw_image;
        let mut real_image = None;
        let image: &image::Image = match raw {
            None => {
                let i = image::Image::get()?;
                real_image = Some(i);
                i
            }
            Some(code) => {
                raw_image = raw_code_image(code)?;
                &raw_image
            }
        };
        if let Some(snap) = restore {
            if snap.image_id != image_id() {
                return Err("the snapshot was taken with another guest image (another clickos build); it cannot be resumed by this one".into());
            }
            if snap.memory != L::align_up(snap.memory.max(4 << 20), 2 << 20) {
                return Err(format!("snapshot is malformed (memory {:#x})", snap.memory));
            }
        }
        if cfg.vnics.len() > L::MAX_VNICS {
            return Err(format!("at most {} vNICs", L::MAX_VNICS));
        }
        let mem = L::align_up(cfg.memory.max(4 << 20), 2 << 20);
        if mem >= L::VNIC_GPA {
            return Err("guest memory must be below 1 GiB".into());
        }
        let plan = boot::Plan::new(mem, image.span)?;
        lap("prepare", &mut phases);

        let vm = kvm
            .create_vm()
            .map_err(|e| format!("cannot create a KVM VM: {e}"))?;
        lap("create VM", &mut phases);

        // Guest RAM: a shared memfd, the image mapped privately on top.
        let ram_fd =
            clickos_sys::memfd(c"clickos-ram", mem).map_err(|e| format!("guest RAM: {e}"))?;
        let ram =
            Mapping::shared(ram_fd.as_fd(), mem as usize).map_err(|e| format!("guest RAM: {e}"))?;
        // SAFETY: nothing uses the fresh RAM mapping yet.
        unsafe {
            ram.overlay_private(L::IMAGE_GPA as usize, image.span as usize, image.fd.as_fd())
        }
        .map_err(|e| format!("mapping the guest image: {e}"))?;
        // SAFETY: slot 0 covers exactly the RAM mapping, which outlives the
        // VM (the vCPU thread stops before `Vm` unmaps it).
        unsafe {
            vm.set_user_memory_region(kvm_userspace_memory_region {
                slot: 0,
                flags: 0,
                guest_phys_addr: 0,
                memory_size: mem,
                userspace_addr: ram.ptr() as u64,
            })
        }
        .map_err(|e| format!("KVM_SET_USER_MEMORY_REGION: {e}"))?;
        if let Some(snap) = restore {
            // SAFETY: the runs were checked to lie inside `mem` bytes.
            unsafe { write_pages(ram.ptr(), &snap.ram) };
        }

        // vNICs: one memfd and memslot each.
        let mut vnics = Vec::new();
        for (k, v) in cfg.vnics.iter().enumerate() {
            let mut info = L::vnic_layout(v.slots, v.buf_size, v.mac).ok_or_else(|| {
                format!(
                    "vNIC {k}: bad geometry ({} slots of {} bytes)",
                    v.slots, v.buf_size
                )
            })?;
            let fd = clickos_sys::memfd(c"clickos-vnic", info.size)
                .map_err(|e| format!("vNIC {k}: {e}"))?;
            let map = Mapping::shared(fd.as_fd(), info.size as usize)
                .map_err(|e| format!("vNIC {k}: {e}"))?;
            info.base = L::VNIC_GPA + k as u64 * L::VNIC_STRIDE;
            match restore {
                Some(snap) => {
                    if snap.vnics[k].size != info.size {
                        return Err(format!("snapshot is malformed (vNIC {k} region size)"));
                    }
                    // SAFETY: the runs were checked against the region's
                    // size, which is the mapping's.
                    unsafe { write_pages(map.ptr(), &snap.vnic_pages[k]) };
                }
                // SAFETY: the mapping is `info.size` bytes, laid out by vnic_layout.
                None => unsafe { clickos_ring::ring::init_region(map.ptr(), &info) },
            }
            // SAFETY: the slot covers exactly this mapping, which outlives the VM.
            unsafe {
                vm.set_user_memory_region(kvm_userspace_memory_region {
                    slot: 1 + k as u32,
                    flags: 0,
                    guest_phys_addr: info.base,
                    memory_size: info.size,
                    userspace_addr: map.ptr() as u64,
                })
            }
            .map_err(|e| format!("vNIC {k}: KVM_SET_USER_MEMORY_REGION: {e}"))?;
            vnics.push((map, fd, info));
        }
        lap("memory", &mut phases);

        // Control region: GDT, page tables, boot information (a restored
        // VM has its own in its RAM).
        if restore.is_none() {
            let vnic_ranges: Vec<(u64, u64)> = vnics.iter().map(|v| (v.2.base, v.2.size)).collect();
            // SAFETY: the RAM mapping covers the control region.
            unsafe {
                boot::write_gdt(ram.ptr());
                boot::write_page_tables(ram.ptr(), &plan, &image.segments, &vnic_ranges)?;
            }
            // Prefault the stack top and the heap's first pages (the allocator's
            // metadata) on the host: a guest first touch costs far more.
            // SAFETY: both ranges are inside guest RAM.
            unsafe {
                std::ptr::write_volatile(ram.ptr().add(mem as usize - 8) as *mut u64, 0);
                std::ptr::write_volatile(ram.ptr().add(plan.heap_start as usize), 0u8);
            }
            lap("page tables", &mut phases);
        }

        let vcpu = vm
            .create_vcpu(0)
            .map_err(|e| format!("KVM_CREATE_VCPU: {e}"))?;
        lap("vCPU", &mut phases);
        let tsc_khz = tsc_khz(&vcpu)?;
        let mut cpu = None;
        match restore {
            Some(snap) if snap.flags == 0 => {
                cpu = Some((
                    Box::new(CpuState {
                        regs: snap.regs,
                        sregs: snap.sregs,
                    }),
                    snap.taken_ns,
                ))
            }
            Some(_) => {}
            None => {
                let sregs = vcpu
                    .get_sregs()
                    .map_err(|e| format!("KVM_GET_SREGS: {e}"))?;
                vcpu.set_sregs(&boot::sregs(sregs))
                    .map_err(|e| format!("KVM_SET_SREGS: {e}"))?;
                vcpu.set_regs(&boot::regs(image.entry, plan.stack_top))
                    .map_err(|e| format!("KVM_SET_REGS: {e}"))?;
                let (tsc_base, epoch_ns) = sample_tsc(&vcpu)?;
                lap("registers", &mut phases);

                let mut bi = BootInfo::empty();
                bi.instance_id = cfg.id;
                bi.control_base = boot::CONTROL_ALIAS;
                bi.mem_size = mem;
                bi.heap_start = plan.heap_start;
                bi.heap_size = plan.heap_size;
                bi.tsc_khz = tsc_khz;
                bi.tsc_base = tsc_base;
                bi.epoch_ns = epoch_ns;
                bi.flags = if cfg.fault_injection {
                    L::FLAG_FAULT_INJECTION
                } else {
                    0
                };
                bi.nvnics = vnics.len() as u32;
                for (k, v) in vnics.iter().enumerate() {
                    bi.vnics[k] = v.2;
                }
                // SAFETY: the boot information page is in the RAM mapping; the
                // mailbox page likewise (reset before the guest exists).
                unsafe {
                    std::ptr::write_volatile(
                        ram.ptr().add(L::BOOTINFO_OFF as usize) as *mut BootInfo,
                        bi,
                    );
                    (*(ram.ptr().add(L::MAILBOX_OFF as usize) as *const clickos_ring::Mailbox))
                        .reset();
                }
            }
        }

        // Eventfds: wake (host → guest), notify (CTRL_DONE), kicks.
        let efd = || clickos_sys::eventfd().map_err(|e| format!("eventfd: {e}"));
        let wake = efd()?;
        let notify = efd()?;
        register(&vm, &notify, L::port::CTRL_DONE, 0)?;
        let mut kicks = Vec::new();
        for k in 0..vnics.len() {
            let e = efd()?;
            register(&vm, &e, L::port::KICK, k as u32)?;
            kicks.push(e);
        }
        lap("eventfds", &mut phases);
        Ok(PreparedVm {
            vcpu,
            vm,
            ram,
            ram_fd,
            vnics,
            cfg: cfg.clone(),
            image: real_image,
            mem,
            tsc_khz,
            writable_image: image.writable,
            guard: plan.guard,
            wake,
            notify,
            kicks,
            phases,
            last,
            restored: restore.is_some(),
            cpu,
        })
    }

    /// Host mapping of the control region (GPA 0, `CONTROL_SIZE` bytes).
    pub fn control(&self) -> *mut u8 {
        self.ram.ptr()
    }

    /// Host mapping of vNIC `k` and its geometry (`base` = its GPA).
    pub fn vnic(&self, k: usize) -> Option<(*mut u8, VnicInfo)> {
        self.vnics.get(k).map(|v| (v.0.ptr(), v.2))
    }

    /// Wakes the guest if it is idle.
    pub fn wake(&self) {
        clickos_sys::signal(&self.shared.wake);
    }

    /// Whether the vCPU thread is asleep in IDLE: after [`wake`](Self::wake)
    /// this turns false once the thread runs again (before it re-enters the
    /// guest), which tells a caller waiting for a reply whether the guest
    /// got a CPU (spinning is worth it) or not yet (blocking lets it have
    /// the caller's).
    pub fn asleep(&self) -> bool {
        self.shared.asleep.load(Ordering::Acquire)
    }

    /// Waits for CTRL_DONE, the end of the VM, or `timeout`.
    pub fn wait_notify(&self, timeout: Duration) {
        wait_efd(&self.shared.notify, timeout, || self.exit().is_some());
    }

    /// Waits for a KICK on vNIC `k`, the end of the VM, or `timeout`.
    pub fn wait_vnic(&self, k: usize, timeout: Duration) {
        match self.shared.kicks.get(k) {
            Some(e) => wait_efd(e, timeout, || self.exit().is_some()),
            None => std::thread::sleep(timeout),
        }
    }

    /// vNIC `k`'s kick eventfd (readable after a KICK or the end of the
    /// VM), for callers that poll many vNICs at once.
    pub fn kick_fd(&self, k: usize) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.shared.kicks.get(k).map(|e| e.as_raw_fd())
    }

    /// How the VM ended, once it has.
    pub fn exit(&self) -> Option<Exit> {
        self.shared.exit.lock().unwrap().clone()
    }

    /// Stops the guest now (idempotent). Returns once the vCPU thread has
    /// left KVM_RUN for good (the VM's teardown finishes on that thread),
    /// or after [`KILL_DEADLINE`]: a thread that is not back by then (stuck
    /// in the console sink) is abandoned, the VM is reported as killed
    /// with "the vCPU thread did not stop within … and was abandoned", and
    /// its memory stays mapped for the thread.
    pub fn kill(&self, why: &str) {
        if self.shared.abandoned.load(Ordering::Acquire) {
            return;
        }
        {
            let mut x = self.shared.exit.lock().unwrap();
            if x.is_none() {
                *x = Some(Exit::Killed(why.to_string()));
            }
        }
        self.shared.killed.store(true, Ordering::Release);
        clickos_sys::signal(&self.shared.wake);
        {
            let _p = self.shared.pause.lock().unwrap();
            self.shared.pause_cv.notify_all();
        }
        let mut rs = self.shared.run.lock().unwrap();
        // SAFETY: pthread_self has no preconditions.
        if rs.running && rs.thread == unsafe { libc::pthread_self() } {
            // Called on the vCPU thread itself (from the console sink): it
            // leaves KVM_RUN when the sink returns.
            // SAFETY: we are the thread that owns the kvm_run mapping.
            unsafe { std::ptr::write_volatile(rs.immediate_exit, 1) };
            return;
        }
        let t0 = Instant::now();
        while rs.running {
            if t0.elapsed() >= KILL_DEADLINE {
                drop(rs);
                self.abandon(why);
                return;
            }
            // SAFETY: while `running`, the vCPU thread owns the kvm_run
            // mapping and clears `running` (under this lock) before
            // unmapping it; signalling a live thread of ours is sound.
            unsafe {
                std::ptr::write_volatile(rs.immediate_exit, 1);
                libc::pthread_kill(rs.thread, vcpu::kick_signal());
            }
            rs = self
                .shared
                .run_cv
                .wait_timeout(rs, Duration::from_millis(1))
                .unwrap()
                .0;
        }
        drop(rs);
        self.shared.finish(Exit::Killed(why.to_string()));
    }

    /// Stops the guest at a safe point and parks its vCPU thread: the
    /// instruction that last exited is completed, so the registers and
    /// memory are a consistent state to copy ([`snapshot`](Self::snapshot)).
    /// Idempotent. The guest stays parked until [`unpause`](Self::unpause)
    /// or [`kill`](Self::kill). A guest that is mid-request keeps its
    /// request: suspend only an idle mailbox.
    pub fn pause(&self) -> Result<(), String> {
        let sh = &self.shared;
        {
            let mut p = sh.pause.lock().unwrap();
            match &*p {
                Pause::Parked(_) => return Ok(()),
                Pause::Requested => {}
                Pause::Running | Pause::Resume => *p = Pause::Requested,
            }
        }
        sh.pause_req.store(true, Ordering::Release);
        clickos_sys::signal(&sh.wake);
        let t0 = Instant::now();
        loop {
            {
                let p = sh.pause.lock().unwrap();
                if let Pause::Parked(_) = &*p {
                    return Ok(());
                }
            }
            if let Some(e) = self.exit() {
                return Err(format!("the VM has ended ({e:?})"));
            }
            if t0.elapsed() >= PAUSE_DEADLINE {
                return Err(format!(
                    "the vCPU did not stop within {} s",
                    PAUSE_DEADLINE.as_secs()
                ));
            }
            {
                let rs = sh.run.lock().unwrap();
                if rs.running && !sh.asleep.load(Ordering::Acquire) {
                    // SAFETY: as in `kill`: while `running` the vCPU thread
                    // owns the kvm_run mapping; signalling it is sound. The
                    // thread clears `immediate_exit` when it sees it.
                    unsafe {
                        std::ptr::write_volatile(rs.immediate_exit, 1);
                        libc::pthread_kill(rs.thread, vcpu::kick_signal());
                    }
                }
            }
            let p = sh.pause.lock().unwrap();
            if !matches!(&*p, Pause::Parked(_)) {
                drop(
                    sh.pause_cv
                        .wait_timeout(p, Duration::from_micros(500))
                        .unwrap(),
                );
            }
        }
    }

    /// Lets a paused guest run on.
    pub fn unpause(&self) {
        let mut p = self.shared.pause.lock().unwrap();
        if matches!(&*p, Pause::Parked(_) | Pause::Requested) {
            *p = Pause::Resume;
            self.shared.pause_cv.notify_all();
        }
    }

    /// Pauses the guest ([`pause`](Self::pause)) and returns its whole
    /// state as a snapshot file's bytes (`snapshot` module), with `note`
    /// (the caller's) in it. The guest stays paused: [`unpause`]
    /// (Self::unpause) it or kill it.
    pub fn snapshot(&self, note: &[u8]) -> Result<Vec<u8>, String> {
        let image = self.image.ok_or("a VM of raw code cannot be snapshotted")?;
        self.pause()?;
        let cpu = match &*self.shared.pause.lock().unwrap() {
            Pause::Parked(r) => *r.clone()?,
            _ => return Err("the VM is not paused".into()),
        };
        let mut w = snapshot::Writer::new();
        self.write_header(&mut w, &cpu, note);
        let page = L::PAGE_SIZE as usize;
        let img_first = (L::IMAGE_GPA / L::PAGE_SIZE) as usize;
        let img_pages = (image.span / L::PAGE_SIZE) as usize;
        let img = Mapping::shared(image.fd.as_fd(), image.span as usize)
            .map_err(|e| format!("mapping the guest image: {e}"))?;
        // SAFETY: the image mapping is `span` bytes, read only here.
        let img = unsafe { std::slice::from_raw_parts(img.ptr() as *const u8, img.len()) };
        let data = data_pages(self.ram_fd.as_fd(), self.mem);
        // SAFETY: guest RAM is mapped for `mem` bytes and the guest is
        // parked: nothing writes it while it is read.
        let ram =
            unsafe { std::slice::from_raw_parts(self.ram.ptr() as *const u8, self.mem as usize) };
        w.pages(ram, |p, bytes| {
            if (img_first..img_first + img_pages).contains(&p) {
                let o = (p - img_first) * page;
                bytes != &img[o..o + page]
            } else {
                data[p] && !snapshot::is_zero(bytes)
            }
        });
        for (map, fd, info) in &self.vnics {
            let data = data_pages(fd.as_fd(), info.size);
            // SAFETY: the vNIC mapping is `size` bytes. The host side of the
            // rings may still write it: the caller stops its endpoints first.
            let b =
                unsafe { std::slice::from_raw_parts(map.ptr() as *const u8, info.size as usize) };
            w.pages(b, |p, bytes| data[p] && !snapshot::is_zero(bytes));
        }
        Ok(w.finish())
    }

    /// The first part of a live migration ([`snapshot::FLAG_BASE`]),
    /// taken while the guest runs: its RAM and vNIC pages as read now (a
    /// copy is kept) and `note`, no registers. [`snapshot_delta`](Self::snapshot_delta)
    /// then pauses it and writes only the pages that differ from that
    /// copy, whoever wrote them (the guest, or the host: mailbox, rings).
    pub fn precopy(&self, note: &[u8]) -> Result<Vec<u8>, String> {
        let image = self.image.ok_or("a VM of raw code cannot be snapshotted")?;
        if let Some(e) = self.exit() {
            return Err(format!("the VM has ended ({e:?})"));
        }
        let page = L::PAGE_SIZE as usize;
        let img_first = (L::IMAGE_GPA / L::PAGE_SIZE) as usize;
        let img_pages = (image.span / L::PAGE_SIZE) as usize;
        let in_image = |p: usize| (img_first..img_first + img_pages).contains(&p);
        // Copies the pages that hold data (and the image range, mapped
        // privately over the memfd) into a zeroed buffer of the region's size.
        let copy = |base: *const u8, fd: std::os::fd::BorrowedFd<'_>, len: u64, image: bool| {
            let data = data_pages(fd, len);
            let mut out = vec![0u8; len as usize];
            for (p, d) in data.iter().enumerate() {
                if *d || (image && in_image(p)) {
                    // SAFETY: page `p` lies inside the region, mapped for
                    // `len` bytes. The guest (or the host's rings) may be
                    // writing it meanwhile: a torn page differs from the
                    // paused guest's and is sent again by the delta.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            base.add(p * page),
                            out.as_mut_ptr().add(p * page),
                            page,
                        )
                    };
                }
            }
            out
        };
        let mut shadow = vec![copy(self.ram.ptr(), self.ram_fd.as_fd(), self.mem, true)];
        for (map, fd, info) in &self.vnics {
            shadow.push(copy(map.ptr(), fd.as_fd(), info.size, false));
        }
        let mut w = snapshot::Writer::with_flags(snapshot::FLAG_BASE);
        self.write_header(&mut w, &CpuState::zeroed(), note);
        let img = Mapping::shared(image.fd.as_fd(), image.span as usize)
            .map_err(|e| format!("mapping the guest image: {e}"))?;
        // SAFETY: the image mapping is `span` bytes, read only here.
        let img = unsafe { std::slice::from_raw_parts(img.ptr() as *const u8, img.len()) };
        w.pages(&shadow[0], |p, bytes| {
            if in_image(p) {
                let o = (p - img_first) * page;
                bytes != &img[o..o + page]
            } else {
                !snapshot::is_zero(bytes)
            }
        });
        for s in &shadow[1..] {
            w.pages(s, |_, bytes| !snapshot::is_zero(bytes));
        }
        *self.shadow.lock().unwrap() = Some(shadow);
        Ok(w.finish())
    }

    /// The second part of a live migration ([`snapshot::FLAG_DELTA`]):
    /// pauses the guest ([`pause`](Self::pause)) and writes its registers,
    /// `note` and the pages that differ from what [`precopy`](Self::precopy)
    /// sent (zero pages too). The guest stays paused, as after
    /// [`snapshot`](Self::snapshot).
    pub fn snapshot_delta(&self, note: &[u8]) -> Result<Vec<u8>, String> {
        let image = self.image.ok_or("a VM of raw code cannot be snapshotted")?;
        let shadow = self.shadow.lock().unwrap();
        let shadow = shadow.as_ref().ok_or("no pre-copy was taken")?;
        self.pause()?;
        let cpu = match &*self.shared.pause.lock().unwrap() {
            Pause::Parked(r) => *r.clone()?,
            _ => return Err("the VM is not paused".into()),
        };
        let mut w = snapshot::Writer::with_flags(snapshot::FLAG_DELTA);
        self.write_header(&mut w, &cpu, note);
        let page = L::PAGE_SIZE as usize;
        let img_first = (L::IMAGE_GPA / L::PAGE_SIZE) as usize;
        let img_pages = (image.span / L::PAGE_SIZE) as usize;
        let data = data_pages(self.ram_fd.as_fd(), self.mem);
        // SAFETY: guest RAM is mapped for `mem` bytes and the guest is
        // parked: nothing writes it while it is read.
        let ram =
            unsafe { std::slice::from_raw_parts(self.ram.ptr() as *const u8, self.mem as usize) };
        // A hole now was a hole then (memfd pages are not given back): zero
        // both times.
        w.pages(ram, |p, bytes| {
            (data[p] || (img_first..img_first + img_pages).contains(&p))
                && bytes != &shadow[0][p * page..(p + 1) * page]
        });
        for (k, (map, fd, info)) in self.vnics.iter().enumerate() {
            let data = data_pages(fd.as_fd(), info.size);
            // SAFETY: the vNIC mapping is `size` bytes; the caller stopped
            // the host's endpoints.
            let b =
                unsafe { std::slice::from_raw_parts(map.ptr() as *const u8, info.size as usize) };
            w.pages(b, |p, bytes| {
                data[p] && bytes != &shadow[k + 1][p * page..(p + 1) * page]
            });
        }
        Ok(w.finish())
    }

    /// Forgets the copy [`precopy`](Self::precopy) kept.
    pub fn end_precopy(&self) {
        self.shadow.lock().unwrap().take();
    }

    /// The fields every snapshot starts with, then the registers and note.
    fn write_header(&self, w: &mut snapshot::Writer, cpu: &CpuState, note: &[u8]) {
        w.u64(image_id());
        w.u64(self.tsc_khz);
        w.u64(clickos_sys::realtime_ns() as u64);
        w.u32(self.shared.id);
        w.u64(self.mem);
        w.u32(self.vnics.len() as u32);
        for (v, c) in self.vnics.iter().zip(&self.vnic_cfg) {
            w.u32(c.slots);
            w.u32(c.buf_size);
            w.buf.extend_from_slice(&c.mac);
            w.u64(v.2.size);
        }
        w.bytes(snapshot::pod_bytes(&cpu.regs));
        w.bytes(snapshot::pod_bytes(&cpu.sregs));
        w.bytes(note);
    }

    /// Gives up on a vCPU thread that did not stop: reports it and wakes
    /// the host's waiters. The thread keeps `Shared` and, through `Drop`,
    /// the guest memory.
    fn abandon(&self, why: &str) {
        self.shared.abandoned.store(true, Ordering::Release);
        {
            let mut x = self.shared.exit.lock().unwrap();
            if let Some(Exit::Killed(m)) = &mut *x {
                *m = format!(
                    "{m}; the vCPU thread did not stop within {} s and was abandoned",
                    KILL_DEADLINE.as_secs()
                );
            }
        }
        self.shared.finish(Exit::Killed(why.to_string()));
    }

    /// Start-up phases (host side), then the time from starting the vCPU
    /// thread to the guest's first exit.
    pub fn phases(&self) -> Vec<(&'static str, Duration)> {
        let mut p = self.phases.clone();
        if let Some(d) = *self.shared.first_exit.lock().unwrap() {
            p.push(("first exit", d));
        }
        p
    }

    /// Host memory this VM uses: touched RAM and vNIC pages, the guest's
    /// writable image pages (upper bound) and the kvm_run page. Kernel
    /// memory (KVM structures, shadow page tables: ~0.2 MB) is not counted.
    pub fn memory_footprint(&self) -> u64 {
        clickos_sys::memfd_bytes(self.ram_fd.as_fd())
            + self
                .vnics
                .iter()
                .map(|v| clickos_sys::memfd_bytes(v.1.as_fd()))
                .sum::<u64>()
            + self.writable_image
            + L::PAGE_SIZE
    }

    /// Waits for the vCPU thread to finish (including VM teardown).
    pub fn join(&self) {
        if let Some(h) = self.thread.lock().unwrap().take() {
            let _ = h.join();
        }
    }
}

impl Drop for Vm {
    fn drop(&mut self) {
        self.kill("destroyed");
        // The thread finishes tearing down the VM on its own; it no longer
        // touches guest memory, so the mappings can go now, unless it was
        // abandoned (it may be anywhere): then they stay for the process.
        drop(self.thread.lock().unwrap().take());
        if self.shared.abandoned.load(Ordering::Acquire) {
            for (map, _, _) in self.vnics.drain(..) {
                map.leak();
            }
            return;
        }
        // SAFETY: `ram` is not used after this (we are being dropped), and
        // the vCPU thread has left the guest for good (kill returned
        // without abandoning it).
        unsafe { ManuallyDrop::drop(&mut self.ram) };
    }
}

/// A VM built from a snapshot or a migration's base, not yet running
/// ([`Vm::prepare_restore`]); dropping it frees everything.
pub struct PreparedVm {
    vcpu: kvm_ioctls::VcpuFd,
    vm: VmFd,
    ram: Mapping,
    ram_fd: OwnedFd,
    vnics: Vec<(Mapping, OwnedFd, VnicInfo)>,
    cfg: VmConfig,
    image: Option<&'static image::Image>,
    mem: u64,
    tsc_khz: u64,
    writable_image: u64,
    guard: u64,
    wake: EventFd,
    notify: EventFd,
    kicks: Vec<EventFd>,
    phases: Vec<(&'static str, Duration)>,
    last: Instant,
    /// From a snapshot (the registers must be loaded), not a cold boot.
    restored: bool,
    /// A whole snapshot's registers and when it was taken.
    cpu: Option<(Box<CpuState>, i64)>,
}

impl PreparedVm {
    /// Lets the VM run: a whole snapshot's registers are loaded, or, after
    /// a migration's base, the `delta`'s pages and registers
    /// ([`snapshot::FLAG_DELTA`], taken of the same VM after the base).
    pub fn start(self, delta: Option<&snapshot::Snapshot>) -> Result<Vm, String> {
        self.start_with(&mut |_| {}, delta)
    }

    fn start_with(
        mut self,
        prepare: &mut dyn FnMut(*mut u8),
        delta: Option<&snapshot::Snapshot>,
    ) -> Result<Vm, String> {
        let lap = |name: &'static str, me: &mut PreparedVm| {
            let now = Instant::now();
            me.phases.push((name, now - me.last));
            me.last = now;
        };
        if let Some(d) = delta {
            if d.flags != snapshot::FLAG_DELTA {
                return Err("not the second part of a live migration".into());
            }
            if self.cpu.is_some() || !self.restored {
                return Err("a migration's second part follows its first part only".into());
            }
            if d.image_id != image_id() || d.memory != self.mem || d.vnics.len() != self.vnics.len()
            {
                return Err(
                    "the migration's two parts do not match (memory, vNICs or guest image)".into(),
                );
            }
            for (k, v) in d.vnics.iter().enumerate() {
                if v.size != self.vnics[k].2.size {
                    return Err(format!("the migration's two parts do not match (vNIC {k})"));
                }
            }
            // SAFETY: the runs were checked to lie inside `mem` bytes and
            // each vNIC's size, which the mappings are; the guest does not
            // run yet.
            unsafe {
                write_pages(self.ram.ptr(), &d.ram);
                for (k, runs) in d.vnic_pages.iter().enumerate() {
                    write_pages(self.vnics[k].0.ptr(), runs);
                }
            }
            self.cpu = Some((
                Box::new(CpuState {
                    regs: d.regs,
                    sregs: d.sregs,
                }),
                d.taken_ns,
            ));
            lap("delta", &mut self);
        }
        if self.restored {
            let Some((cpu, taken_ns)) = self.cpu.take() else {
                return Err(
                    "the first part of a live migration cannot run without its second".into(),
                );
            };
            self.vcpu
                .set_sregs(&cpu.sregs)
                .map_err(|e| format!("KVM_SET_SREGS: {e}"))?;
            self.vcpu
                .set_regs(&cpu.regs)
                .map_err(|e| format!("KVM_SET_REGS: {e}"))?;
            // SAFETY: the boot information page is inside the RAM mapping
            // and the guest does not run yet.
            unsafe {
                let at = self.ram.ptr().add(L::BOOTINFO_OFF as usize) as *mut BootInfo;
                let mut bi = std::ptr::read_volatile(at);
                rebase_guest_clock(&self.vcpu, &mut bi, self.tsc_khz, taken_ns)?;
                std::ptr::write_volatile(at, bi);
            }
            lap("registers", &mut self);
        }

        prepare(self.ram.ptr());
        lap("prepare hook", &mut self);

        let PreparedVm {
            mut vcpu,
            vm,
            ram,
            ram_fd,
            vnics,
            cfg,
            image,
            mem,
            tsc_khz,
            writable_image,
            guard,
            wake,
            notify,
            kicks,
            mut phases,
            last,
            ..
        } = self;
        let immediate_exit = &mut vcpu.get_kvm_run().immediate_exit as *mut u8;
        let shared = Arc::new(Shared {
            id: cfg.id,
            console: cfg.console.clone(),
            ram: ram.ptr() as usize,
            guard_page: guard,
            wake,
            notify,
            kicks,
            exit: Mutex::new(None),
            killed: AtomicBool::new(false),
            abandoned: AtomicBool::new(false),
            run: Mutex::new(RunState {
                running: true,
                immediate_exit,
                thread: 0,
            }),
            run_cv: Condvar::new(),
            first_exit: Mutex::new(None),
            asleep: AtomicBool::new(false),
            pause_req: AtomicBool::new(false),
            pause: Mutex::new(Pause::Running),
            pause_cv: Condvar::new(),
        });
        let t = vcpu::VcpuThread {
            vcpu,
            _vm: vm,
            shared: shared.clone(),
            started: Instant::now(),
        };
        // Hold the run lock until the thread id is recorded, so `kill` can
        // always signal the right thread.
        let handle = {
            let mut rs = shared.run.lock().unwrap();
            let h = std::thread::Builder::new()
                .name(format!("vcpu-{}", cfg.id))
                .stack_size(VCPU_STACK)
                .spawn(move || t.run())
                .map_err(|e| format!("cannot start the vCPU thread: {e}"))?;
            rs.thread = h.as_pthread_t();
            h
        };
        phases.push(("thread", last.elapsed()));
        Ok(Vm {
            shared,
            ram: ManuallyDrop::new(ram),
            ram_fd,
            vnics,
            vnic_cfg: cfg.vnics.clone(),
            image,
            mem,
            tsc_khz,
            writable_image,
            phases,
            thread: Mutex::new(Some(handle)),
            shadow: Mutex::new(None),
        })
    }
}

/// Copies page runs into a mapping.
///
/// # Safety
/// `base` must map every page the runs name.
unsafe fn write_pages(base: *mut u8, runs: &[(u32, Vec<u8>)]) {
    for (first, bytes) in runs {
        // SAFETY: forwarded from the caller.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                base.add(*first as usize * L::PAGE_SIZE as usize),
                bytes.len(),
            )
        };
    }
}

/// Which pages of a memfd hold data (`SEEK_DATA`/`SEEK_HOLE`): holes read
/// as zeros and are left out of a snapshot without being touched (reading
/// them through the mapping would allocate them).
fn data_pages(fd: std::os::fd::BorrowedFd<'_>, len: u64) -> Vec<bool> {
    use std::os::fd::AsRawFd;
    let pages = (len / L::PAGE_SIZE) as usize;
    let mut v = vec![false; pages];
    let mut off: i64 = 0;
    while (off as u64) < len {
        // SAFETY: lseek on a descriptor we own; no memory is passed.
        let d = unsafe { libc::lseek(fd.as_raw_fd(), off, libc::SEEK_DATA) };
        if d < 0 {
            break;
        }
        // SAFETY: as above.
        let h = unsafe { libc::lseek(fd.as_raw_fd(), d, libc::SEEK_HOLE) };
        let h = if h < 0 { len as i64 } else { h };
        let first = (d as u64 / L::PAGE_SIZE) as usize;
        let last = (L::align_up(h as u64, L::PAGE_SIZE) / L::PAGE_SIZE) as usize;
        for p in v.iter_mut().take(last.min(pages)).skip(first) {
            *p = true;
        }
        if h <= off {
            break;
        }
        off = h;
    }
    v
}

/// The embedded guest image's identity (a checksum of the ELF).
fn image_id() -> u64 {
    static ID: OnceLock<u64> = OnceLock::new();
    *ID.get_or_init(|| snapshot::checksum(GUEST_ELF))
}

/// Rebases a restored guest's clock: the guest computes the time from
/// the boot information's `epoch_ns` at `tsc_base` (re-read on every
/// reading), so pointing them at this vCPU's TSC now and the wall clock
/// now (never earlier than when the snapshot was taken) makes it read the
/// wall clock again, whatever this host's TSC is (under PVM the guest
/// reads the host's; under VT-x a new VM's starts near zero). Timers due
/// meanwhile fire at once.
fn rebase_guest_clock(
    vcpu: &kvm_ioctls::VcpuFd,
    bi: &mut BootInfo,
    host_khz: u64,
    taken_ns: i64,
) -> Result<(), String> {
    if bi.tsc_khz == 0 || host_khz.abs_diff(bi.tsc_khz) * 1000 > bi.tsc_khz {
        return Err(format!(
            "the snapshot's guest counts time at {} kHz, this host's TSC runs at {host_khz} kHz",
            bi.tsc_khz
        ));
    }
    let (tsc, now) = sample_tsc(vcpu)?;
    bi.tsc_base = tsc;
    bi.epoch_ns = now.max(taken_ns);
    Ok(())
}

fn register(vm: &VmFd, e: &EventFd, port: u16, datamatch: u32) -> Result<(), String> {
    vm.register_ioevent(e, &IoEventAddress::Pio(port as u64), datamatch)
        .map_err(|err| format!("KVM_IOEVENTFD on port {port:#x}: {err}"))
}

fn wait_efd(e: &EventFd, timeout: Duration, ended: impl Fn() -> bool) {
    if ended() {
        return;
    }
    if clickos_sys::wait_readable(e, Some(timeout)) && !ended() {
        clickos_sys::drain(e);
    }
}

fn tsc_khz(vcpu: &kvm_ioctls::VcpuFd) -> Result<u64, String> {
    static KHZ: OnceLock<u64> = OnceLock::new();
    if let Some(k) = KHZ.get() {
        return Ok(*k);
    }
    let k = match vcpu.get_tsc_khz() {
        Ok(k) if k > 0 => k as u64,
        _ => cpuinfo_khz().ok_or("cannot determine the TSC frequency")?,
    };
    Ok(*KHZ.get_or_init(|| k))
}

fn cpuinfo_khz() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("cpu MHz"))?;
    let mhz: f64 = line.split(':').nth(1)?.trim().parse().ok()?;
    Some((mhz * 1000.0) as u64)
}

/// The guest's TSC and the wall clock, sampled together.
fn sample_tsc(vcpu: &kvm_ioctls::VcpuFd) -> Result<(u64, i64), String> {
    const MSR_IA32_TSC: u32 = 0x10;
    let mut msrs = Msrs::from_entries(&[kvm_bindings::kvm_msr_entry {
        index: MSR_IA32_TSC,
        ..Default::default()
    }])
    .map_err(|e| format!("MSR list: {e:?}"))?;
    let t0 = clickos_sys::realtime_ns();
    let n = vcpu
        .get_msrs(&mut msrs)
        .map_err(|e| format!("KVM_GET_MSRS (TSC): {e}"))?;
    let t1 = clickos_sys::realtime_ns();
    if n != 1 {
        return Err("KVM_GET_MSRS: the TSC could not be read".into());
    }
    Ok((msrs.as_slice()[0].data, t0 + (t1 - t0) / 2))
}

/// An image of raw code (tests): one RX segment at IMAGE_GPA.
fn raw_code_image(code: &[u8]) -> Result<image::Image, String> {
    let span = L::align_up(code.len().max(1) as u64, L::PAGE_SIZE);
    let fd = clickos_sys::memfd(c"clickos-raw", span).map_err(|e| e.to_string())?;
    let map = Mapping::shared(fd.as_fd(), span as usize).map_err(|e| e.to_string())?;
    // SAFETY: the fresh mapping holds `span >= code.len()` bytes.
    unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), map.ptr(), code.len()) };
    Ok(image::Image {
        fd,
        entry: L::IMAGE_GPA,
        span,
        segments: vec![image::Segment {
            start: L::IMAGE_GPA,
            end: L::IMAGE_GPA + span,
            write: false,
            exec: true,
        }],
        writable: 0,
    })
}
