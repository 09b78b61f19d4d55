//! The stdio bridge's way to the instance: JSON-RPC messages relayed as
//! bytes over HTTP/1.1 (unix socket or loopback TCP), never parsed into a
//! tree, so the bridge's memory does not grow with a result's size.
//!
//! Each message read from stdin is POSTed to the MCP endpoint as it is;
//! the answer (a JSON body, or an SSE stream of messages) is copied to
//! stdout chunk by chunk as it arrives ([`SseLines`] turns SSE events into
//! one line each). Connections are kept and reused. Liveness needs no
//! polling: [`Upstream::watch`] holds one idle connection, which the kernel
//! closes when the instance goes away.

use std::io;
use std::path::PathBuf;
use std::sync::Mutex;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};

use super::transport::MCP_PATH;

/// The session header of MCP's streamable HTTP transport.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The negotiated protocol version, sent with every request after the
/// handshake.
pub const VERSION_HEADER: &str = "mcp-protocol-version";

/// A byte stream to the instance (unix socket or TCP).
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Io for T {}

/// Where the instance listens.
#[derive(Clone, Debug)]
pub enum Addr {
    /// The instance's unix socket.
    Unix(PathBuf),
    /// `host:port` on loopback.
    Tcp(String),
}

impl std::fmt::Display for Addr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Addr::Unix(p) => write!(f, "{}", p.display()),
            Addr::Tcp(a) => write!(f, "{a}"),
        }
    }
}

/// The instance's MCP endpoint as the bridge talks to it: the address,
/// the agent's token, and the session once the handshake made one.
#[derive(Debug)]
pub struct Upstream {
    addr: Addr,
    host: HeaderValue,
    auth: HeaderValue,
    session: Mutex<Option<HeaderValue>>,
    version: Mutex<Option<HeaderValue>>,
    /// Connections whose last exchange is over, for the next request.
    idle: Mutex<Vec<SendRequest<Full<Bytes>>>>,
}

/// What a request got back.
pub struct Answer {
    /// The response, its body not yet read.
    pub response: Response<Incoming>,
    sender: SendRequest<Full<Bytes>>,
}

impl Upstream {
    /// The endpoint at `addr`, authenticated with `token`.
    pub fn new(addr: Addr, token: &str) -> io::Result<Upstream> {
        let host = match &addr {
            Addr::Unix(_) => "localhost".to_string(),
            Addr::Tcp(a) => a.clone(),
        };
        let header = |v: String| {
            HeaderValue::from_str(&v).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
        };
        Ok(Upstream {
            host: header(host)?,
            auth: header(format!("Bearer {token}"))?,
            addr,
            session: Mutex::new(None),
            version: Mutex::new(None),
            idle: Mutex::new(Vec::new()),
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> &Addr {
        &self.addr
    }

    /// A new connection to the instance.
    pub async fn connect(&self) -> io::Result<Box<dyn Io>> {
        Ok(match &self.addr {
            Addr::Unix(p) => Box::new(tokio::net::UnixStream::connect(p).await?),
            Addr::Tcp(a) => {
                let s = tokio::net::TcpStream::connect(a.as_str()).await?;
                s.set_nodelay(true)?;
                Box::new(s)
            }
        })
    }

    /// Waits until the instance goes away: holds an idle connection (the
    /// server never closes one) and returns when it is closed. No timer,
    /// no request: an idle bridge wakes nobody.
    pub async fn watch(&self) -> io::Result<()> {
        let mut conn = self.connect().await?;
        let mut buf = [0u8; 64];
        // Any byte (none is expected) or the end both mean: look again.
        let _ = conn.read(&mut buf).await;
        Ok(())
    }

    /// Remembers the session id and protocol version the handshake agreed.
    pub fn set_session(&self, session: Option<HeaderValue>, version: Option<&str>) {
        if let Some(s) = session {
            *self.session.lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
        }
        if let Some(v) = version.and_then(|v| HeaderValue::from_str(v).ok()) {
            *self.version.lock().unwrap_or_else(|e| e.into_inner()) = Some(v);
        }
    }

    async fn sender(&self) -> io::Result<SendRequest<Full<Bytes>>> {
        loop {
            let pooled = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let Some(mut sender) = pooled else { break };
            if sender.ready().await.is_ok() {
                return Ok(sender);
            }
        }
        let io = self.connect().await?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
            .await
            .map_err(io::Error::other)?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(sender)
    }

    /// Sends one request to the MCP path: `POST` with a JSON-RPC message,
    /// `GET` for the server's own stream, `DELETE` to end the session.
    pub async fn send(&self, method: Method, body: Bytes) -> io::Result<Answer> {
        let mut sender = self.sender().await?;
        let mut request = Request::builder()
            .method(method.clone())
            .uri(MCP_PATH)
            .header(HOST, self.host.clone())
            .header(AUTHORIZATION, self.auth.clone());
        request = match method {
            Method::GET => request.header(ACCEPT, "text/event-stream"),
            _ => request
                .header(ACCEPT, "application/json, text/event-stream")
                .header(CONTENT_TYPE, "application/json"),
        };
        if let Some(s) = self
            .session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            request = request.header(SESSION_HEADER, s);
        }
        if let Some(v) = self
            .version
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            request = request.header(VERSION_HEADER, v);
        }
        let request = request
            .body(Full::new(body))
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(io::Error::other)?;
        Ok(Answer { response, sender })
    }

    /// Puts a connection whose response was read to the end back for reuse.
    pub fn release(&self, answer: Answer) {
        drop(answer.response);
        self.idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(answer.sender);
    }
}

impl Answer {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.response.status()
    }

