//! Putting instances in the path: what a vNIC attaches to ([`Attach`],
//! parsed from the CLI's `--vnic` forms) and the two topologies the CLI
//! builds, one instance wired to one attachment per vNIC
//! ([`wire_instance`]) and a chain of instances between two attachments
//! ([`wire_chain`]). Everything is patches: no MAC configuration.

use crate::ports::netdev::{NetdevOptions, NetdevPort};
use crate::ports::pcap::PcapPort;
use crate::ports::tap::TapPort;
use crate::ports::vnic::VnicPort;
use crate::{PortSpec, SwitchHandle};
use clickos_instance::Instance;
use std::path::PathBuf;

/// What a vNIC is joined to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attach {
    /// A Linux interface (`IFNAME`).
    Netdev(String),
    /// A tap device, created if missing (`tap:NAME`).
    Tap(String),
    /// Replay a capture into the vNIC and/or capture what it sends
    /// (`pcap:IN`, `pcap:IN,OUT`, `pcap:,OUT`).
    Pcap {
        input: Option<PathBuf>,
        output: Option<PathBuf>,
    },
}

impl std::str::FromStr for Attach {
    type Err = String;
    fn from_str(s: &str) -> Result<Attach, String> {
        if let Some(name) = s.strip_prefix("tap:") {
            if name.is_empty() || name.len() >= libc::IFNAMSIZ {
                return Err(format!("bad tap name in '{s}' (1 to 15 characters)"));
            }
            return Ok(Attach::Tap(name.to_string()));
        }
        if let Some(files) = s.strip_prefix("pcap:") {
            let (i, o) = match files.split_once(',') {
                Some((i, o)) => (i, o),
                None => (files, ""),
            };
            let f = |x: &str| (!x.is_empty()).then(|| PathBuf::from(x));
            let (input, output) = (f(i), f(o));
            if input.is_none() && output.is_none() {
                return Err(format!(
                    "'{s}' names no file (pcap:IN, pcap:IN,OUT or pcap:,OUT)"
                ));
            }
            return Ok(Attach::Pcap { input, output });
        }
        if s.is_empty() || s.len() >= libc::IFNAMSIZ || s.contains(['/', ' ', ':']) {
            return Err(format!(
                "bad attachment '{s}': an interface name, tap:NAME or pcap:IN[,OUT]"
            ));
        }
        Ok(Attach::Netdev(s.to_string()))
    }
}

impl std::fmt::Display for Attach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Attach::Netdev(n) => write!(f, "{n}"),
            Attach::Tap(n) => write!(f, "tap:{n}"),
            Attach::Pcap { input, output } => write!(
                f,
                "pcap:{}{}",
                input
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                output
                    .as_ref()
                    .map(|p| format!(",{}", p.display()))
                    .unwrap_or_default()
            ),
        }
    }
}

impl Attach {
    /// The port, checked now (a missing interface or file is an error
    /// here) and built on the switch thread.
    pub fn spec(&self) -> Result<PortSpec, String> {
        match self {
            Attach::Netdev(n) => NetdevPort::spec(n, NetdevOptions::default()).map_err(|e| {
                if e.contains("No such device") {
                    format!("no interface '{n}' ({e})")
                } else {
                    e
                }
            }),
            Attach::Tap(n) => Ok(TapPort::spec(n)),
            Attach::Pcap { input, output } => {
                PcapPort::spec(input.as_deref(), output.as_deref(), 1)
            }
        }
    }
}

/// The switch ports of one wired instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wired {
    /// Port of vNIC k.
    pub vnics: Vec<usize>,
    /// Port of attachment k.
    pub outside: Vec<usize>,
}

/// Joins vNIC k of `inst` to `attach[k]`, both ways. Port names are
/// `PREFIX.vnicK` and the attachment's text.
pub fn wire_instance(
    sw: &SwitchHandle,
    inst: &Instance,
    prefix: &str,
    attach: &[Attach],
) -> Result<Wired, String> {
    if attach.len() != inst.vnic_count() {
        return Err(format!(
            "{} attachment{} for an instance with {} vNIC{}",
            attach.len(),
            if attach.len() == 1 { "" } else { "s" },
            inst.vnic_count(),
            if inst.vnic_count() == 1 { "" } else { "s" }
        ));
    }
    held(sw, || {
        let mut w = Wired {
            vnics: Vec::new(),
            outside: Vec::new(),
        };
        for (k, a) in attach.iter().enumerate() {
            let v = sw.add_port(&format!("{prefix}.vnic{k}"), VnicPort::spec(inst, k)?)?;
            let o = sw.add_port(&a.to_string(), a.spec()?)?;
            sw.wire(v, o)?;
            w.vnics.push(v);
            w.outside.push(o);
        }
        Ok(w)
    })
}

