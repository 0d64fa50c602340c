//! A small, strict HTTP/1.1 server side: one request per connection
//! (`Connection: close`), `Content-Length` bodies only, hard limits on the
//! head and the body, and a deadline for slow clients. The parser works
//! on any `Read`, never panics on what it is given (see the fuzz test),
//! and reports every refusal as a status code with a reason.

use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

/// What a request may be.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Request line plus headers, bytes.
    pub max_head: usize,
    /// Number of header lines.
    pub max_headers: usize,
    /// Body, bytes (configurations up to 16 MiB fit with JSON escaping).
    pub max_body: usize,
    /// The whole request must arrive within this long (slow clients).
    pub deadline: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_head: 16 << 10,
            max_headers: 64,
            max_body: 40 << 20,
            deadline: Duration::from_secs(30),
        }
    }
}

/// A parsed request.
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub method: String,
    /// The path, not yet split or decoded (no query).
    pub path: String,
    /// Decoded query parameters.
    pub query: Vec<(String, String)>,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    pub fn query(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why a request was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// The client closed before sending anything (not an error to answer).
    Closed,
    /// 408: the request did not arrive in time.
    Timeout,
    /// 431 (head) or 413 (body), with what was too large.
    HeadTooLarge(String),
    BodyTooLarge(String),
    /// 400 with the reason.
    Bad(String),
    /// 501 (e.g. chunked request bodies) with the reason.
    Unsupported(String),
}

impl ParseError {
    pub fn status(&self) -> u16 {
        match self {
            ParseError::Closed => 400,
            ParseError::Timeout => 408,
            ParseError::HeadTooLarge(_) => 431,
            ParseError::BodyTooLarge(_) => 413,
            ParseError::Bad(_) => 400,
            ParseError::Unsupported(_) => 501,
        }
    }
    pub fn message(&self) -> String {
        match self {
            ParseError::Closed => "connection closed".into(),
            ParseError::Timeout => "request not received in time".into(),
            ParseError::HeadTooLarge(m)
            | ParseError::BodyTooLarge(m)
            | ParseError::Bad(m)
            | ParseError::Unsupported(m) => m.clone(),
        }
    }
}

fn io_err(e: io::Error) -> ParseError {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => ParseError::Timeout,
        _ => ParseError::Closed,
    }
}

/// Reads one request from `r`. The caller sets a short read timeout on
/// the socket; `lim.deadline` bounds the whole request.
pub fn read_request<R: Read>(r: &mut R, lim: &Limits) -> Result<Request, ParseError> {
    let t0 = Instant::now();
    let mut buf: Vec<u8> = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(p) = find_head_end(&buf) {
            break p;
        }
        if buf.len() > lim.max_head {
            return Err(ParseError::HeadTooLarge(format!(
                "request head over {} bytes",
                lim.max_head
            )));
        }
        if t0.elapsed() > lim.deadline {
            return Err(ParseError::Timeout);
        }
        let n = r.read(&mut chunk).map_err(io_err)?;
        if n == 0 {
            return Err(if buf.is_empty() {
                ParseError::Closed
            } else {
                ParseError::Bad("connection closed in the middle of the request head".into())
            });
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    if head_end > lim.max_head {
        return Err(ParseError::HeadTooLarge(format!(
            "request head over {} bytes",
            lim.max_head
        )));
    }
    let mut req = parse_head(&buf[..head_end], lim)?;
    let len = body_length(&req, lim)?;
    let mut body = buf.split_off(head_end + 4);
    if body.len() > len {
        body.truncate(len);
    }
    // Read straight into the body (large snapshots arrive in big reads),
    // growing it as bytes come rather than trusting Content-Length
    // with memory up front.
    let mut have = body.len();
    while have < len {
        if t0.elapsed() > lim.deadline {
            return Err(ParseError::Timeout);
        }
        if body.len() == have {
            let grow = (len - have).min(have.max(64 << 10));
            body.resize(have + grow, 0);
        }
        let n = r.read(&mut body[have..]).map_err(io_err)?;
        if n == 0 {
            return Err(ParseError::Bad(format!(
                "body ended after {have} of {len} bytes"
            )));
        }
        have += n;
    }
    body.truncate(have);
    req.body = body;
    Ok(req)
}

fn find_head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n")
}

