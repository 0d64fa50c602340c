//! The selector: the file descriptors elements want watched (Click's
//! `add_select`), shared by the run loop, which waits on them, and the
//! elements, which register theirs through [`selector`]. It knows neither
//! the run loop nor any element.

use click::prelude::*;
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::os::fd::RawFd;
use std::rc::Rc;
use std::time::{Duration, Instant};

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
/// once a millisecond. A ready descriptor schedules its element's task,
/// and so does a wake-up time ([`Selector::wake_at`]) that has passed.
#[derive(Default)]
pub struct Selector {
    /// (element index, fd, poll events)
    want: RefCell<Vec<(usize, RawFd, libc::c_short)>>,
    /// (element index, when): wall-clock wake-ups, for deadlines that
    /// must not follow a virtual clock (a ControlSocket's idle timeout).
    wake: RefCell<Vec<(usize, Instant)>>,
    /// Elements that keep the driver running while the router is idle
    /// with no timers (a ControlSocket waiting for clients).
    holders: RefCell<Vec<usize>>,
    scratch: RefCell<(Vec<libc::pollfd>, Vec<usize>)>,
    /// An element found its source empty and keeps its task running
    /// (a FromDevice's busy poll) since the run loop last looked.
    spinning: Cell<bool>,
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

    /// Schedules element `elem`'s task once `when` has passed (wall-clock
    /// time, also under `--simtime`); `None` cancels. One wake-up per
    /// element: a new one replaces the old.
    pub fn wake_at(&self, elem: usize, when: Option<Instant>) {
        let mut w = self.wake.borrow_mut();
        w.retain(|x| x.0 != elem);
        if let Some(t) = when {
            w.push((elem, t));
        }
    }

    /// Whether element `elem` keeps the driver running while idle.
    pub fn hold(&self, elem: usize, on: bool) {
        let mut h = self.holders.borrow_mut();
        h.retain(|&x| x != elem);
        if on {
            h.push(elem);
        }
    }

    /// Element says it ran with nothing to do and stays scheduled to look
    /// again (busy polling): the run loop then ends its pass as soon as
    /// the descriptors are due for a look, instead of running that spin
    /// for the rest of the pass.
    pub fn note_spinning(&self) {
        self.spinning.set(true);
    }

    /// Whether an element spins since [`Selector::take_spinning`].
    pub fn spinning(&self) -> bool {
        self.spinning.get()
    }

    /// Reads and clears the spinning flag.
    pub fn take_spinning(&self) -> bool {
        self.spinning.replace(false)
    }

    pub fn keeps_running(&self) -> bool {
        !self.holders.borrow().is_empty()
    }

    /// Whether there are descriptors to watch or wake-ups to keep.
    pub fn has_fds(&self) -> bool {
        !self.want.borrow().is_empty() || !self.wake.borrow().is_empty()
    }

    /// Waits until a watched descriptor is ready, `timeout` passes
    /// (`None`: no limit), the next wake-up time comes, or a signal
    /// arrives; calls `ready` with the element of each ready descriptor
    /// and of each wake-up that has passed.
    pub fn wait(&self, timeout: Option<Duration>, ready: &mut dyn FnMut(usize)) {
        let next_wake = self.wake.borrow().iter().map(|w| w.1).min();
        let timeout = match next_wake {
            None => timeout,
            Some(t) => {
                let until = t.saturating_duration_since(Instant::now());
                Some(timeout.map_or(until, |d| d.min(until)))
            }
        };
        self.poll(timeout, ready);
        if next_wake.is_some() {
            let now = Instant::now();
            let mut due = Vec::new();
            self.wake.borrow_mut().retain(|&(e, t)| {
                if t <= now {
                    due.push(e);
                }
                t > now
            });
            for e in due {
                ready(e);
            }
        }
    }

    fn poll(&self, timeout: Option<Duration>, ready: &mut dyn FnMut(usize)) {
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
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wake_up_time_schedules_its_element_once() {
        let s = Selector::default();
        assert!(!s.has_fds());
        s.wake_at(3, Some(Instant::now() + Duration::from_millis(20)));
        s.wake_at(4, Some(Instant::now() + Duration::from_secs(3600)));
        s.wake_at(4, None);
        assert!(s.has_fds());
        let mut got = Vec::new();
        // no descriptors, no timeout: only the wake-up ends the wait
        s.wait(None, &mut |e| got.push(e));
        assert_eq!(got, vec![3]);
        assert!(!s.has_fds(), "a wake-up is used once");
    }
}
