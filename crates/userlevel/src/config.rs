//! Loading a configuration as Click's driver does: the lexer knows every
//! class, and `-p`/`-u` add ControlSockets named as click.cc names them.

use crate::options::Options;
use click::prelude::*;

/// Parses a configuration as Click's driver does — the lexer knows every
/// class, so a bare word that is neither an element nor a class is an
/// undeclared element — and adds the ControlSockets of `-p` and `-u`.
/// Errors are the lexer's (Click prints no "could not be initialized"
/// after them), unknown classes among them.
pub fn parse_for_driver(
    text: &str,
    file: &str,
    o: &Options,
    registry: &Registry,
) -> Result<click_lang::FlatConfig, Vec<String>> {
    let is_class = |n: &str| registry.get(n).is_some();
    let popts = click_lang::ParseOptions {
        is_class: Some(&is_class),
    };
    let mut flat = click_lang::parse_config_with(text, file, &o.defines, &popts)
        .map_err(|errs| errs.iter().map(|e| e.to_string()).collect::<Vec<_>>())?;
    add_control_sockets(&mut flat, o);
    let unknown: Vec<String> = flat
        .elements
        .iter()
        .filter(|e| registry.get(&e.class).is_none())
        .map(|e| format!("{}: unknown element class '{}'", e.landmark, e.class))
        .collect();
    if unknown.is_empty() {
        Ok(flat)
    } else {
        Err(unknown)
    }
}

/// Adds the ControlSockets of `-p` and `-u`, named as click.cc names
/// them (`click_driver@@ControlSocket`, then `...@1`, `...@2`, ...); under
/// `--allow-socket-reconfigure` the `-u` ones have `RECONFIGURE true`.
fn add_control_sockets(flat: &mut click_lang::FlatConfig, o: &Options) {
    let reconfigure = if o.socket_reconfigure {
        ", RECONFIGURE true"
    } else {
        ""
    };
    let configs = o.ports.iter().map(|p| format!("TCP, {p}")).chain(
        o.unix_sockets
            .iter()
            .map(|f| format!("UNIX, {}{reconfigure}", click_lang::args::quote(f))),
    );
    for (n, config) in configs.enumerate() {
        let name = if n == 0 {
            "click_driver@@ControlSocket".to_string()
        } else {
            format!("click_driver@@ControlSocket@{n}")
        };
        flat.elements.push(click_lang::FlatElement {
            name,
            class: "ControlSocket".into(),
            config,
            landmark: click_lang::Landmark {
                file: "click".into(),
                line: 0,
                col: 0,
            },
        });
    }
}