fn body_length(req: &Request, lim: &Limits) -> Result<usize, ParseError> {
    if let Some(te) = req.header("transfer-encoding") {
        return Err(ParseError::Unsupported(format!(
            "Transfer-Encoding '{te}' in a request is not supported; send Content-Length"
        )));
    }
    let mut lens = req
        .headers
        .iter()
        .filter(|(k, _)| k == "content-length")
        .map(|(_, v)| v.as_str());
    let Some(v) = lens.next() else {
        return Ok(0);
    };
    if lens.next().is_some() {
        return Err(ParseError::Bad("more than one Content-Length".into()));
    }
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) || v.len() > 19 {
        return Err(ParseError::Bad(format!("bad Content-Length '{v}'")));
    }
    let n: u64 = v
        .parse()
        .map_err(|_| ParseError::Bad(format!("bad Content-Length '{v}'")))?;
    if n > lim.max_body as u64 {
        return Err(ParseError::BodyTooLarge(format!(
            "body of {n} bytes is over the limit of {} bytes",
            lim.max_body
        )));
    }
    Ok(n as usize)
}

/// Parses the request line and headers (without the final CRLF CRLF).
pub fn parse_head(head: &[u8], lim: &Limits) -> Result<Request, ParseError> {
    let text = std::str::from_utf8(head)
        .map_err(|_| ParseError::Bad("request head is not UTF-8".into()))?;
    let mut lines = text.split("\r\n");
    let line = lines.next().unwrap_or("");
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ParseError::Bad(format!(
            "bad request line '{}'",
            line.escape_debug()
        )));
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(ParseError::Bad(format!(
            "bad method '{}'",
            method.escape_debug()
        )));
    }
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(ParseError::Unsupported(format!(
            "unsupported protocol version '{}'",
            version.escape_debug()
        )));
    }
    if !target.starts_with('/') || target.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(ParseError::Bad(format!(
            "bad request target '{}'",
            target.escape_debug()
        )));
    }
    let (path, q) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (target, None),
    };
    let mut query = Vec::new();
    if let Some(q) = q {
        for kv in q.split('&').filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            let k = percent_decode(k)
                .ok_or_else(|| ParseError::Bad("bad percent-encoding in the query".into()))?;
            let v = percent_decode(v)
                .ok_or_else(|| ParseError::Bad("bad percent-encoding in the query".into()))?;
            query.push((k, v));
        }
    }
    let mut headers = Vec::new();
    for l in lines {
        if headers.len() >= lim.max_headers {
            return Err(ParseError::HeadTooLarge(format!(
                "more than {} header lines",
                lim.max_headers
            )));
        }
        let Some((k, v)) = l.split_once(':') else {
            return Err(ParseError::Bad(format!(
                "bad header line '{}'",
                l.escape_debug()
            )));
        };
        if k.is_empty() || k.bytes().any(|b| !(b.is_ascii_graphic()) || b == b':') {
            return Err(ParseError::Bad(format!(
                "bad header name '{}'",
                k.escape_debug()
            )));
        }
        headers.push((k.to_ascii_lowercase(), v.trim().to_string()));
    }
    Ok(Request {
        method: method.to_string(),
        path: path.to_string(),
        query,
        headers,
        body: Vec::new(),
    })
}

/// `%XX` decoding (and `+` left as is); `None` on bad escapes or
/// non-UTF-8 results.
pub fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = b.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(h).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Percent-encodes everything but unreserved characters.
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A whole response.
#[derive(Clone, Debug)]
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    /// More header lines (name, value).
    pub headers: Vec<(&'static str, String)>,
}

impl Response {
    pub fn json(status: u16, v: &serde_json::Value) -> Response {
        let mut body = serde_json::to_vec(v).unwrap_or_default();
        body.push(b'\n');
        Response {
            status,
            content_type: "application/json",
            body,
            headers: Vec::new(),
        }
    }
    pub fn text(status: u16, content_type: &'static str, body: String) -> Response {
        Response {
            status,
            content_type,
            body: body.into_bytes(),
            headers: Vec::new(),
        }
    }
}

pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unknown",
    }
}

/// Writes `resp` and closes the exchange (`Connection: close`).
pub fn write_response<W: Write>(w: &mut W, resp: &Response) -> io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        resp.status,
        reason(resp.status),
        resp.content_type,
        resp.body.len()
    )
    .into_bytes();
    for (k, v) in &resp.headers {
        out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    // One write for a small answer; a large body is not copied.
    if resp.body.len() <= 64 << 10 {
        out.extend_from_slice(&resp.body);
        w.write_all(&out)?;
    } else {
        w.write_all(&out)?;
        w.write_all(&resp.body)?;
    }
    w.flush()
}

/// Starts a chunked response (for streams).
pub fn write_chunked_head<W: Write>(w: &mut W, status: u16, content_type: &str) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        status,
        reason(status)
    );
    w.write_all(head.as_bytes())?;
    w.flush()
}

pub fn write_chunk<W: Write>(w: &mut W, data: &[u8]) -> io::Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    w.write_all(format!("{:x}\r\n", data.len()).as_bytes())?;
    w.write_all(data)?;
    w.write_all(b"\r\n")?;
    w.flush()
}

