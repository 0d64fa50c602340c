//! The selector: the file descriptors elements want watched (Click's
//! `add_select`), shared by the run loop, which waits on them, and the
//! elements, which register theirs through [`selector`]. It knows neither
//! the run loop nor any element.

use click::prelude::*;
use std::any::Any;
use std::cell::RefCell;
use std::os::fd::RawFd;
use std::rc::Rc;
use std::time::Duration;

/// What the driver hands its routers' elements as the host object
/// ([`Ctx::host`]): the descriptors they want watched, and, when the
/// configuration runs on several threads, this thread's part in that.
pub struct Host {
    pub selector: Selector,
    /// The threaded driver's state for this thread (a
    /// [`crate::threads::ThreadCtx`], which the link elements take back
    /// out); opaque here so that the selector depends on no driver part.
    pub thread: Option<Rc<dyn Any>>,
}

/// The selector of the driver that runs this element, if any.
pub fn selector<'a>(cx: &Ctx<'a>) -> Option<&'a Selector> {
    cx.host()?.downcast_ref::<Host>().map(|h| &h.selector)
}

/// The file descriptors elements want watched (Click's `add_select`),
/// handed to elements as the router's host object ([`Ctx::host`]). When
/// the router is idle the driver waits on them, with the next timer as
/// deadline, instead of sleeping blind; when busy it polls them about
/// once a millisecond. A ready descriptor schedules its element's task.
#[derive(Default)]
pub struct Selector {
    /// (element index, fd, poll events)
    want: RefCell<Vec<(usize, RawFd, libc::c_short)>>,
    /// Elements that keep the driver running while the router is idle
    /// with no timers (a ControlSocket waiting for clients).
    holders: RefCell<Vec<usize>>,
    scratch: RefCell<(Vec<libc::pollfd>, Vec<usize>)>,
}

impl Selector {
    /// Replaces element `elem`'s watched descriptors.
    pub fn set(&self, elem: usize, fds: &[(RawFd, libc::c_short)]) {
        let mut w = self.want.borrow_mut();
        w.retain(|x| x.0 != elem);
        w.extend(
            fds.iter()
                .filter(|f| f.1 != 0)
                .map(|&(fd, ev)| (elem, fd, ev)),
        );
    }

    /// Whether element `elem` keeps the driver running while idle.
    pub fn hold(&self, elem: usize, on: bool) {
        let mut h = self.holders.borrow_mut();
        h.retain(|&x| x != elem);
        if on {
            h.push(elem);
        }
    }

    pub fn keeps_running(&self) -> bool {
        !self.holders.borrow().is_empty()
    }

    pub fn has_fds(&self) -> bool {
        !self.want.borrow().is_empty()
    }

    /// Waits until a watched descriptor is ready, `timeout` passes
    /// (`None`: no limit) or a signal arrives; calls `ready` with the
    /// element of each ready descriptor.
    pub fn wait(&self, timeout: Option<Duration>, ready: &mut dyn FnMut(usize)) {
        let mut scratch = self.scratch.borrow_mut();
        let (pfds, owners) = &mut *scratch;
        pfds.clear();
        owners.clear();
        for &(elem, fd, events) in self.want.borrow().iter() {
            pfds.push(libc::pollfd {
                fd,
                events,
                revents: 0,
            });
            owners.push(elem);
        }
        if matches!(clickos_sys::ppoll(pfds, timeout), Ok(n) if n > 0) {
            for (p, &e) in pfds.iter().zip(owners.iter()) {
                if p.revents != 0 {
                    ready(e);
                }
            }
        }
    }
}
