//! Builders for real Ethernet/ARP/IPv4/ICMP/UDP frames, byte by byte, for
//! the ARP, ICMP, VLAN and router tests. Checksums are computed here
//! independently of the elements under test (RFC 1071 over 16-bit words).
#![allow(dead_code)]

pub type Mac = [u8; 6];
pub type Ip4 = [u8; 4];

pub const BCAST: Mac = [0xff; 6];

/// RFC 1071 checksum, the obvious way.
pub fn csum(data: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in data.chunks(2) {
        let w = if c.len() == 2 {
            u16::from_be_bytes([c[0], c[1]])
        } else {
            u16::from_be_bytes([c[0], 0])
        };
        s += u32::from(w);
    }
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

pub fn eth(dst: Mac, src: Mac, ty: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(14 + payload.len());
    v.extend_from_slice(&dst);
    v.extend_from_slice(&src);
    v.extend_from_slice(&ty.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

/// A 28-byte Ethernet/IPv4 ARP packet.
pub fn arp(op: u16, sha: Mac, spa: Ip4, tha: Mac, tpa: Ip4) -> Vec<u8> {
    let mut v = vec![0, 1, 8, 0, 6, 4];
    v.extend_from_slice(&op.to_be_bytes());
    v.extend_from_slice(&sha);
    v.extend_from_slice(&spa);
    v.extend_from_slice(&tha);
    v.extend_from_slice(&tpa);
    v
}

/// A broadcast ARP request frame: who has `tpa`, tell `spa` (`sha`).
pub fn arp_request(sha: Mac, spa: Ip4, tpa: Ip4) -> Vec<u8> {
    eth(BCAST, sha, 0x0806, &arp(1, sha, spa, [0; 6], tpa))
}

/// An ARP reply frame: `spa` is at `sha`, to `tha`/`tpa`.
pub fn arp_reply(sha: Mac, spa: Ip4, tha: Mac, tpa: Ip4) -> Vec<u8> {
    eth(tha, sha, 0x0806, &arp(2, sha, spa, tha, tpa))
}

/// An IPv4 packet description.
#[derive(Clone)]
pub struct Ip {
    pub tos: u8,
    pub id: u16,
    pub frag: u16,
    pub ttl: u8,
    pub proto: u8,
    pub src: Ip4,
    pub dst: Ip4,
    pub options: Vec<u8>,
    pub payload: Vec<u8>,
}

impl Ip {
    pub fn new(src: Ip4, dst: Ip4, proto: u8, payload: &[u8]) -> Ip {
        Ip {
            tos: 0,
            id: 0x1234,
            frag: 0,
            ttl: 64,
            proto,
            src,
            dst,
            options: Vec::new(),
            payload: payload.to_vec(),
        }
    }
    pub fn ttl(mut self, ttl: u8) -> Ip {
        self.ttl = ttl;
        self
    }
    pub fn id(mut self, id: u16) -> Ip {
        self.id = id;
        self
    }
    pub fn frag(mut self, f: u16) -> Ip {
        self.frag = f;
        self
    }
    pub fn options(mut self, o: &[u8]) -> Ip {
        assert_eq!(o.len() % 4, 0);
        self.options = o.to_vec();
        self
    }
    pub fn bytes(&self) -> Vec<u8> {
        let hl = 20 + self.options.len();
        let total = hl + self.payload.len();
        let mut v = vec![0x40 | (hl / 4) as u8, self.tos];
        v.extend_from_slice(&(total as u16).to_be_bytes());
        v.extend_from_slice(&self.id.to_be_bytes());
        v.extend_from_slice(&self.frag.to_be_bytes());
        v.push(self.ttl);
        v.push(self.proto);
        v.extend_from_slice(&[0, 0]);
        v.extend_from_slice(&self.src);
        v.extend_from_slice(&self.dst);
        v.extend_from_slice(&self.options);
        let c = csum(&v);
        v[10..12].copy_from_slice(&c.to_be_bytes());
        v.extend_from_slice(&self.payload);
        v
    }
}

/// A UDP datagram (checksum 0: none).
pub fn udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&sport.to_be_bytes());
    v.extend_from_slice(&dport.to_be_bytes());
    v.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    v.extend_from_slice(&[0, 0]);
    v.extend_from_slice(payload);
    v
}

/// An ICMP message with a correct checksum.
pub fn icmp(ty: u8, code: u8, rest: [u8; 4], data: &[u8]) -> Vec<u8> {
    let mut v = vec![ty, code, 0, 0];
    v.extend_from_slice(&rest);
    v.extend_from_slice(data);
    let c = csum(&v);
    v[2..4].copy_from_slice(&c.to_be_bytes());
    v
}

/// An ICMP echo request.
pub fn echo(id: u16, seq: u16, data: &[u8]) -> Vec<u8> {
    let mut rest = [0u8; 4];
    rest[..2].copy_from_slice(&id.to_be_bytes());
    rest[2..].copy_from_slice(&seq.to_be_bytes());
    icmp(8, 0, rest, data)
}

pub fn hex(v: &[u8]) -> String {
    v.iter().map(|b| format!("{:02x}", b)).collect()
}
