//! Independent packet builders and reference checksums for the IP element
//! tests (nothing here uses the engine's or the wire crate's code).
#![allow(dead_code)]

/// Ones-complement sum of big-endian 16-bit words (odd byte padded).
pub fn ref_sum(data: &[u8]) -> u32 {
    let mut acc: u64 = 0;
    for c in data.chunks(2) {
        acc += u64::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u32
}

/// The Internet checksum of `data`.
pub fn ref_csum(data: &[u8]) -> u16 {
    !(ref_sum(data) as u16)
}

/// TCP/UDP checksum of `seg` (checksum field zero) under the pseudo-header.
pub fn ref_l4_csum(src: [u8; 4], dst: [u8; 4], proto: u8, seg: &[u8]) -> u16 {
    let mut ph = Vec::new();
    ph.extend_from_slice(&src);
    ph.extend_from_slice(&dst);
    ph.push(0);
    ph.push(proto);
    ph.extend_from_slice(&(seg.len() as u16).to_be_bytes());
    ph.extend_from_slice(seg);
    ref_csum(&ph)
}

/// Parameters of an IPv4 header.
#[derive(Clone)]
pub struct Ip {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub proto: u8,
    pub id: u16,
    pub ttl: u8,
    pub tos: u8,
    /// Flags and fragment offset (in 8-byte units), as on the wire.
    pub flags_off: u16,
    /// Options (padded to a multiple of 4 by the caller).
    pub options: Vec<u8>,
}

impl Default for Ip {
    fn default() -> Self {
        Ip {
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
            proto: 17,
            id: 1,
            ttl: 64,
            tos: 0,
            flags_off: 0,
            options: Vec::new(),
        }
    }
}

impl Ip {
    /// The IP packet: header (with a correct checksum) + `payload`.
    pub fn packet(&self, payload: &[u8]) -> Vec<u8> {
        assert_eq!(self.options.len() % 4, 0);
        let hl = 20 + self.options.len();
        let mut h = vec![0u8; hl];
        h[0] = 0x40 | (hl / 4) as u8;
        h[1] = self.tos;
        h[2..4].copy_from_slice(&((hl + payload.len()) as u16).to_be_bytes());
        h[4..6].copy_from_slice(&self.id.to_be_bytes());
        h[6..8].copy_from_slice(&self.flags_off.to_be_bytes());
        h[8] = self.ttl;
        h[9] = self.proto;
        h[12..16].copy_from_slice(&self.src);
        h[16..20].copy_from_slice(&self.dst);
        h[20..].copy_from_slice(&self.options);
        let c = ref_csum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h.extend_from_slice(payload);
        h
    }

    /// A UDP/IP packet with a correct UDP checksum.
    pub fn udp(&self, sport: u16, dport: u16, data: &[u8]) -> Vec<u8> {
        let mut ip = self.clone();
        ip.proto = 17;
        let mut u = Vec::new();
        u.extend_from_slice(&sport.to_be_bytes());
        u.extend_from_slice(&dport.to_be_bytes());
        u.extend_from_slice(&((8 + data.len()) as u16).to_be_bytes());
        u.extend_from_slice(&[0, 0]);
        u.extend_from_slice(data);
        let mut c = ref_l4_csum(self.src, self.dst, 17, &u);
        if c == 0 {
            c = 0xffff;
        }
        u[6..8].copy_from_slice(&c.to_be_bytes());
        ip.packet(&u)
    }

    /// A TCP/IP packet (20-byte TCP header plus `opts`) with a correct
    /// checksum.
    #[allow(clippy::too_many_arguments)]
    pub fn tcp(
        &self,
        sport: u16,
        dport: u16,
        seq: u32,
        ack: u32,
        flags: u8,
        win: u16,
        opts: &[u8],
        data: &[u8],
    ) -> Vec<u8> {
        let mut ip = self.clone();
        ip.proto = 6;
        let thl = 20 + opts.len();
        let mut t = vec![0u8; thl];
        t[0..2].copy_from_slice(&sport.to_be_bytes());
        t[2..4].copy_from_slice(&dport.to_be_bytes());
        t[4..8].copy_from_slice(&seq.to_be_bytes());
        t[8..12].copy_from_slice(&ack.to_be_bytes());
        t[12] = ((thl / 4) as u8) << 4;
        t[13] = flags;
        t[14..16].copy_from_slice(&win.to_be_bytes());
        t[20..].copy_from_slice(opts);
        t.extend_from_slice(data);
        let c = ref_l4_csum(self.src, self.dst, 6, &t);
        t[16..18].copy_from_slice(&c.to_be_bytes());
        ip.packet(&t)
    }
}

/// Prepends a 14-byte Ethernet header (type IPv4) to `ip`.
pub fn ether(ip: &[u8]) -> Vec<u8> {
    let mut f = vec![0x52, 0x54, 0, 0, 0, 2, 0x52, 0x54, 0, 0, 0, 1, 0x08, 0x00];
    f.extend_from_slice(ip);
    f
}

/// Verifies an IP header checksum over the header of the IP packet `ip`.
pub fn ip_hdr_ok(ip: &[u8]) -> bool {
    let hl = usize::from(ip[0] & 15) * 4;
    ref_sum(&ip[..hl]) == 0xffff
}
