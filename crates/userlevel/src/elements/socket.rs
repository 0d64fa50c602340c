//! Socket: Click's socket element, UDP sending side: every packet that
//! arrives is sent as one datagram to a fixed address (an IPFIX collector,
//! a syslog server, ...).

use click::element_any;
use click::prelude::*;
use click_lang::args::{self, UdpPort};
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};

/// `Socket(UDP, ADDR, PORT [, LOCAL_ADDR, LOCAL_PORT])`.
#[derive(Default)]
pub struct Socket {
    remote: Option<SocketAddrV4>,
    local: Option<SocketAddrV4>,
    sock: Option<UdpSocket>,
    sent: u64,
    errors: u64,
    last_error: String,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Socket",
    port_count: "1/0",
    processing: "h/h",
    group: "userlevel",
    signature: "Socket(UDP, ADDR, PORT [, LOCAL_ADDR, LOCAL_PORT])",
    summary: "Sends packets as UDP datagrams.",
    description: "Sends the data of every packet that arrives as one UDP datagram to ADDR:PORT \
from a socket bound to LOCAL_ADDR:LOCAL_PORT (default any address, a port the system chooses). \
This is the sending half of Click's Socket in its UDP client form; TCP, Unix sockets and \
receiving are not supported. Sends never block: a datagram the system refuses (buffer full, no \
route, the peer's port closed) is dropped and counted in `errors`. IPFIXExport's messages go to \
a collector with `ipfix[1] -> Socket(UDP, 192.0.2.1, 4739)`.",
    ports: "one push input; no outputs",
    handlers: &[
        HandlerDoc {
            name: "sent",
            mode: HandlerMode::Read,
            text: "Datagrams sent.",
        },
        HandlerDoc {
            name: "errors",
            mode: HandlerMode::Read,
            text: "Datagrams the system refused (dropped).",
        },
        HandlerDoc {
            name: "last_error",
            mode: HandlerMode::Read,
            text: "The last send error, or empty.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Socket::default()),
};

impl Element for Socket {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let ty: String = a.read_mp("TYPE")?;
        let addr: Ipv4Addr = a.read_mp("ADDR")?;
        let port: UdpPort = a.read_mp("PORT")?;
        let laddr: Option<Ipv4Addr> = a.read_p("LOCAL_ADDR")?;
        let lport: Option<UdpPort> = a.read_p("LOCAL_PORT")?;
        a.complete()?;
        if !ty.eq_ignore_ascii_case("UDP") {
            return Err(format!(
                "unsupported socket type '{}' (only UDP, sending, is supported)",
                args::quote(&ty)
            ));
        }
        self.remote = Some(SocketAddrV4::new(addr, port.0));
        self.local = Some(SocketAddrV4::new(
            laddr.unwrap_or(Ipv4Addr::UNSPECIFIED),
            lport.map(|p| p.0).unwrap_or(0),
        ));
        Ok(())
    }

    fn initialize(&mut self, _cx: &Ctx) -> Result<(), String> {
        let local = self.local.ok_or("not configured")?;
        let s = UdpSocket::bind(local)
            .map_err(|e| format!("{}: {}", local, super::io_error_text(&e)))?;
        s.set_nonblocking(true)
            .map_err(|e| super::io_error_text(&e))?;
        self.sock = Some(s);
        Ok(())
    }

    fn push(&mut self, _port: usize, p: Packet, _cx: &Ctx) {
        let (Some(s), Some(to)) = (self.sock.as_ref(), self.remote) else {
            return;
        };
        match s.send_to(p.data(), to) {
            Ok(_) => self.sent += 1,
            Err(e) => {
                self.errors += 1;
                self.last_error = super::io_error_text(&e);
            }
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "sent" => self.sent.to_string(),
            "errors" => self.errors.to_string(),
            "last_error" => self.last_error.clone(),
            _ => return None,
        }))
    }

    element_any!();
}
