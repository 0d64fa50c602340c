//! Message: prints a message, warning or error when configured.

use crate::prelude::*;

/// `Message(MESSAGE [, TYPE])`.
#[derive(Default)]
pub struct Message;

pub static SPEC: ClassSpec = ClassSpec {
    name: "Message",
    port_count: "0/0",
    processing: "a/a",
    group: "standard",
    signature: "Message(MESSAGE [, TYPE])",
    summary: "Prints a message on configuration.",
    description: "Prints MESSAGE (a string) when the router is configured, under Click's \
`FILE:LINE: While configuring 'NAME :: Message':` line. TYPE is `MESSAGE` (the default), \
`WARNING` (printed as a warning) or `ERROR` (an error: the router fails to initialize).",
    ports: "none",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Message),
};

impl Element for Message {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let msg = a.read_mp::<String>("MESSAGE")?;
        let ty = a.read_p::<String>("TYPE")?;
        a.complete()?;
        match ty.as_deref().unwrap_or("MESSAGE") {
            "MESSAGE" => cx.message(&msg),
            "WARNING" => cx.warning(&msg),
            "ERROR" => return Err(msg),
            _ => return Err("unrecognized message type".into()),
        }
        Ok(())
    }

    crate::element_any!();
}
