//! Serving the MCP service: rmcp's streamable HTTP service behind a bearer
//! token check, on loopback TCP and on a 0600 unix socket.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::identity::{Caller, Tokens};
use super::server::ContextServer;

/// The HTTP path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// How often an idle event stream gets a keep-alive comment: rarely, so
/// idle agents wake nobody (rmcp's default is every 15 s), yet under the
/// 300 s that Node's fetch (undici) waits for body data before it drops a
/// stream (Claude Code, Gemini CLI and opencode run on Node).
pub const SSE_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(240);

/// The HTTP application: `/mcp` served by rmcp, every request
/// authenticated first.
///
/// No SSE priming event: rmcp by default starts every event stream with an
/// empty `data:` event (an id and a retry interval, for resuming), which
/// clients such as gemini-cli cannot parse ("Client is not connected"), so
/// they run without awtui's tools. Loopback streams are not resumed anyway.
pub fn router(server: ContextServer, tokens: Arc<Tokens>, stop: CancellationToken) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_sse_retry(None)
        .with_sse_keep_alive(Some(SSE_KEEP_ALIVE))
        .with_cancellation_token(stop.clone());
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.sse_retry = None;
    let service =
        StreamableHttpService::new(move || Ok(server.clone()), Arc::new(sessions), config);
    Router::new()
        .route_service(MCP_PATH, service)
        .layer(middleware::from_fn(whole_reply))
        .layer(middleware::from_fn_with_state(stop, limit_body))
        .layer(middleware::from_fn_with_state(tokens, authenticate))
}

/// How much of a refused body the server still reads, and throws away,
/// after answering 413. Most clients write their whole request before
/// they read; closing on unread bytes would reset the connection, fail
/// their write (EPIPE) and lose the answer. Past this (or
/// [`DRAIN_TIME`]) the connection is closed anyway.
const DRAIN_LIMIT: u64 = 16 * super::MAX_BODY as u64;
/// How long the server keeps reading a refused body.
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// Refuses request bodies over [`super::MAX_BODY`] with 413 and a body
/// naming the limit ([`super::TooLarge`]), so no client can make the
/// server buffer more than that: a length known up front (announced, or
/// none) is checked before anything is read; a body of unannounced length
/// (chunked) is read whole up to the limit and refused when it goes past.
async fn limit_body(State(stop): State<CancellationToken>, req: Request, next: Next) -> Response {
    // hyper's own length, which its decoder holds the body to.
    let known = axum::body::HttpBody::size_hint(req.body()).exact();
    if let Some(n) = known.filter(|n| *n > super::MAX_BODY as u64) {
        return too_large(req, Some(n), stop);
    }
    if known.is_some() {
        return next.run(req).await;
    }
    let (parts, mut body) = req.into_parts();
    match read_capped(&mut body).await {
        Ok(Some(whole)) => {
            next.run(Request::from_parts(parts, axum::body::Body::from(whole)))
                .await
        }
        Ok(None) => too_large(Request::from_parts(parts, body), None, stop),
        Err(e) => json_error(
            StatusCode::BAD_REQUEST,
            &format!("cannot read the request body: {e}"),
        ),
    }
}

/// Reads a body whole, up to [`super::MAX_BODY`]; `None` as soon as it
/// goes past that (the rest stays in `body`).
async fn read_capped(body: &mut axum::body::Body) -> Result<Option<Vec<u8>>, axum::Error> {
    use http_body_util::BodyExt;
    let mut whole = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            if whole.len() + data.len() > super::MAX_BODY {
                return Ok(None);
            }
            whole.extend_from_slice(&data);
        }
    }
    Ok(Some(whole))
}

/// Answers 413 naming the limit. The rest of the body is read and thrown
/// away in the background (within [`DRAIN_LIMIT`] and [`DRAIN_TIME`], and
/// not past `stop`), so a client still writing it finishes and reads the
/// answer; hyper sends the answer meanwhile. A client waiting for
/// `100 Continue` gets the answer instead and sends no body, so there is
/// nothing to drain.
fn too_large(req: Request, bytes: Option<u64>, stop: CancellationToken) -> Response {
    let waits_to_send = req
        .headers()
        .get(header::EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    if !waits_to_send && bytes.is_none_or(|n| n <= DRAIN_LIMIT) {
        let mut body = req.into_body();
        tokio::spawn(async move {
            use http_body_util::BodyExt;
            let drain = async {
                let mut read = 0;
                while let Some(Ok(frame)) = body.frame().await {
                    read += frame.data_ref().map_or(0, |d| d.len() as u64);
                    if read > DRAIN_LIMIT {
                        break;
                    }
                }
            };
            let _ = tokio::time::timeout(DRAIN_TIME, stop.run_until_cancelled(drain)).await;
        });
    }
    json_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        &super::TooLarge { bytes }.to_string(),
    )
}

