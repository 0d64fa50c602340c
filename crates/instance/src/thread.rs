//! The `none` isolation level: the runtime on a thread of this process.
//!
//! No isolation at all: a fault in the engine can take the whole process
//! down (only panics are contained, with `catch_unwind`). The control region
//! and the vNIC regions are page-aligned anonymous mappings shared by the
//! host side and the thread, which owns them jointly with the backend.
//!
//! `kill` cannot preempt a thread: it marks the instance `Killed` and sets a
//! flag that unwinds the runtime at its next clock read or idle. A thread
//! stuck in a spinning element never gets there; it is abandoned (it keeps
//! its memory, so nothing dangles) and burns its CPU until the process
//! exits.

use crate::backend::{Backend, Ended, LaunchSpec, Prepare};
use crate::platform::{ConsoleOut, Doorbells, EventPlatform, KilledToken};
use clickos_ring::layout::{self, BootInfo, VnicInfo};
use clickos_ring::Mailbox;
use clickos_sys::{drain, signal, wait_readable, Mapping};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Memory and descriptors shared by the backend and the instance thread.
struct Regions {
    control: Mapping,
    vnics: Vec<(Mapping, VnicInfo)>,
    bells: Arc<Doorbells>,
}

struct Shared {
    regions: Regions,
    ended: Mutex<Option<Ended>>,
    killed: Arc<AtomicBool>,
}

pub struct ThreadBackend {
    shared: Arc<Shared>,
    handle: Mutex<Option<JoinHandle<()>>>,
    phases: Vec<(&'static str, Duration)>,
}

/// Writes the boot information page and resets the mailbox.
///
/// # Safety
/// `control` must map a whole control region, not yet shared with a running
/// instance.
pub(crate) unsafe fn write_boot_info(control: *mut u8, spec: &LaunchSpec, bi: &BootInfo) {
    let _ = spec;
    // SAFETY: BOOTINFO_OFF + size_of::<BootInfo>() lies inside the region;
    // the region is page-aligned so the page is suitably aligned.
    unsafe {
        std::ptr::write(
            control.add(layout::BOOTINFO_OFF as usize) as *mut BootInfo,
            *bi,
        );
        mailbox(control).reset();
    }
}

/// The mailbox inside a control region.
///
/// # Safety
/// `control` must map a control region that outlives the returned reference.
pub(crate) unsafe fn mailbox<'a>(control: *mut u8) -> &'a Mailbox {
    // SAFETY: the mailbox page is inside the region and page-aligned.
    unsafe { &*(control.add(layout::MAILBOX_OFF as usize) as *const Mailbox) }
}

/// Builds the geometry of each requested vNIC.
pub(crate) fn vnic_infos(spec: &LaunchSpec) -> Result<Vec<VnicInfo>, String> {
    if spec.vnics.len() > layout::MAX_VNICS {
        return Err(format!(
            "too many vNICs ({}, at most {})",
            spec.vnics.len(),
            layout::MAX_VNICS
        ));
    }
    spec.vnics
        .iter()
        .enumerate()
        .map(|(k, v)| {
            layout::vnic_layout(v.slots, v.buf_size, v.mac).ok_or_else(|| {
                format!(
                    "vNIC {k}: bad geometry ({} slots of {} bytes; slots must be a power of two in 64..=4096, buffers a multiple of 64 in 256..=65536)",
                    v.slots, v.buf_size
                )
            })
        })
        .collect()
}

pub fn launch(spec: &LaunchSpec, prepare: Prepare) -> Result<Box<dyn Backend>, String> {
    let t0 = Instant::now();
    let infos = vnic_infos(spec)?;
    let err = |what: &str, e: std::io::Error| format!("{what}: {e}");
    let control = Mapping::anonymous(layout::CONTROL_SIZE).map_err(|e| err("control region", e))?;
    let mut vnics = Vec::new();
    let mut bi = BootInfo::empty();
    bi.instance_id = spec.id;
    bi.control_base = control.ptr() as u64;
    bi.mem_size = spec.memory;
    bi.flags = if spec.fault_injection {
        layout::FLAG_FAULT_INJECTION
    } else {
        0
    };
    bi.nvnics = infos.len() as u32;
    for (k, mut info) in infos.into_iter().enumerate() {
        let m = Mapping::anonymous(info.size as usize).map_err(|e| err("vNIC region", e))?;
        // SAFETY: `m` maps info.size bytes, zeroed, used by nobody yet.
        unsafe { clickos_ring::ring::init_region(m.ptr(), &info) };
        info.base = m.ptr() as u64;
        bi.vnics[k] = info;
        vnics.push((m, info));
    }
    // SAFETY: the region is ours and no instance runs yet.
    unsafe { write_boot_info(control.ptr(), spec, &bi) };
    let bells = Doorbells::new(vnics.len()).map_err(|e| err("eventfd", e))?;
    let regions = Regions {
        control,
        vnics,
        bells: Arc::new(bells),
    };
    prepare(regions.control.ptr());
    let t_prep = t0.elapsed();
    let killed = Arc::new(AtomicBool::new(false));
    let shared = Arc::new(Shared {
        regions,
        ended: Mutex::new(None),
        killed: killed.clone(),
    });
    let platform = EventPlatform {
        bells: shared.regions.bells.clone(),
        console: ConsoleOut::Sink(spec.id, spec.console.clone()),
        memory_limited: false,
        killed: Some(killed),
    };
    let s2 = shared.clone();
    let (id, console) = (spec.id, spec.console.clone());
    let handle = std::thread::Builder::new()
        .name(format!("clickos-{}", spec.id))
        .spawn(move || {
            let control = s2.regions.control.ptr();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                // SAFETY: the control region and vNIC regions are mapped for
                // as long as `s2` lives, which outlives this call; the boot
                // information was written above.
                unsafe { clickos_guest::run(control, platform) }
            }));
            let end = match r {
                Ok(code) => Ended::Exited(code),
                Err(p) if p.is::<KilledToken>() => Ended::Killed("killed".into()),
                Err(p) => {
                    // As the process level reports it on its console.
                    let m = clickos_sys::panic_message(&*p);
                    console(id, &format!("panicked: {}\n", m.replace('\n', " ")));
                    Ended::Panicked(m)
                }
            };
            {
                let mut e = s2.ended.lock().unwrap_or_else(|e| e.into_inner());
                if e.is_none() {
                    *e = Some(end);
                }
            }
            s2.regions.bells.ring_all();
        })
        .map_err(|e| format!("spawning the instance thread: {e}"))?;
    Ok(Box::new(ThreadBackend {
        shared,
        handle: Mutex::new(Some(handle)),
        phases: vec![("prepare", t_prep), ("spawn", t0.elapsed() - t_prep)],
    }))
}

