//! JSON-RPC 2.0 as ACP frames it: one JSON object per line on the agent's
//! stdin and stdout. Pure: reading a line into a message, writing one.
//!
//! Everything read is the agent's and untrusted: a line that is not a
//! JSON-RPC object is reported as [`WireError`] and skipped by the caller,
//! never fatal, and ids are kept as the agent sent them (a number or a
//! string) so a response goes back under the same id.

use serde_json::{Value, json};

/// The protocol version awtui speaks.
pub const PROTOCOL_VERSION: u64 = 1;

/// JSON-RPC's "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;

/// One message from the agent.
#[derive(Clone, Debug, PartialEq)]
pub enum Incoming {
    /// The answer to one of awtui's requests.
    Response {
        id: u64,
        result: Result<Value, RpcError>,
    },
    /// The agent asks awtui something (a permission, a file).
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// The agent reports something (`session/update`).
    Notification { method: String, params: Value },
}

/// An error answer.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message} (code {code})")]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

/// Why a line is not a message.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WireError {
    #[error("not JSON: {0}")]
    NotJson(String),
    #[error("not a JSON-RPC message object")]
    NotAMessage,
    /// A response to an id awtui never used (awtui's ids are numbers).
    #[error("a response to an id awtui never sent: {0}")]
    ForeignId(String),
}

/// Reads one line.
pub fn parse_line(line: &str) -> Result<Incoming, WireError> {
    let value: Value =
        serde_json::from_str(line.trim()).map_err(|e| WireError::NotJson(e.to_string()))?;
    let Value::Object(mut obj) = value else {
        return Err(WireError::NotAMessage);
    };
    let method = obj
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    let params = obj.remove("params").unwrap_or(Value::Null);
    match (method, obj.remove("id")) {
        (Some(method), Some(id)) if !id.is_null() => Ok(Incoming::Request { id, method, params }),
        (Some(method), _) => Ok(Incoming::Notification { method, params }),
        (None, Some(id)) => {
            let Some(id) = id.as_u64() else {
                return Err(WireError::ForeignId(id.to_string()));
            };
            let result = match obj.remove("error") {
                Some(err) => Err(RpcError {
                    code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: err
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("(no message)")
                        .to_string(),
                }),
                None => Ok(obj.remove("result").unwrap_or(Value::Null)),
            };
            Ok(Incoming::Response { id, result })
        }
        (None, None) => Err(WireError::NotAMessage),
    }
}

/// A request line (newline included).
pub fn request(id: u64, method: &str, params: Value) -> String {
    line(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

/// A notification line.
pub fn notification(method: &str, params: Value) -> String {
    line(json!({"jsonrpc": "2.0", "method": method, "params": params}))
}

/// A result line answering the agent's request `id`.
pub fn response(id: &Value, result: Value) -> String {
    line(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// An error line answering the agent's request `id`.
pub fn error_response(id: &Value, code: i64, message: &str) -> String {
    line(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

fn line(v: Value) -> String {
    let mut s = v.to_string();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_notifications_and_responses() {
        let r = parse_line(
            r#"{"jsonrpc":"2.0","id":"a7","method":"session/request_permission","params":{"x":1}}"#,
        )
        .unwrap();
        assert_eq!(
            r,
            Incoming::Request {
                id: json!("a7"),
                method: "session/request_permission".into(),
                params: json!({"x": 1})
            }
        );
        let n = parse_line(r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#).unwrap();
        assert!(matches!(n, Incoming::Notification { method, .. } if method == "session/update"));
        let ok =
            parse_line(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#).unwrap();
        assert_eq!(
            ok,
            Incoming::Response {
                id: 3,
                result: Ok(json!({"stopReason": "end_turn"}))
            }
        );
        let err =
            parse_line(r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"No previous sessions found"}}"#)
                .unwrap();
        assert!(matches!(err, Incoming::Response { id: 4, result: Err(e) } if e.code == -32603));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(matches!(parse_line("hello"), Err(WireError::NotJson(_))));
        assert_eq!(parse_line("[1,2]"), Err(WireError::NotAMessage));
        assert_eq!(parse_line("{}"), Err(WireError::NotAMessage));
        assert!(matches!(
            parse_line(r#"{"id":"x","result":{}}"#),
            Err(WireError::ForeignId(_))
        ));
    }

    #[test]
    fn written_lines_are_one_line_each() {
        let l = request(
            1,
            "session/prompt",
            json!({"prompt": [{"type": "text", "text": "a\nb"}]}),
        );
        assert!(l.ends_with('\n') && l.matches('\n').count() == 1);
        assert_eq!(
            parse_line(&response(&json!("k"), json!({}))).unwrap_err(),
            WireError::ForeignId("\"k\"".into())
        );
    }
}
