//! The control protocol's request parser: any bytes a client sends. A
//! parsed request line must survive a serialise/parse round trip
//! unchanged, and reading its method and parameters never panics: every
//! parameter is read leniently, so only an unknown method is refused.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tend_protocol::{Envelope, ErrorCode, Method, Response};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for line in text.lines() {
        if let Ok(req) = serde_json::from_str::<Envelope>(line) {
            let again: Envelope = serde_json::from_str(&serde_json::to_string(&req).expect("serialise"))
                .expect("round trip");
            assert_eq!(again, req);
            match req.request() {
                Ok(typed) => assert_eq!(typed.method().as_str(), req.method),
                Err(e) => {
                    assert_eq!(e.code, ErrorCode::UnknownMethod);
                    assert!(Method::parse(&req.method).is_none());
                }
            }
        }
        let _ = serde_json::from_str::<Response>(line);
    }
});