impl Backend for ThreadBackend {
    fn control(&self) -> *mut u8 {
        self.shared.regions.control.ptr()
    }
    fn vnic(&self, k: usize) -> Option<(*mut u8, VnicInfo)> {
        self.shared
            .regions
            .vnics
            .get(k)
            .map(|(m, info)| (m.ptr(), *info))
    }
    fn wake(&self) {
        signal(&self.shared.regions.bells.wake);
    }
    fn wait_notify(&self, timeout: Duration) {
        let done = &self.shared.regions.bells.done;
        if self.ended().is_none() {
            wait_readable(done, Some(timeout));
        }
        drain(done);
    }
    fn kick_fd(&self, k: usize) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.shared
            .regions
            .bells
            .kicks
            .get(k)
            .map(|e| e.as_raw_fd())
    }
    fn wait_vnic(&self, k: usize, timeout: Duration) {
        if let Some(kick) = self.shared.regions.bells.kicks.get(k) {
            if self.ended().is_none() {
                wait_readable(kick, Some(timeout));
            }
            drain(kick);
        }
    }
    fn ended(&self) -> Option<Ended> {
        self.shared
            .ended
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
    fn kill(&self, why: &str) {
        {
            let mut e = self.shared.ended.lock().unwrap_or_else(|e| e.into_inner());
            if e.is_none() {
                *e = Some(Ended::Killed(why.to_string()));
            }
        }
        self.shared.killed.store(true, Ordering::Relaxed);
        self.wake();
        signal(&self.shared.regions.bells.done);
    }
    fn phases(&self) -> Vec<(&'static str, Duration)> {
        self.phases.clone()
    }
}

impl Drop for ThreadBackend {
    fn drop(&mut self) {
        self.kill("destroyed");
        let h = self.handle.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = h {
            // Give an idle or busy thread a moment to unwind; a spinning one
            // is abandoned (it owns its memory through `Shared`).
            let t0 = Instant::now();
            while !h.is_finished() && t0.elapsed() < Duration::from_millis(200) {
                std::thread::sleep(Duration::from_millis(1));
            }
            if h.is_finished() {
                let _ = h.join();
            }
        }
    }
}
