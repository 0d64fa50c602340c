//! RatedSource: generates packets at a configurable rate.

use crate::common::args::read_data;
use crate::common::args::source_data;
use crate::common::args::DEFAULT_DATA;
use crate::common::handlers;
use crate::common::rate::TokenBucket;
use crate::prelude::*;
use click_lang::args::Bandwidth;

/// Headroom Click's RatedSource gives its packets.
const HEADROOM: usize = 16 + 20 + 24;

/// `RatedSource([DATA, RATE, LIMIT, ACTIVE, KEYWORDS])`.
pub struct RatedSource {
    data: Vec<u8>,
    datasize: i64,
    packet: Vec<u8>,
    tb: TokenBucket,
    limit: Option<u64>,
    active: bool,
    stop: bool,
    count: u64,
}

impl Default for RatedSource {
    fn default() -> Self {
        RatedSource {
            data: DEFAULT_DATA.to_vec(),
            datasize: -1,
            packet: DEFAULT_DATA.to_vec(),
            tb: TokenBucket::default(),
            limit: None,
            active: true,
            stop: false,
            count: 0,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "RatedSource",
    port_count: "0/1",
    processing: "a/a",
    group: "standard",
    signature: "RatedSource([DATA, RATE, LIMIT, ACTIVE, KEYWORDS])",
    summary: "Generates packets at specified rate.",
    description: "Creates packets consisting of DATA, emitting at most RATE packets per second \
(a token bucket with a burst of 2, or RATE/100 for rates of 200 and more). In push context it \
pushes them; in pull context it returns one when pulled and the rate allows.\n\nKeyword arguments:\n\n\
- `DATA` (string): packet contents. Default is Click's 69-byte string.\n\
- `RATE` (unsigned): packets per second. Default 10.\n\
- `LIMIT` (integer): total packets; -1 (default) means no limit.\n\
- `ACTIVE` (boolean): whether to send. Default true.\n\
- `LENGTH` (integer): DATA is cut or repeated to this length (`DATASIZE` is deprecated).\n\
- `STOP` (boolean): ask the driver to stop when LIMIT is reached. Default false.\n\
- `BANDWIDTH` (bandwidth): if given, RATE is BANDWIDTH divided by the packet length.",
    ports: "no inputs, one output",
    handlers: &[
        HandlerDoc { name: "count", mode: HandlerMode::Read, text: "Packets generated so far." },
        HandlerDoc { name: "reset", mode: HandlerMode::Write, text: "Resets count to zero and restarts." },
        HandlerDoc { name: "data", mode: HandlerMode::ReadWrite, text: "The packet data." },
        HandlerDoc { name: "rate", mode: HandlerMode::ReadWrite, text: "The RATE value." },
        HandlerDoc { name: "limit", mode: HandlerMode::ReadWrite, text: "The LIMIT value." },
        HandlerDoc { name: "active", mode: HandlerMode::ReadWrite, text: "The ACTIVE value." },
        HandlerDoc { name: "length", mode: HandlerMode::ReadWrite, text: "The LENGTH value." },
        HandlerDoc { name: "datasize", mode: HandlerMode::ReadWrite, text: "Deprecated synonym for `length`." },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(RatedSource::default()),
};

impl RatedSource {
    fn limit_reached(&self) -> bool {
        matches!(self.limit, Some(l) if self.count >= l)
    }
    fn make_packet(&self, cx: &Ctx) -> Packet {
        let mut p = cx.pool().make(HEADROOM, &self.packet, 0);
        p.set_timestamp(cx.now());
        p
    }
}

impl Element for RatedSource {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let data = read_data(&mut a, "DATA", true)?;
        let mut rate = a.read_p::<u32>("RATE")?.unwrap_or(10) as u64;
        let limit = a.read_p::<i32>("LIMIT")?.unwrap_or(-1);
        let active = a.read_p::<bool>("ACTIVE")?.unwrap_or(true);
        let mut datasize = a.read::<i32>("LENGTH")?.map(i64::from);
        if let Some(d) = a.read::<i32>("DATASIZE")? {
            datasize = Some(i64::from(d));
        }
        let stop = a.read::<bool>("STOP")?.unwrap_or(false);
        let bandwidth = a.read::<Bandwidth>("BANDWIDTH")?.map(|b| b.0).unwrap_or(0);
        a.complete()?;
        let data = data.unwrap_or_else(|| DEFAULT_DATA.to_vec());
        let datasize = datasize.unwrap_or(-1);
        if bandwidth > 0 {
            let len = if datasize < 0 {
                data.len() as u64
            } else {
                datasize as u64
            };
            rate = bandwidth.checked_div(len).unwrap_or(0);
        }
        let mut burst = if rate < 200 { 2 } else { rate / 100 };
        if bandwidth > 0 && datasize > 0 && burst < 2 * datasize as u64 {
            burst = 2 * datasize as u64;
        }
        self.tb.assign(rate, burst);
        self.packet = source_data(&data, datasize);
        self.data = data;
        self.datasize = datasize;
        self.limit = if limit >= 0 { Some(limit as u64) } else { None };
        self.active = active;
        self.stop = stop;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        self.count = 0;
        self.tb.set(1);
        if cx.output_is_push(0) && self.active {
            cx.schedule_task();
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        if !self.active {
            return false;
        }
        if self.limit_reached() {
            if self.stop {
                cx.please_stop_driver();
            }
            return false;
        }
        self.tb.refill(cx.now());
        if self.tb.remove_if(1) {
            let p = self.make_packet(cx);
            self.count += 1;
            cx.push(0, p);
            true
        } else {
            cx.schedule_timer_after(0, self.tb.time_until_contains(1).max(1));
            false
        }
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        cx.schedule_task();
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        if !self.active {
            return None;
        }
        if self.limit_reached() {
            if self.stop {
                cx.please_stop_driver();
            }
            return None;
        }
        self.tb.refill(cx.now());
        if self.tb.remove_if(1) {
            self.count += 1;
            Some(self.make_packet(cx))
        } else {
            None
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "count" => self.count.to_string(),
            "data" => String::from_utf8_lossy(&self.data).into_owned(),
            "rate" => self.tb.rate.to_string(),
            "limit" => self
                .limit
                .map(|l| l.to_string())
                .unwrap_or_else(|| "-1".into()),
            "active" => self.active.to_string(),
            "length" | "datasize" => self.datasize.to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let syntax = || Err::<(), String>("syntax error".into());
        let push = cx.output_is_push(0);
        Some(match name {
            "data" => {
                self.data = value.as_bytes().to_vec();
                self.packet = self.data.clone();
                Ok(())
            }
            "rate" => match handlers::parse_int(value) {
                Some(r) if (0..=i64::from(u32::MAX)).contains(&r) => {
                    let r = r as u64;
                    self.tb.assign_adjust(r, if r < 200 { 2 } else { r / 100 });
                    Ok(())
                }
                _ => syntax(),
            },
            "limit" => match handlers::parse_int(value) {
                Some(l) => {
                    self.limit = if l >= 0 { Some(l as u64) } else { None };
                    Ok(())
                }
                None => syntax(),
            },
            "active" => match handlers::parse_bool(value) {
                Some(v) => {
                    self.active = v;
                    if push && v && !cx.task_scheduled() {
                        self.tb.set(1);
                        cx.schedule_task();
                    }
                    Ok(())
                }
                None => syntax(),
            },
            "reset" => {
                self.count = 0;
                self.tb.set(1);
                if push && self.active && !cx.task_scheduled() {
                    cx.schedule_task();
                }
                Ok(())
            }
            "length" | "datasize" => match handlers::parse_int(value) {
                Some(d) => {
                    self.datasize = d;
                    self.packet = source_data(&self.data, d);
                    Ok(())
                }
                None => syntax(),
            },
            _ => return None,
        })
    }

    crate::element_any!();
}