    /// Whether the body is a stream of server-sent events.
    pub fn is_sse(&self) -> bool {
        self.response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"))
    }

    /// The next piece of the body; `None` at its end.
    pub async fn chunk(&mut self) -> Option<io::Result<Bytes>> {
        loop {
            match self.response.body_mut().frame().await? {
                Ok(frame) => match frame.into_data() {
                    Ok(data) if data.is_empty() => continue,
                    Ok(data) => return Some(Ok(data)),
                    // Trailers: nothing to relay.
                    Err(_) => continue,
                },
                Err(e) => return Some(Err(io::Error::other(e))),
            }
        }
    }

    /// The whole body, for small answers (the handshake, errors), cut at
    /// `limit` bytes.
    pub async fn text(&mut self, limit: usize) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        while let Some(chunk) = self.chunk().await {
            let chunk = chunk?;
            let room = limit.saturating_sub(out.len());
            out.extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        Ok(out)
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum SseState {
    /// At the start of a line.
    #[default]
    LineStart,
    /// Reading a field name.
    Field,
    /// In a `data:` value; `fresh` until its first byte (one leading
    /// space is dropped).
    Data { fresh: bool },
    /// In a line that is not data (a comment, `event:`, `id:`, `retry:`).
    Skip,
}

/// Turns a stream of server-sent events into JSON-RPC messages, one per
/// line, without holding an event: each `data:` byte is passed on as it
/// comes. Several `data:` lines of one event are joined with a space (the
/// same JSON as joining with a newline, and still one line); events
/// without data produce nothing.
#[derive(Debug, Default)]
pub struct SseLines {
    state: SseState,
    /// The field name read so far (only its first bytes matter).
    field: Vec<u8>,
    /// The last byte was `\r` (a following `\n` belongs to it).
    cr: bool,
    /// Data of the current event was passed on.
    open: bool,
}

impl SseLines {
    /// Feeds one piece of the stream; appends message bytes to `out` (a
    /// `\n` after each complete message) and returns how many messages it
    /// completed.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<u8>) -> usize {
        let mut done = 0;
        for &b in chunk {
            if b == b'\n' && self.cr {
                self.cr = false;
                continue;
            }
            self.cr = b == b'\r';
            if b == b'\n' || b == b'\r' {
                if self.state == SseState::LineStart && self.open {
                    out.push(b'\n');
                    self.open = false;
                    done += 1;
                }
                self.state = SseState::LineStart;
                continue;
            }
            self.state = match self.state {
                SseState::LineStart if b == b':' => SseState::Skip,
                SseState::LineStart => {
                    self.field.clear();
                    self.field.push(b);
                    SseState::Field
                }
                SseState::Field if b == b':' => {
                    if self.field == b"data" {
                        if self.open {
                            out.push(b' ');
                        }
                        SseState::Data { fresh: true }
                    } else {
                        SseState::Skip
                    }
                }
                SseState::Field => {
                    if self.field.len() < 8 {
                        self.field.push(b);
                        SseState::Field
                    } else {
                        SseState::Skip
                    }
                }
                SseState::Data { fresh: true } if b == b' ' => SseState::Data { fresh: false },
                SseState::Data { .. } => {
                    out.push(b);
                    self.open = true;
                    SseState::Data { fresh: false }
                }
                SseState::Skip => SseState::Skip,
            };
        }
        done
    }

    /// Whether a message was started and not finished.
    pub fn in_message(&self) -> bool {
        self.open
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(stream: &[u8], piece: usize) -> (String, usize) {
        let mut sse = SseLines::default();
        let mut out = Vec::new();
        let mut n = 0;
        for chunk in stream.chunks(piece) {
            n += sse.feed(chunk, &mut out);
        }
        (String::from_utf8(out).unwrap(), n)
    }

    #[test]
    fn events_become_one_line_each_however_the_stream_is_cut() {
        let stream = b": keep-alive\n\nid: 1\nevent: message\ndata: {\"a\":1}\n\n\
                       data:{\"b\":\r\ndata: 2}\r\n\r\nretry: 5\n\ndata: {\"c\":\"x y\"}\n\n";
        for piece in [1, 2, 3, 7, 1000] {
            let (text, n) = lines(stream, piece);
            assert_eq!(
                text, "{\"a\":1}\n{\"b\": 2}\n{\"c\":\"x y\"}\n",
                "piece {piece}"
            );
            assert_eq!(n, 3);
        }
    }

    #[test]
    fn an_unfinished_event_is_reported_open() {
        let mut sse = SseLines::default();
        let mut out = Vec::new();
        assert_eq!(sse.feed(b"data: {\"big\":", &mut out), 0);
        assert!(sse.in_message());
        assert_eq!(sse.feed(b"1}\n\n", &mut out), 1);
        assert!(!sse.in_message());
        assert_eq!(out, b"{\"big\":1}\n");
    }
}