/// Runs `f` with the switch held, so that the ports it adds move no frame
/// before every patch is set (a replayed capture or an instance that sends
/// at once would otherwise lose frames to the table's flooding).
fn held<T>(sw: &SwitchHandle, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    sw.hold(true)?;
    let r = f();
    sw.hold(false)?;
    r
}

/// Ports of a chain: `ends` = (in, out); `vnics[i]` = instance i's
/// (vNIC 0, vNIC 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    pub ends: (usize, usize),
    pub vnics: Vec<(usize, usize)>,
}

/// `input` ↔ inst[0].vNIC0, inst[0].vNIC1 ↔ inst[1].vNIC0, …,
/// inst[n-1].vNIC1 ↔ `output`. Every instance needs two vNICs (0 faces the
/// input side, 1 the output side).
pub fn wire_chain(
    sw: &SwitchHandle,
    insts: &[(&str, &Instance)],
    input: &Attach,
    output: &Attach,
) -> Result<Chain, String> {
    if insts.is_empty() {
        return Err("a chain needs at least one instance".into());
    }
    for (name, i) in insts {
        if i.vnic_count() != 2 {
            return Err(format!(
                "{name}: a chain member needs 2 vNICs (0 towards the input, 1 towards the output), it has {}",
                i.vnic_count()
            ));
        }
    }
    held(sw, || {
        let pin = sw.add_port(&format!("in:{input}"), input.spec()?)?;
        let mut vnics = Vec::new();
        for (name, i) in insts {
            let a = sw.add_port(&format!("{name}.vnic0"), VnicPort::spec(i, 0)?)?;
            let b = sw.add_port(&format!("{name}.vnic1"), VnicPort::spec(i, 1)?)?;
            vnics.push((a, b));
        }
        let pout = sw.add_port(&format!("out:{output}"), output.spec()?)?;
        let mut prev = pin;
        for &(a, b) in &vnics {
            sw.wire(prev, a)?;
            prev = b;
        }
        sw.wire(prev, pout)?;
        Ok(Chain {
            ends: (pin, pout),
            vnics,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attachments_parse() {
        assert_eq!("veth0".parse(), Ok(Attach::Netdev("veth0".into())));
        assert_eq!("tap:t0".parse(), Ok(Attach::Tap("t0".into())));
        assert_eq!(
            "pcap:a.pcap".parse(),
            Ok(Attach::Pcap {
                input: Some("a.pcap".into()),
                output: None
            })
        );
        assert_eq!(
            "pcap:,b.pcap".parse(),
            Ok(Attach::Pcap {
                input: None,
                output: Some("b.pcap".into())
            })
        );
        let a: Attach = "pcap:a.pcap,b.pcap".parse().unwrap();
        assert_eq!(a.to_string(), "pcap:a.pcap,b.pcap");
        assert!("pcap:".parse::<Attach>().is_err());
        assert!("pcap:,".parse::<Attach>().is_err());
        assert!("tap:".parse::<Attach>().is_err());
        assert!("a-very-long-interface-name".parse::<Attach>().is_err());
        assert!("".parse::<Attach>().is_err());
        assert!("bad:thing".parse::<Attach>().is_err());
    }

    #[test]
    fn a_missing_interface_is_named() {
        let e = match Attach::Netdev("nosuchif0".into()).spec() {
            Err(e) => e,
            Ok(_) => panic!("nosuchif0 exists?"),
        };
        assert!(e.contains("no interface 'nosuchif0'"), "{e}");
        let e = match "pcap:/nonexistent/x.pcap".parse::<Attach>().unwrap().spec() {
            Err(e) => e,
            Ok(_) => panic!("opened a missing file"),
        };
        assert!(e.contains("/nonexistent/x.pcap"), "{e}");
    }
}
