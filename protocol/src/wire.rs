//! The protocol as lines on the socket: the request line ([`Envelope`]),
//! the answer line ([`Response`]) and the text of an event.
//!
//! The bytes are the ones tend wrote when its answers and events were
//! built as JSON values: a result and an event go through
//! `serde_json::Value`, whose objects keep their keys sorted, and the
//! answer line around a result keeps its field order (`id`, `result`,
//! `error`). A client should not depend on the order, but none has to
//! notice a change.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, ErrorCode};
use crate::reply::Reply;
use crate::request::Request;

/// A request line as sent: `{"id": N, "method": "...", "params": {...}}`.
/// [`Request::from_wire`] reads its method and parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Envelope {
    /// Echoed in the response.
    #[serde(default)]
    pub id: u64,
    /// The method's name (see [`crate::Method`]).
    pub method: String,
    /// Its parameters.
    #[serde(default)]
    pub params: Value,
}

impl Envelope {
    /// The line for `request`, with `id`.
    pub fn new(id: u64, request: &Request) -> Envelope {
        Envelope {
            id,
            method: request.method().as_str().to_owned(),
            params: request.params(),
        }
    }

    /// The typed request it carries.
    pub fn request(&self) -> Result<Request, Error> {
        Request::from_wire(&self.method, self.params.clone())
    }
}

/// An answer line: the request's `id` and either `result` or `error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Response {
    /// The request's id.
    pub id: u64,
    /// The result, on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error, on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Error>,
}

impl Response {
    /// The answer to request `id`.
    pub fn answer(id: u64, outcome: Result<Reply, Error>) -> Response {
        match outcome {
            Ok(reply) => Response::ok(id, &reply),
            Err(e) => Response::refusal(id, e),
        }
    }

    /// A success carrying `result`.
    pub fn ok(id: u64, result: &impl Serialize) -> Response {
        Response {
            id,
            result: Some(serde_json::to_value(result).unwrap_or(Value::Null)),
            error: None,
        }
    }

    /// A refusal.
    pub fn refusal(id: u64, error: Error) -> Response {
        Response {
            id,
            result: None,
            error: Some(error),
        }
    }

    /// A refusal with `code` and `message`.
    pub fn err(id: u64, code: ErrorCode, message: impl Into<String>) -> Response {
        Response::refusal(id, Error::new(code, message))
    }

    /// The line to write, newline included.
    pub fn to_line(&self) -> String {
        // Plain data: serializing cannot fail.
        let mut text = serde_json::to_string(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// The result, or the error (a response with neither has the result
    /// `null`).
    pub fn into_result(self) -> Result<Value, Error> {
        match (self.result, self.error) {
            (_, Some(e)) => Err(e),
            (Some(v), None) => Ok(v),
            (None, None) => Ok(Value::Null),
        }
    }
}

/// `value` (an event) as one line of JSON with its keys sorted, newline
/// included.
pub fn line(value: &impl Serialize) -> String {
    let mut text = serde_json::to_value(value)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| "null".to_owned());
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params;
    use crate::reply::Pong;
    use serde_json::json;

    #[test]
    fn lines_round_trip() {
        let req = Envelope::new(
            3,
            &params::Wait {
                pane: "%1".into(),
                until: vec!["idle".into()],
                timeout_ms: None,
            }
            .into(),
        );
        let back: Envelope = serde_json::from_str(&line(&req)).expect("reads");
        assert_eq!(back, req);
        assert_eq!(
            back.request().expect("a wait").method(),
            crate::Method::Wait
        );
        for r in [
            Response::ok(1, &json!({"x": 1})),
            Response::err(2, ErrorCode::AgentBlocked, "answer it first"),
        ] {
            let back: Response = serde_json::from_str(&r.to_line()).expect("reads");
            assert_eq!(back, r);
        }
    }

    #[test]
    fn answers_are_written_with_sorted_keys_as_before() {
        let pong = Pong {
            protocol: 1,
            version: "0.1.0".into(),
            pid: 42,
            panes: 2,
            backend: "tmux".into(),
        };
        assert_eq!(
            Response::answer(7, Ok(pong.into())).to_line(),
            "{\"id\":7,\"result\":{\"backend\":\"tmux\",\"panes\":2,\"pid\":42,\"protocol\":1,\"version\":\"0.1.0\"}}\n"
        );
        assert_eq!(
            Response::err(0, ErrorCode::UnknownPane, "no pane %9").to_line(),
            "{\"id\":0,\"error\":{\"code\":\"unknown_pane\",\"message\":\"no pane %9\"}}\n"
        );
    }

    /// Found by the `protocol_parse` fuzz target: a float in `params` must
    /// survive a round trip exactly (serde_json's `float_roundtrip`).
    #[test]
    fn fuzz_regression_float_params_round_trip() {
        let line = r#"{"id":3,"method":"[4","params":5.55e62}"#;
        let req: Envelope = serde_json::from_str(line).expect("reads");
        let again: Envelope =
            serde_json::from_str(&serde_json::to_string(&req).expect("writes")).expect("reads");
        assert_eq!(again, req);
    }
}
