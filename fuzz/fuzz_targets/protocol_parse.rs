//! The control protocol's request parser: any bytes a client sends. A
//! parsed request must survive a serialise/parse round trip unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tend::protocol::{Request, Response};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for line in text.lines() {
        if let Ok(req) = serde_json::from_str::<Request>(line) {
            let again: Request = serde_json::from_str(&serde_json::to_string(&req).expect("serialise"))
                .expect("round trip");
            assert_eq!(again, req);
        }
        let _ = serde_json::from_str::<Response>(line);
    }
});
