//! Expansion of `$VAR`, `${VAR}` and `$(HANDLER ARGS)` in a Script's
//! instructions (Click's `cp_expand` with the Script's expander), and the
//! handler calls those and `read`/`write` make: the Script's own
//! handlers first, then any element's through the router.

use super::expr::unparse_bool;
use super::run::Errh;
use super::Script;
use crate::prelude::*;
use alloc::format;
use click_lang::args;

fn is_num_start(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// An expansion that would grow over the handler value limit (`set x
/// $x$x` in a loop) stops there: an error, and an empty value.
fn too_large(cx: &Ctx, e: &mut Errh) -> String {
    e.error(
        cx,
        &format!(
            "value too large (over {} bytes); set to empty",
            cx.max_handler_value()
        ),
    );
    String::new()
}

impl Script {
    /// Click's `cp_expand` with the Script's variable expander.
    pub(super) fn expand(
        &mut self,
        s: &str,
        expand_quote: bool,
        cx: &Ctx,
        e: &mut Errh,
        depth: u32,
    ) -> String {
        if !s.contains('$') {
            return s.to_string();
        }
        let b = s.as_bytes();
        let end = b.len();
        let mut out = String::new();
        let mut unint = 0usize;
        let mut quote = 0u8;
        let mut i = 0usize;
        'scan: while i < end {
            match b[i] {
                b'\\' if i + 1 < end && quote == b'"' => i += 1,
                b'\'' | b'"' => {
                    if quote == 0 {
                        quote = b[i];
                    } else if quote == b[i] {
                        quote = 0;
                    }
                }
                b'/' if i + 1 < end && (b[i + 1] == b'/' || b[i + 1] == b'*') && quote == 0 => {
                    i = args::skip_comment_space(s, i);
                    continue;
                }
                b'$' if i + 1 < end && quote != b'\'' && depth <= 10 => {
                    let before = i;
                    let vtype;
                    let mut expand_vname = false;
                    let vname: String;
                    if b[i + 1] == b'{' {
                        vtype = b'{';
                        i += 2;
                        let cstart = i;
                        while i < end && b[i] != b'}' {
                            if b[i] == b'$' {
                                expand_vname = true;
                            }
                            i += 1;
                        }
                        if i == end {
                            break 'scan;
                        }
                        vname = s[cstart..i].to_string();
                        i += 1;
                    } else if b[i + 1] == b'(' {
                        vtype = b'(';
                        i += 2;
                        let cstart = i;
                        let mut level = 1;
                        let mut nq = 0u8;
                        while i < end && level > 0 {
                            match b[i] {
                                b'(' if nq == 0 => level += 1,
                                b')' if nq == 0 => level -= 1,
                                b'"' | b'\'' => {
                                    if nq == 0 {
                                        nq = b[i];
                                    } else if nq == b[i] {
                                        nq = 0;
                                    }
                                }
                                b'\\' if i + 1 < end && nq != b'\'' => i += 1,
                                b'$' if nq != b'\'' => expand_vname = true,
                                _ => {}
                            }
                            i += 1;
                        }
                        if level > 0 || i == cstart {
                            break 'scan;
                        }
                        vname = s[cstart..i - 1].to_string();
                    } else if is_num_start(b[i + 1]) {
                        vtype = b'a';
                        i += 1;
                        let cstart = i;
                        while i < end && is_num_start(b[i]) {
                            i += 1;
                        }
                        vname = s[cstart..i].to_string();
                    } else if matches!(b[i + 1], b'?' | b'#' | b'$') {
                        vtype = b'a';
                        vname = s[i + 1..i + 2].to_string();
                        i += 2;
                    } else {
                        i += 1;
                        continue;
                    }
                    out.push_str(&s[unint..before]);
                    let vname = if expand_vname {
                        self.expand(&vname, false, cx, e, depth + 1)
                    } else {
                        vname
                    };
                    unint = i;
                    match self.expand_var(&vname, vtype, cx, e) {
                        None => {
                            if expand_vname {
                                out.push(b[before] as char);
                                out.push(b[before + 1] as char);
                                out.push_str(&vname);
                                out.push(b[i - 1] as char);
                            } else {
                                unint = before;
                            }
                        }
                        Some(text) => {
                            if out.len().saturating_add(text.len()) > cx.max_handler_value() {
                                return too_large(cx, e);
                            }
                            if quote == b'"' || (expand_quote && quote == 0) {
                                let q = args::quote(&text);
                                let inner = if q.starts_with('"') && q.len() >= 2 {
                                    &q[1..q.len() - 1]
                                } else {
                                    &q[..]
                                };
                                if quote == b'"' {
                                    out.push_str(inner);
                                } else {
                                    out.push('"');
                                    out.push_str(inner);
                                    out.push('"');
                                }
                            } else {
                                out.push_str(&text);
                            }
                        }
                    }
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        // (an expansion may be empty: `return $(kill ...)` returns "", not
        // the text it started from)
        out.push_str(&s[unint.min(end)..]);
        if out.len() > cx.max_handler_value() {
            return too_large(cx, e);
        }
        out
    }

    pub(super) fn expand_var(
        &mut self,
        vname: &str,
        vtype: u8,
        cx: &Ctx,
        e: &mut Errh,
    ) -> Option<String> {
        if let Some(i) = self.find_var(vname, false) {
            return Some(self.vars[i].1.clone());
        }
        match vname {
            "?" => return Some(self.write_status.to_string()),
            "args" => return Some(self.run_args.clone()),
            "$" => return Some(cx.pid().unwrap_or(0).to_string()),
            "0" => return Some(self.run_name.clone()),
            "#" => return Some(args::split_words(&self.run_args).len().to_string()),
            "write" => return Some(unparse_bool(self.run_write)),
            _ => {}
        }
        if vname
            .as_bytes()
            .first()
            .is_some_and(|c| (b'1'..=b'9').contains(c))
        {
            if let Ok(n) = vname.parse::<usize>() {
                let words = args::split_words(&self.run_args);
                return Some(words.get(n - 1).cloned().unwrap_or_default());
            }
        }
        if vtype == b'(' {
            return self.call_read_desc(vname, false, cx, e);
        }
        None
    }

    // ---- handler calls ------------------------------------------------

    /// Splits `[elem.]handler rest` and tells whether it names this script.
    pub(super) fn own_handler<'b>(&self, hname: &'b str, cx: &Ctx) -> Option<&'b str> {
        match hname.rfind('.') {
            None => Some(hname),
            Some(0) => None,
            Some(d) => {
                let ename = &hname[..d];
                if ename == cx.name() {
                    Some(&hname[d + 1..])
                } else {
                    None
                }
            }
        }
    }

    pub(super) fn call_read_desc(
        &mut self,
        desc: &str,
        unquote: bool,
        cx: &Ctx,
        e: &mut Errh,
    ) -> Option<String> {
        let mut rest = String::from(desc);
        let hname = args::shift_word(&mut rest);
        let param = if unquote { args::unquote(&rest) } else { rest };
        if hname.is_empty() {
            e.error(cx, "empty handler name");
            return None;
        }
        if let Some(h) = self.own_handler(&hname, cx) {
            if let Some(r) = self.own_read(h, &param, cx) {
                return match r {
                    Ok(v) => Some(v),
                    Err(m) => {
                        e.nested(cx, &calling(&hname, &param), &m);
                        Some(String::new())
                    }
                };
            }
        }
        let r = if param.is_empty() {
            cx.call_read(&hname)
        } else {
            match cx.call_read_param(&hname, &param) {
                Err(HandlerError::NoSuchHandler(_)) if cx.call_read(&hname).is_ok() => {
                    e.error(
                        cx,
                        &format!("read handler '{}' does not take parameters", hname),
                    );
                    return None;
                }
                r => r,
            }
        };
        match r {
            Ok(v) => Some(v),
            Err(HandlerError::NoSuchElement(el)) => {
                e.error(cx, &format!("no element named '{}'", el));
                None
            }
            Err(HandlerError::NoSuchHandler(_)) | Err(HandlerError::PermissionDenied(_)) => {
                e.error(cx, &format!("no '{}' read handler", hname));
                None
            }
            Err(HandlerError::Failed(m)) => {
                e.nested(cx, &calling(&hname, &param), &m);
                Some(String::new())
            }
            Err(err) => {
                e.error(cx, &err.to_string());
                None
            }
        }
    }

    pub(super) fn call_write_desc(&mut self, desc: &str, unquote: bool, cx: &Ctx, e: &mut Errh) {
        let mut rest = String::from(desc);
        let hname = args::shift_word(&mut rest);
        let value = if unquote { args::unquote(&rest) } else { rest };
        if hname.is_empty() {
            e.error(cx, "empty handler name");
            return;
        }
        if hname == "stop" {
            let n = args::parse_i64(value.trim()).unwrap_or(1).max(1);
            for _ in 0..n {
                cx.please_stop_driver();
            }
            self.write_status = 0;
            return;
        }
        if let Some(h) = self.own_handler(&hname, cx) {
            if h == "set" {
                let mut v = value.clone();
                let var = args::shift_word(&mut v);
                if var.is_empty() {
                    e.nested(cx, &calling(&hname, &value), "no variable");
                    self.write_status = -22;
                } else {
                    let i = self.find_var(&var, true).unwrap_or(0);
                    self.vars[i].1 = v;
                    self.write_status = 0;
                }
                return;
            }
        }
        match cx.call_write(&hname, &value) {
            Ok(()) => self.write_status = 0,
            Err(HandlerError::NoSuchElement(el)) => {
                e.error(cx, &format!("no element named '{}'", el))
            }
            Err(HandlerError::NoSuchHandler(_)) | Err(HandlerError::PermissionDenied(_)) => {
                e.error(cx, &format!("no '{}' write handler", hname))
            }
            Err(HandlerError::Failed(m)) => {
                e.nested(cx, &calling(&hname, &value), &m);
                self.write_status = -22;
            }
            Err(err) => {
                e.error(cx, &err.to_string());
                self.write_status = -16;
            }
        }
    }
}

/// Click's context line for a handler call: `While calling 'NAME VALUE':`
/// (HandlerCall::unparse).
fn calling(hname: &str, value: &str) -> String {
    if value.is_empty() {
        format!("While calling '{}':", hname)
    } else {
        format!("While calling '{} {}':", hname, value)
    }
}
