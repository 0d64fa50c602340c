//! A port on an instance's vNIC, over [`clickos_instance::VnicEndpoint`]:
//! batches straight between the switch and the instance's shared rings.

use crate::port::{Health, Port, Refused};
use clickos_instance::{Instance, QueueError, VnicEndpoint};
use std::os::fd::RawFd;

pub struct VnicPort {
    ep: VnicEndpoint,
}

impl VnicPort {
    /// Takes vNIC `k` of `instance` (it stays taken until the port is
    /// removed).
    pub fn new(instance: &Instance, k: usize) -> Result<VnicPort, String> {
        Ok(VnicPort {
            ep: instance.vnic_endpoint(k)?,
        })
    }

    pub fn from_endpoint(ep: VnicEndpoint) -> VnicPort {
        VnicPort { ep }
    }

    /// A [`crate::PortSpec`] for vNIC `k` of `instance`. The endpoint is
    /// taken now (errors show here, not on the switch thread).
    pub fn spec(instance: &Instance, k: usize) -> Result<crate::PortSpec, String> {
        let ep = instance.vnic_endpoint(k)?;
        Ok(Box::new(move || {
            Ok(Box::new(VnicPort::from_endpoint(ep)) as Box<dyn Port>)
        }))
    }
}

impl Port for VnicPort {
    fn kind(&self) -> &'static str {
        "vnic"
    }
    fn describe(&self) -> String {
        let (id, k) = self.ep.id();
        format!("instance {id} vNIC {k}")
    }
    fn recv(&mut self, max: usize, f: &mut dyn FnMut(&[u8])) -> usize {
        self.ep.recv(max, f)
    }
    #[inline]
    fn queue(&mut self, frame: &[u8]) -> Result<(), Refused> {
        self.ep.queue(frame).map_err(|e| match e {
            QueueError::Full => Refused::Full,
            QueueError::Oversize => Refused::Oversize,
            QueueError::Dead => Refused::Down,
        })
    }
    fn flush(&mut self) -> bool {
        self.ep.flush();
        false
    }
    fn room(&self) -> usize {
        self.ep.room()
    }
    fn max_frame(&self) -> usize {
        self.ep.buf_size()
    }
    fn poll_fd(&self) -> Option<RawFd> {
        self.ep.kick_fd()
    }
    fn arm(&mut self) -> bool {
        self.ep.arm()
    }
    fn after_wake(&mut self) {
        self.ep.drain_kick();
    }
    fn health(&mut self) -> Health {
        if let Some(why) = self.ep.broken() {
            let (id, _) = self.ep.id();
            return Health::Down(format!("instance {id}: {why}"));
        }
        match self.ep.ended() {
            Some(e) => Health::Down(format!("instance {} {e}", self.ep.id().0)),
            None => Health::Up,
        }
    }
    fn extra(&self) -> Vec<(String, u64)> {
        let s = self.ep.stats();
        vec![("wakeups_sent".into(), s.wakes)]
    }
}