/// An HTTP error with a JSON body `{"error": …}`.
fn json_error(status: StatusCode, reason: &str) -> Response {
    let body = serde_json::json!({ "error": reason }).to_string();
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

/// How long a POST's event stream is held back to go out whole.
pub const HOLD_FOR_REPLY: std::time::Duration = std::time::Duration::from_secs(1);

/// Sends the event stream answering a POST in one piece when it ends
/// within [`HOLD_FOR_REPLY`] (a tool call's stream ends right after its
/// reply), with a `Content-Length`: rmcp sends the head as soon as the
/// request is taken and the reply and the stream's end as they come, so
/// the client wakes for the head, sleeps while a send waits for the disk,
/// and wakes again for the reply and once more for the end. One write,
/// one wake-up. A stream still open after the hold (the reply to
/// `permission_request` waits for a decision) goes out with what it has so far
/// and the rest as it comes, well within any client's header timeout.
async fn whole_reply(req: Request, next: Next) -> Response {
    let post = req.method() == axum::http::Method::POST;
    let response = next.run(req).await;
    let event_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !post || !event_stream {
        return response;
    }
    use http_body_util::BodyExt;
    let (parts, mut body) = response.into_parts();
    let deadline = tokio::time::Instant::now() + HOLD_FOR_REPLY;
    let mut whole = Vec::new();
    // A frame taken that is not data (trailers) or the body's error.
    let mut other = None;
    let ended = loop {
        // Waiting for a frame takes nothing from the body until one is
        // ready, so giving up the wait loses nothing.
        match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(None) => break true,
            Ok(Some(Ok(frame))) => match frame.into_data() {
                Ok(data) => whole.extend_from_slice(&data),
                Err(frame) => {
                    other = Some(Ok(frame));
                    break false;
                }
            },
            Ok(Some(Err(e))) => {
                other = Some(Err(e));
                break false;
            }
            Err(_) => break false,
        }
    };
    if ended {
        return Response::from_parts(parts, axum::body::Body::from(whole));
    }
    use futures_util::StreamExt;
    let taken = (!whole.is_empty()).then(|| Ok(hyper::body::Frame::data(whole.into())));
    let frames = futures_util::stream::iter(taken.into_iter().chain(other))
        .chain(http_body_util::BodyStream::new(body));
    Response::from_parts(
        parts,
        axum::body::Body::new(http_body_util::StreamBody::new(frames)),
    )
}

fn refuse(reason: &str) -> Response {
    let mut response = json_error(StatusCode::UNAUTHORIZED, reason);
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"awtui\""),
    );
    response
}

/// Maps `Authorization: Bearer <token>` to the participant it belongs to;
/// anything else is refused with 401 before reaching MCP.
async fn authenticate(State(tokens): State<Arc<Tokens>>, mut req: Request, next: Next) -> Response {
    let value = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let Some(value) = value else {
        return refuse(
            "missing token: send 'Authorization: Bearer <token>' with the token awtui gave this agent",
        );
    };
    let token = value
        .split_once(' ')
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim());
    let Some(agent) = token.and_then(|t| tokens.identify(t)) else {
        return refuse("unknown token: it belongs to no participant of this instance");
    };
    req.extensions_mut().insert(Caller(agent.to_string()));
    next.run(req).await
}

/// Serves `app` on a free loopback port; returns its address and the
/// server task.
pub async fn serve_tcp(
    app: Router,
    stop: CancellationToken,
) -> io::Result<(std::net::SocketAddr, JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let addr = listener.local_addr()?;
    let listener = listener.tap_io(|tcp| {
        // Small JSON-RPC messages must not wait for Nagle.
        let _ = tcp.set_nodelay(true);
    });
    let task = tokio::spawn(async move {
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(stop.cancelled_owned())
            .await;
        if let Err(e) = served {
            tracing::error!("MCP HTTP server stopped: {e}");
        }
    });
    Ok((addr, task))
}

/// Serves `app` on a unix socket at `path`, readable and writable by the
/// owner only. A stale socket left by a crashed instance is replaced; a live
/// one is an error.
pub async fn serve_unix(
    app: Router,
    path: &Path,
    stop: CancellationToken,
) -> io::Result<(PathBuf, JoinHandle<()>)> {
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!(
                    "{} is in use: is this instance already running?",
                    path.display()
                ),
            ));
        }
        std::fs::remove_file(path)?;
    }
    let listener = tokio::net::UnixListener::bind(path)?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    let task = tokio::spawn(async move {
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(stop.cancelled_owned())
            .await;
        if let Err(e) = served {
            tracing::error!("MCP unix socket server stopped: {e}");
        }
    });
    Ok((path.to_path_buf(), task))
}