pub fn write_last_chunk<W: Write>(w: &mut W) -> io::Result<()> {
    w.write_all(b"0\r\n\r\n")?;
    w.flush()
}

/// A client's side of one exchange on an open connection (daemon to
/// daemon: live migration): sends a request, reads the answer framed by
/// its Content-Length, so the connection can carry another. Returns the
/// status and the body.
pub fn exchange<S: Read + Write>(
    s: &mut S,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: Option<(&str, &[u8])>,
) -> io::Result<(u16, Vec<u8>)> {
    let mut head = format!("{method} {target} HTTP/1.1\r\nHost: clickos\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    let data: &[u8] = match body {
        Some((ct, b)) => {
            head.push_str(&format!("Content-Type: {ct}\r\n"));
            b
        }
        None => &[],
    };
    head.push_str(&format!("Content-Length: {}\r\n\r\n", data.len()));
    if data.len() <= 64 << 10 {
        let mut out = head.into_bytes();
        out.extend_from_slice(data);
        s.write_all(&out)?;
    } else {
        s.write_all(head.as_bytes())?;
        s.write_all(data)?;
    }
    s.flush()?;
    let bad = |m: &str| io::Error::new(io::ErrorKind::InvalidData, m.to_string());
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(p) = find_head_end(&buf) {
            break p;
        }
        if buf.len() > 64 << 10 {
            return Err(bad("answer head too large"));
        }
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err(bad("the connection closed before an answer"));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let text = String::from_utf8_lossy(&buf[..end]).into_owned();
    let status: u16 = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| bad("bad status line"))?;
    let len: usize = text
        .split("\r\n")
        .skip(1)
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .ok_or_else(|| bad("no Content-Length in the answer"))?;
    let mut out = buf.split_off(end + 4);
    let have = out.len();
    if have < len {
        out.resize(len, 0);
        s.read_exact(&mut out[have..])?;
    }
    out.truncate(len);
    Ok((status, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn parse(bytes: &[u8]) -> Result<Request, ParseError> {
        read_request(&mut Cursor::new(bytes.to_vec()), &Limits::default())
    }

    #[test]
    fn a_plain_request_parses() {
        let r = parse(b"PUT /v1/instances/a%2Fb?x=1&y=a%20b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello").unwrap();
        assert_eq!(r.method, "PUT");
        assert_eq!(r.path, "/v1/instances/a%2Fb");
        assert_eq!(r.query("y"), Some("a b"));
        assert_eq!(r.header("host"), Some("x"));
        assert_eq!(r.body, b"hello");
    }

    #[test]
    fn refusals_have_their_status() {
        assert_eq!(parse(b"").unwrap_err(), ParseError::Closed);
        assert_eq!(parse(b"GET / HTTP/1.1\r\n").unwrap_err().status(), 400);
        assert_eq!(parse(b"GET /  HTTP/1.1\r\n\r\n").unwrap_err().status(), 400);
        assert_eq!(parse(b"GET / HTTP/2\r\n\r\n").unwrap_err().status(), 501);
        assert_eq!(
            parse(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")
                .unwrap_err()
                .status(),
            501
        );
        assert_eq!(
            parse(b"POST / HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n")
                .unwrap_err()
                .status(),
            413
        );
        assert_eq!(
            parse(b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n")
                .unwrap_err()
                .status(),
            400
        );
        assert_eq!(
            parse(b"POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc")
                .unwrap_err()
                .status(),
            400
        );
        let big = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(20000));
        assert_eq!(parse(big.as_bytes()).unwrap_err().status(), 431);
    }

    /// Random and mutated bytes never panic the parser.
    #[test]
    fn fuzz_the_parser() {
        let seeds: &[&[u8]] = &[
            b"GET /v1/instances HTTP/1.1\r\nHost: a\r\n\r\n",
            b"POST /v1/instances HTTP/1.1\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
            b"GET /v1/events?since=%41&follow=1 HTTP/1.0\r\n\r\n",
        ];
        let mut x: u64 = 0x9e3779b97f4a7c15;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let lim = Limits {
            max_body: 1 << 16,
            ..Limits::default()
        };
        for i in 0..20000 {
            let mut v: Vec<u8> = if i % 3 == 0 {
                (0..rnd() % 200).map(|_| rnd() as u8).collect()
            } else {
                seeds[i % seeds.len()].to_vec()
            };
            for _ in 0..(rnd() % 6) {
                if v.is_empty() {
                    break;
                }
                let p = (rnd() as usize) % v.len();
                match rnd() % 4 {
                    0 => v[p] = rnd() as u8,
                    1 => {
                        v.remove(p);
                    }
                    2 => v.insert(p, b"%\r\n: ?&="[(rnd() % 8) as usize]),
                    _ => v.truncate(p),
                }
            }
            let _ = read_request(&mut Cursor::new(v), &lim);
        }
    }
}
