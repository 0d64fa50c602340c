//! Reading handlers as click.cc's `-h` does: element names, glob patterns
//! or class names before the dot, with Click's messages for what is not
//! there.

use click::prelude::*;
use click::router::HandlerError;

/// Click's `glob_match`: `*`, `?` and `[...]` classes.
pub fn glob_match(s: &str, pat: &str) -> bool {
    fn go(s: &[char], p: &[char]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some('*') => (0..=s.len()).any(|k| go(&s[k..], &p[1..])),
            Some('?') => !s.is_empty() && go(&s[1..], &p[1..]),
            Some('[') => {
                let Some(end) = p.iter().skip(1).position(|&c| c == ']').map(|x| x + 1) else {
                    return !s.is_empty() && s[0] == '[' && go(&s[1..], &p[1..]);
                };
                if s.is_empty() {
                    return false;
                }
                let set = &p[1..end];
                let (neg, set) = match set.first() {
                    Some('^') | Some('!') => (true, &set[1..]),
                    _ => (false, set),
                };
                let mut hit = false;
                let mut j = 0;
                while j < set.len() {
                    if j + 2 < set.len() && set[j + 1] == '-' {
                        if set[j] <= s[0] && s[0] <= set[j + 2] {
                            hit = true;
                        }
                        j += 3;
                    } else {
                        if set[j] == s[0] {
                            hit = true;
                        }
                        j += 1;
                    }
                }
                hit != neg && go(&s[1..], &p[end + 1..])
            }
            Some(&c) => !s.is_empty() && s[0] == c && go(&s[1..], &p[1..]),
        }
    }
    let s: Vec<char> = s.chars().collect();
    let p: Vec<char> = pat.chars().collect();
    go(&s, &p)
}

/// Reads one handler as click.cc's `call_read_handler` does, appending the
/// output to `out`; errors go to `errs`.
fn call_read_handler(
    router: &Router,
    elem: Option<&str>,
    h: &str,
    print_name: bool,
    out: &mut String,
    errs: &mut Vec<String>,
) {
    let full = match elem {
        Some(e) => format!("{e}.{h}"),
        None => h.to_string(),
    };
    match router.read_handler(&full) {
        Ok(mut v) => {
            if print_name {
                out.push_str(&full);
                out.push_str(":\n");
            }
            if !v.is_empty() && !v.ends_with('\n') {
                v.push('\n');
            }
            out.push_str(&v);
            if print_name {
                out.push('\n');
            }
        }
        Err(HandlerError::PermissionDenied(_)) => errs.push(format!("'{full}' is a write handler")),
        Err(HandlerError::NoSuchHandler(_)) | Err(HandlerError::NoSuchElement(_)) => {
            errs.push(format!("no '{full}' handler"))
        }
        Err(e) => errs.push(format!("{full}: {e}")),
    }
}

fn handler_readable(router: &Router, elem: &str, h: &str) -> bool {
    let Ok(list) = router.read_handler(&format!("{elem}.handlers")) else {
        return false;
    };
    list.lines().any(|l| {
        let mut it = l.split('\t');
        it.next() == Some(h) && it.next().is_some_and(|f| f.contains('r'))
    })
}

/// click.cc's `call_read_handlers`: element names, glob patterns, or
/// class names before the dot.
pub fn call_read_handlers(
    router: &Router,
    handlers: &[String],
    out: &mut String,
    errs: &mut Vec<String>,
) {
    let print_names = handlers.len() > 1;
    // the `list` handler names every element, on every thread
    let names: Vec<String> = match router.read_handler("list") {
        Ok(l) => l.lines().skip(1).map(|s| s.to_string()).collect(),
        Err(_) => router.element_names().map(|s| s.to_string()).collect(),
    };
    for spec in handlers {
        let Some(dot) = spec.rfind('.') else {
            call_read_handler(router, None, spec, print_names, out, errs);
            continue;
        };
        let (ename, hname) = (&spec[..dot], &spec[dot + 1..]);
        if names.iter().any(|n| n == ename) {
            call_read_handler(router, Some(ename), hname, print_names, out, errs);
            continue;
        }
        let is_pattern = ename.contains(['?', '*', '[']);
        let mut any = false;
        let mut matched: Vec<&String> = Vec::new();
        for n in &names {
            let hit = if is_pattern {
                glob_match(n, ename)
            } else {
                router
                    .read_handler(&format!("{n}.class"))
                    .is_ok_and(|c| c == ename)
            };
            if hit {
                any = true;
                if handler_readable(router, n, hname) {
                    matched.push(n);
                }
            }
        }
        if !any {
            errs.push(if is_pattern {
                format!("no element matching '{ename}'")
            } else {
                format!("no element '{ename}'")
            });
            continue;
        }
        for n in matched {
            call_read_handler(router, Some(n), hname, true, out, errs);
        }
    }
}
