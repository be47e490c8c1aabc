//! The protocol's JSON Schema, generated from the types: what
//! `docs/protocol.schema.json` holds.

use serde_json::{json, Map, Value};

use crate::event::BusEvent;
use crate::request::Method;
use crate::wire::{Envelope, Response};
use crate::{ErrorCode, PROTOCOL_VERSION};

/// The schema: the request and answer lines, each method's parameters and
/// result, the bus events and the error codes.
pub fn schema() -> Value {
    let mut generator = schemars::SchemaGenerator::default();
    let request = generator.subschema_for::<Envelope>();
    let response = generator.subschema_for::<Response>();
    let event = generator.subschema_for::<BusEvent>();
    let code = generator.subschema_for::<ErrorCode>();
    let mut methods = Map::new();
    for m in Method::ALL {
        let (params, result) = m.schemas(&mut generator);
        methods.insert(
            m.as_str().to_owned(),
            json!({"params": params, "result": result}),
        );
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "tend control protocol",
        "description": format!(
            "Newline-delimited JSON over the daemon's Unix socket (mode 0600, peer uid checked). \
             Protocol version {PROTOCOL_VERSION} (see `ping`). A request line is `request`; \
             its answer, `response`, whose result is the method's `result` (see `methods`) and \
             whose error's code is an `error_code`. `events` answers, then writes one `event` \
             a line."
        ),
        "protocol_version": PROTOCOL_VERSION,
        "request": request,
        "response": response,
        "event": event,
        "error_code": code,
        "methods": methods,
        "$defs": generator.take_definitions(true),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed schema is the generated one. Regenerate with
    /// `TEND_WRITE_SCHEMA=1 cargo test -p tend-protocol schema_is_committed`.
    #[test]
    fn schema_is_committed() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/protocol.schema.json");
        let want = format!(
            "{}\n",
            serde_json::to_string_pretty(&schema()).expect("a schema is JSON")
        );
        if std::env::var_os("TEND_WRITE_SCHEMA").is_some() {
            std::fs::write(&path, &want).expect("write the schema");
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "docs/protocol.schema.json is stale: run \
             TEND_WRITE_SCHEMA=1 cargo test -p tend-protocol schema_is_committed"
        );
    }
}
