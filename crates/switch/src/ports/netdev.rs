//! A port on a Linux interface, with the AF_XDP / AF_PACKET code that
//! Click's FromDevice and ToDevice use (`clickos-netdev`).

use crate::port::{Health, Port, Refused};
use clickos_netdev::{DevInfo, Method, Rx, RxConfig, Tx, TxConfig, TxError};
use std::os::fd::RawFd;

/// How to open an interface port.
#[derive(Clone, Debug)]
pub struct NetdevOptions {
    pub method: Method,
    /// Leave the frames to the kernel too (off: the switch takes them).
    pub sniffer: bool,
    /// Promiscuous mode (on: a switch port sees every frame).
    pub promisc: bool,
}

impl Default for NetdevOptions {
    fn default() -> Self {
        NetdevOptions {
            method: Method::Auto,
            sniffer: false,
            promisc: true,
        }
    }
}

pub struct NetdevPort {
    dev: DevInfo,
    rx: Rx,
    tx: Tx,
    gone: Option<String>,
    tx_errors: u64,
}

impl NetdevPort {
    pub fn open(name: &str, o: &NetdevOptions) -> Result<NetdevPort, String> {
        let dev = DevInfo::lookup(name)?;
        if !dev.is_ether() {
            return Err(format!("{name} is not an Ethernet interface"));
        }
        let mut note = |_: &str| {};
        let rx = Rx::open(
            &dev,
            &RxConfig {
                method: o.method,
                sniffer: o.sniffer,
                promisc: o.promisc,
                snaplen: dev.max_frame().max(2048),
                ..RxConfig::default()
            },
            &mut note,
        )?;
        let tx = Tx::open(
            &dev,
            &TxConfig {
                method: o.method,
                ..TxConfig::default()
            },
            &mut note,
        )?;
        Ok(NetdevPort {
            dev,
            rx,
            tx,
            gone: None,
            tx_errors: 0,
        })
    }

    /// A [`crate::PortSpec`] opening `name` on the switch thread; the
    /// interface is looked up now so that a missing one fails here.
    pub fn spec(name: &str, o: NetdevOptions) -> Result<crate::PortSpec, String> {
        DevInfo::lookup(name)?;
        let name = name.to_string();
        Ok(Box::new(move || {
            Ok(Box::new(NetdevPort::open(&name, &o)?) as Box<dyn Port>)
        }))
    }
}

impl Port for NetdevPort {
    fn kind(&self) -> &'static str {
        "netdev"
    }
    fn describe(&self) -> String {
        format!("{} ({})", self.dev.name, self.rx.method().name())
    }
    fn recv(&mut self, max: usize, f: &mut dyn FnMut(&[u8])) -> usize {
        if self.gone.is_some() {
            return 0;
        }
        self.rx.recv(max, |fr| f(fr.data))
    }
    fn queue(&mut self, frame: &[u8]) -> Result<(), Refused> {
        if self.gone.is_some() {
            return Err(Refused::Down);
        }
        match self.tx.queue(frame) {
            Ok(()) => Ok(()),
            Err(TxError::Full) => {
                // Hand what is queued to the kernel and try once more.
                let _ = self.tx.flush();
                self.tx.queue(frame).map_err(|e| match e {
                    TxError::Full => Refused::Full,
                    TxError::BadLength => Refused::Oversize,
                })
            }
            Err(TxError::BadLength) => Err(Refused::Oversize),
        }
    }
    fn flush(&mut self) -> bool {
        if self.tx.flush().is_err() {
            self.tx_errors += 1;
        }
        self.tx.unsent() > 0 && self.gone.is_none()
    }
    fn max_frame(&self) -> usize {
        self.dev.max_frame()
    }
    fn poll_fd(&self) -> Option<RawFd> {
        (self.gone.is_none()).then(|| self.rx.fd())
    }
    fn health(&mut self) -> Health {
        if let Some(g) = &self.gone {
            return Health::Down(g.clone());
        }
        match DevInfo::lookup(&self.dev.name) {
            Ok(d) if d.ifindex == self.dev.ifindex => Health::Up,
            _ => {
                let why = format!("interface {} disappeared", self.dev.name);
                self.gone = Some(why.clone());
                Health::Down(why)
            }
        }
    }
    fn extra(&self) -> Vec<(String, u64)> {
        vec![("tx_errors".into(), self.tx_errors)]
    }
}
