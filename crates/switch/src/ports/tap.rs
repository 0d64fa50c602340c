//! A port on a tap device (created if missing, removed with the port if
//! the switch created it): one `read` or `write` per frame, as tap allows.

use crate::port::{Health, Port, Refused};
use clickos_netdev::Tun;
use std::os::fd::RawFd;

pub struct TapPort {
    tun: Tun,
    buf: Vec<u8>,
    write_errors: u64,
    gone: Option<String>,
}

/// Sets an interface's link up (`ip link set NAME up`).
fn link_up(name: &str) -> Result<(), String> {
    // SAFETY: a datagram socket used only for the two interface ioctls on
    // a zeroed ifreq whose name we filled; closed before returning.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if s < 0 {
            return Err(format!("socket: {}", std::io::Error::last_os_error()));
        }
        let mut r: libc::ifreq = std::mem::zeroed();
        for (d, b) in r
            .ifr_name
            .iter_mut()
            .zip(name.bytes().take(libc::IFNAMSIZ - 1))
        {
            *d = b as libc::c_char;
        }
        let mut res = libc::ioctl(s, libc::SIOCGIFFLAGS, &mut r);
        if res == 0 {
            r.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            res = libc::ioctl(s, libc::SIOCSIFFLAGS, &r);
        }
        let e = std::io::Error::last_os_error();
        libc::close(s);
        if res != 0 {
            return Err(format!("{name}: SIOCSIFFLAGS: {e}"));
        }
    }
    Ok(())
}

impl TapPort {
    pub fn open(name: &str) -> Result<TapPort, String> {
        let tun = Tun::open(name, true)?;
        link_up(tun.name())?;
        Ok(TapPort {
            tun,
            buf: vec![0; 65536],
            write_errors: 0,
            gone: None,
        })
    }

    pub fn spec(name: &str) -> crate::PortSpec {
        let name = name.to_string();
        Box::new(move || Ok(Box::new(TapPort::open(&name)?) as Box<dyn Port>))
    }
}

impl Port for TapPort {
    fn kind(&self) -> &'static str {
        "tap"
    }
    fn describe(&self) -> String {
        format!("tap {}", self.tun.name())
    }
    fn recv(&mut self, max: usize, f: &mut dyn FnMut(&[u8])) -> usize {
        let mut n = 0;
        while n < max && self.gone.is_none() {
            match self.tun.read(&mut self.buf) {
                Ok(len) => {
                    f(&self.buf[..len]);
                    n += 1;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.gone = Some(format!("tap {}: read: {e}", self.tun.name()));
                    break;
                }
            }
        }
        n
    }
    fn queue(&mut self, frame: &[u8]) -> Result<(), Refused> {
        if self.gone.is_some() {
            return Err(Refused::Down);
        }
        if frame.len() > self.max_frame() {
            return Err(Refused::Oversize);
        }
        match self.tun.write(frame) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Err(Refused::Full),
            Err(_) => {
                self.write_errors += 1;
                Ok(())
            }
        }
    }
    fn flush(&mut self) -> bool {
        false
    }
    fn max_frame(&self) -> usize {
        65535
    }
    fn poll_fd(&self) -> Option<RawFd> {
        self.gone.is_none().then(|| self.tun.fd())
    }
    fn health(&mut self) -> Health {
        match &self.gone {
            Some(g) => Health::Down(g.clone()),
            None => Health::Up,
        }
    }
    fn extra(&self) -> Vec<(String, u64)> {
        vec![("write_errors".into(), self.write_errors)]
    }
}
