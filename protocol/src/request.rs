//! The methods, the typed request (one variant per method, with its
//! parameters), and the link from each method's parameters to its answer.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, ErrorCode};
use crate::explain::Explained;
use crate::pane::PaneView;
use crate::params;
use crate::reply;

/// A method's parameters, tied to its name and to what it answers. A
/// client calls with the parameters and reads the answer as
/// [`Call::Reply`]; the daemon reads the [`Request`] they make.
pub trait Call: Serialize + DeserializeOwned + JsonSchema + Into<Request> {
    /// The method these parameters are for.
    const METHOD: Method;
    /// What it answers on success.
    type Reply: Serialize + DeserializeOwned + JsonSchema;
}

/// Declares the methods: the [`Method`] names, the [`Request`] variants and
/// each parameter type's [`Call`] implementation, from one table.
macro_rules! methods {
    ($($(#[$doc:meta])* $name:ident = $wire:literal => $reply:ty;)*) => {
        /// A method's name. `as_str` gives it as the wire spells it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Method {
            $($(#[$doc])* $name,)*
        }

        impl Method {
            /// Every method.
            pub const ALL: &'static [Method] = &[$(Method::$name,)*];

            /// The name on the wire: `send_keys`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Method::$name => $wire,)*
                }
            }

            /// The method named `word` on the wire, if there is one.
            pub fn parse(word: &str) -> Option<Method> {
                match word {
                    $($wire => Some(Method::$name),)*
                    _ => None,
                }
            }

            /// The JSON schemas of its parameters and its answer, their
            /// definitions added to `generator`'s.
            pub fn schemas(
                self,
                generator: &mut schemars::SchemaGenerator,
            ) -> (schemars::Schema, schemars::Schema) {
                match self {
                    $(Method::$name => (
                        generator.subschema_for::<params::$name>(),
                        generator.subschema_for::<$reply>(),
                    ),)*
                }
            }
        }

        /// A request, typed: the method and its parameters.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Request {
            $($(#[$doc])* $name(params::$name),)*
        }

        impl Request {
            /// Its method.
            pub fn method(&self) -> Method {
                match self {
                    $(Request::$name(_) => Method::$name,)*
                }
            }

            /// Reads a request line's `method` and `params`. Parameters are
            /// read leniently (a field of the wrong type is absent), and
            /// `params` that is not an object has none; only a method with
            /// no such name is refused (`unknown_method`).
            pub fn from_wire(method: &str, params: Value) -> Result<Request, Error> {
                let params = match params {
                    Value::Object(map) => Value::Object(map),
                    _ => Value::Object(Default::default()),
                };
                let bad = |e: serde_json::Error| {
                    Error::new(
                        ErrorCode::BadRequest,
                        format!("the parameters of `{method}` cannot be read: {e}"),
                    )
                };
                match Method::parse(method) {
                    $(Some(Method::$name) => serde_json::from_value(params)
                        .map(Request::$name)
                        .map_err(bad),)*
                    None => Err(Error::new(
                        ErrorCode::UnknownMethod,
                        format!("unknown method `{method}`"),
                    )),
                }
            }

            /// Its parameters as JSON, for the request line.
            pub fn params(&self) -> Value {
                match self {
                    $(Request::$name(p) => serde_json::to_value(p),)*
                }
                // Plain structs with string keys always serialize.
                .unwrap_or(Value::Null)
            }
        }

        $(
            impl Call for params::$name {
                const METHOD: Method = Method::$name;
                type Reply = $reply;
            }

            impl From<params::$name> for Request {
                fn from(p: params::$name) -> Request {
                    Request::$name(p)
                }
            }
        )*
    };
}

methods! {
    /// `ping`: is the daemon there, and which protocol does it speak.
    Ping = "ping" => reply::Pong;
    /// `list`: every pane.
    List = "list" => Vec<PaneView>;
    /// `get`: one pane.
    Get = "get" => PaneView;
    /// `remotes`: each remote's link.
    Remotes = "remotes" => Vec<reply::Link>;
    /// `remotes_reload`: read the remotes in `config.toml` again.
    RemotesReload = "remotes_reload" => reply::Reloaded;
    /// `goto`: move a client to a pane.
    Goto = "goto" => reply::Moved;
    /// `status`: the summary and its counts.
    Status = "status" => reply::Overview;
    /// `next`: the pane to go to next (`jump`: go there).
    Next = "next" => reply::Target;
    /// `capture`: a pane as the files of a test case.
    Capture = "capture" => reply::Captured;
    /// `explain`: why a pane is in its state.
    Explain = "explain" => Explained;
    /// `read`: a pane's text.
    Read = "read" => reply::Text;
    /// `stop`: stop the daemon.
    Stop = "stop" => reply::Stopping;
    /// `poke`: look at the panes again now.
    Poke = "poke" => reply::Empty;
    /// `report`: an agent posts its state.
    Report = "report" => reply::Reported;
    /// `release`: drop a self-report.
    Release = "release" => reply::Released;
    /// `report_metadata`: a pane's label.
    ReportMetadata = "report_metadata" => reply::Labelled;
    /// `stop_request`: ask an agent to stop.
    StopRequest = "stop_request" => reply::FlagSet;
    /// `inbox`: an agent reads its stop flag.
    Inbox = "inbox" => reply::Flags;
    /// `ack`: an agent acknowledges its stop flag.
    Ack = "ack" => reply::Acknowledged;
    /// `park`: shelve a pane.
    Park = "park" => reply::Parked;
    /// `unpark`: end a park.
    Unpark = "unpark" => reply::Unparked;
    /// `snooze`: hide a pane's demands for a while.
    Snooze = "snooze" => reply::Snoozed;
    /// `unsnooze`: end a snooze.
    Unsnooze = "unsnooze" => reply::Unsnoozed;
    /// `prompt`: paste a prompt into an agent (and wait for its reaction).
    Prompt = "prompt" => reply::PromptReply;
    /// `answer`: approve or deny an agent's dialog.
    Answer = "answer" => reply::Answered;
    /// `send_keys`: keys to a pane.
    SendKeys = "send_keys" => reply::Sent;
    /// `resume`: go on after an agent's usage limit (its resume text, or
    /// its limit dialog's keys), while the limit is on its screen.
    Resume = "resume" => reply::Resumed;
    /// `events`: stream the bus's events (answered first with
    /// [`reply::Subscribed`], then one event a line).
    Events = "events" => reply::Subscribed;
    /// `guard`: held open until the daemon stops (answered first with
    /// `{}`, then `bye` on a clean stop).
    Guard = "guard" => reply::Empty;
    /// `relay`: `tend run` says it relays the pane it runs in; held open
    /// while it does (answered first with `{}`).
    Relay = "relay" => reply::Empty;
    /// `wait`: until a pane's agent reaches a state.
    Wait = "wait" => reply::Waited;
    /// `restore`: start each agent left running when its server ended
    /// again, in its pane and its own conversation.
    Restore = "restore" => reply::Restored;
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_method_reads_back_by_its_wire_name() {
        for m in Method::ALL {
            assert_eq!(Method::parse(m.as_str()), Some(*m));
            let req = Request::from_wire(m.as_str(), json!({})).expect("no parameter is required");
            assert_eq!(req.method(), *m);
        }
    }

    #[test]
    fn an_unknown_method_is_refused_with_its_name() {
        let e = Request::from_wire("frobnicate", json!({})).expect_err("unknown");
        assert_eq!(e.code, ErrorCode::UnknownMethod);
        assert_eq!(e.message, "unknown method `frobnicate`");
    }

    #[test]
    fn params_that_are_not_an_object_are_no_params() {
        for params in [Value::Null, json!(5.55e62), json!("x"), json!([1])] {
            let req = Request::from_wire("get", params).expect("reads");
            assert_eq!(
                req,
                Request::Get(params::Get {
                    pane: String::new()
                })
            );
        }
    }

    #[test]
    fn typed_params_make_the_json_the_cli_always_sent() {
        let req: Request = params::Report {
            pane: "%3".into(),
            state: "working".into(),
            seq: Some(7),
            ..Default::default()
        }
        .into();
        assert_eq!(
            req.params(),
            json!({"pane": "%3", "state": "working", "reason": null, "message": null,
                   "every": null, "seq": 7, "ack": false})
        );
        let snooze = Request::from(params::Snooze {
            pane: "%1".into(),
            length: Some("6h".into()),
        });
        assert_eq!(snooze.params(), json!({"pane": "%1", "for": "6h"}));
        let events = Request::from(params::Events::default());
        assert_eq!(
            events.params(),
            json!({"pane": null, "type": null, "state": null})
        );
    }
}
