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
        .with_cancellation_token(stop);
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.sse_retry = None;
    let service =
        StreamableHttpService::new(move || Ok(server.clone()), Arc::new(sessions), config);
    Router::new()
        .route_service(MCP_PATH, service)
        .layer(middleware::from_fn(whole_reply))
        .layer(middleware::from_fn(limit_body))
        .layer(middleware::from_fn_with_state(tokens, authenticate))
}

/// Refuses request bodies over [`super::MAX_BODY`] (413 when the length is
/// announced; a longer chunked body is cut off with an error), so no
/// client can make the server buffer more than that.
async fn limit_body(req: Request, next: Next) -> Response {
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > super::MAX_BODY as u64) {
        let body = serde_json::json!({
            "error": format!("request body too large: the limit is {} bytes (4 MiB)", super::MAX_BODY)
        })
        .to_string();
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body,
        )
            .into_response();
    }
    let (parts, body) = req.into_parts();
    let limited = axum::body::Body::new(http_body_util::Limited::new(body, super::MAX_BODY));
    next.run(Request::from_parts(parts, limited)).await
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
    let body = serde_json::json!({ "error": reason }).to_string();
    (
        StatusCode::UNAUTHORIZED,
        [
            (
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"awtui\""),
            ),
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
        ],
        body,
    )
        .into_response()
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

/// Serves `app` on a free loopback port; returns the URL and the server task.
pub async fn serve_tcp(
    app: Router,
    stop: CancellationToken,
) -> io::Result<(String, JoinHandle<()>)> {
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
    Ok((format!("http://{addr}{MCP_PATH}"), task))
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
