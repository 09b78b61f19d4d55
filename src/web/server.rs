//! The HTTP side of `awtui web`: the page (four embedded files, served to
//! anyone: they hold no data), a small JSON API under `/api/` ([`ROUTES`],
//! each behind a session), and the live stream at `/api/events` (server-
//! sent events). Every response carries the security headers
//! ([`secure`]); every request goes through the [`Guard`] first.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::auth::{Guard, SignInError, Verdict};
use super::hub::{Hub, HubError};
use super::view;
use crate::vocab::DiffTarget;
use crate::vocab::{Command, Reply};

/// How many channel messages the page gets at first (and per "older").
pub const WINDOW: usize = 200;
/// The largest request body the API reads.
const MAX_BODY: usize = 64 * 1024;

const INDEX_HTML: &str = include_str!("static/index.html");
const APP_JS: &str = include_str!("static/app.js");
const APP_CSS: &str = include_str!("static/app.css");
const SIGNIN_JS: &str = include_str!("static/signin.js");

/// The page's files: served without a session (they hold no data; the
/// page cannot have its session before its script ran).
pub const PAGE: &[&str] = &["/", "/app.js", "/app.css", "/signin.js"];

/// Where the page exchanges the sign-in token for a session value.
pub const SIGNIN: &str = "/api/signin";

/// Every API route as (method, path): the router is built from this list,
/// so each one is behind the guard and the attacker's test
/// (`tests/it/hostile/web.rs`) knocks on each. Everything but [`SIGNIN`]
/// needs a session; [`SIGNIN`] takes only the sign-in token.
pub const ROUTES: &[(&str, &str)] = &[
    ("POST", SIGNIN),
    ("GET", "/api/session"),
    ("GET", "/api/overview"),
    ("GET", "/api/events"),
    ("GET", "/api/instances/{id}"),
    ("GET", "/api/instances/{id}/messages"),
    // One message whole: the page's "show all" (bounded pages).
    ("GET", "/api/instances/{id}/messages/{msg}"),
    ("GET", "/api/instances/{id}/diff"),
    ("GET", "/api/instances/{id}/document"),
    ("POST", "/api/instances/{id}/action"),
];

/// The policy forbidding inline script (and everything from elsewhere).
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
    frame-ancestors 'none'; form-action 'self'";

/// What every handler shares.
#[derive(Clone)]
pub struct Web {
    /// The checks.
    pub guard: Arc<Guard>,
    /// The instances.
    pub hub: Hub,
    /// Ends the live streams when the server stops.
    pub stop: CancellationToken,
}

/// The handler of one of [`ROUTES`] (`None`: not an API route).
fn api_route(method: &str, path: &str) -> Option<MethodRouter<Web>> {
    Some(match (method, path) {
        ("POST", SIGNIN) => post(signin),
        ("GET", "/api/session") => get(session),
        ("GET", "/api/overview") => get(overview),
        ("GET", "/api/events") => get(events),
        ("GET", "/api/instances/{id}") => get(instance),
        ("GET", "/api/instances/{id}/messages") => get(older),
        ("GET", "/api/instances/{id}/messages/{msg}") => get(whole_message),
        ("GET", "/api/instances/{id}/diff") => get(diff),
        ("GET", "/api/instances/{id}/document") => get(document),
        ("POST", "/api/instances/{id}/action") => post(action),
        _ => return None,
    })
}

/// The handler of one of [`PAGE`].
fn page_file(path: &str) -> Option<Response> {
    let (text, kind) = match path {
        "/" => (INDEX_HTML, "text/html; charset=utf-8"),
        "/app.js" => (APP_JS, "text/javascript; charset=utf-8"),
        "/app.css" => (APP_CSS, "text/css; charset=utf-8"),
        "/signin.js" => (SIGNIN_JS, "text/javascript; charset=utf-8"),
        _ => return None,
    };
    Some(asset(text, kind))
}

/// The app: routes, the guard, the headers.
pub fn app(web: Web) -> Router {
    let mut router = Router::new();
    for path in PAGE {
        router = router.route(
            path,
            get(move || async move { page_file(path).unwrap_or_else(not_found) }),
        );
    }
    for (method, path) in ROUTES {
        let handler = api_route(method, path)
            .unwrap_or_else(|| panic!("{method} {path} is in ROUTES without a handler"));
        router = router.route(path, handler);
    }
    router
        .fallback(|| async { not_found() })
        .layer(middleware::from_fn_with_state(web.clone(), guard))
        .with_state(web)
}

fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "no such page")
}

/// Adds the security headers to a response.
fn secure(mut r: Response) -> Response {
    let h = r.headers_mut();
    let cached = h.contains_key(header::CACHE_CONTROL);
    let mut set = |name: &'static str, value: &'static str| {
        h.insert(name, HeaderValue::from_static(value));
    };
    set("content-security-policy", CSP);
    set("x-content-type-options", "nosniff");
    set("x-frame-options", "DENY");
    set("referrer-policy", "no-referrer");
    set("cross-origin-opener-policy", "same-origin");
    set("cross-origin-resource-policy", "same-origin");
    if !cached {
        set("cache-control", "no-store");
    }
    r
}

/// A JSON error body.
fn error(status: StatusCode, text: &str) -> Response {
    (status, json_body(&json!({"error": text}))).into_response()
}

fn json_body(v: &Value) -> ([(header::HeaderName, &'static str); 1], String) {
    ([(header::CONTENT_TYPE, "application/json")], v.to_string())
}

fn ok(v: Value) -> Response {
    json_body(&v).into_response()
}

fn asset(text: &'static str, kind: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind)], text).into_response()
}

/// One query parameter, percent-decoded.
pub fn query_param(uri: &Uri, name: &str) -> Option<String> {
    uri.query()?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (decode(k) == name).then(|| decode(v))
    })
}

/// `%xx` and `+` decoding; bad escapes stay as they are.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = |c: u8| (c as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every request: the Host; then the page's files go out to anyone and
/// the sign-in goes to its handler; everything else needs a session, and a
/// POST the CSRF proofs. An old cookie a browser still sends is cleared.
async fn guard(State(web): State<Web>, req: Request, next: Next) -> Response {
    let clear = super::auth::has_old_cookie(req.headers());
    let mut r = decide(&web, req, next).await;
    if clear && let Ok(v) = HeaderValue::from_str(&super::auth::clear_old_cookie()) {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
    secure(r)
}

/// [`guard`]'s decision, and the answer.
async fn decide(web: &Web, req: Request, next: Next) -> Response {
    let headers = req.headers();
    if !web.guard.host_ok(headers) {
        return error(
            StatusCode::MISDIRECTED_REQUEST,
            "this server answers only to its own address",
        );
    }
    let path = req.uri().path();
    let get = req.method() == Method::GET || req.method() == Method::HEAD;
    if (get && PAGE.contains(&path)) || (!get && path == SIGNIN) {
        return next.run(req).await;
    }
    match web.guard.check(headers, !get) {
        Verdict::Pass => next.run(req).await,
        Verdict::BadHost => error(StatusCode::MISDIRECTED_REQUEST, "wrong host"),
        Verdict::Unauthorized => error(
            StatusCode::UNAUTHORIZED,
            "not signed in: open the address awtui web printed, or the one \
             `awtui web --link` prints",
        ),
        Verdict::Forbidden => error(
            StatusCode::FORBIDDEN,
            "refused: not sent by the page (CSRF header, JSON body and same origin needed)",
        ),
    }
}

/// Spends the sign-in token (`Authorization: Bearer`) for a session value,
/// for a request the page's script sent (JSON, our own origin).
async fn signin(State(web): State<Web>, req: Request) -> Response {
    let headers = req.headers();
    if !web.guard.same_origin_ok(headers) {
        return error(
            StatusCode::FORBIDDEN,
            "refused: not sent by the page (JSON body and same origin needed)",
        );
    }
    match web.guard.sign_in(headers) {
        Ok(session) => ok(json!({"session": session})),
        Err(e @ SignInError::Wrong) => error(StatusCode::UNAUTHORIZED, &e.to_string()),
        Err(e) => {
            tracing::error!("web: {e}");
            error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string())
        }
    }
}

async fn session(State(web): State<Web>) -> Response {
    ok(json!({"csrf": web.guard.csrf(), "user": crate::vocab::mentions::USER, "window": WINDOW}))
}

async fn overview(State(web): State<Web>) -> Response {
    ok(web.hub.overview())
}

fn hub_error(e: HubError) -> Response {
    let status = match &e {
        HubError::NoInstance(_) => StatusCode::NOT_FOUND,
        HubError::Gone(_) => StatusCode::SERVICE_UNAVAILABLE,
        HubError::Failed(_) => StatusCode::UNPROCESSABLE_ENTITY,
    };
    error(status, &e.to_string())
}

fn unexpected(reply: &Reply) -> Response {
    tracing::warn!("web: unexpected answer {reply:?}");
    error(
        StatusCode::BAD_GATEWAY,
        "unexpected answer from the instance",
    )
}

/// The instance for the first draw: its state with the newest [`WINDOW`]
/// messages.
pub async fn instance_state(hub: &Hub, id: &str) -> Result<Value, Response> {
    match hub.call(id, Command::Snapshot { messages: WINDOW }).await {
        Ok(Reply::Snapshot { snapshot }) => Ok(view::state(id, &snapshot)),
        Ok(other) => Err(unexpected(&other)),
        Err(e) => Err(hub_error(e)),
    }
}

async fn instance(State(web): State<Web>, Path(id): Path<String>) -> Response {
    match instance_state(&web.hub, &id).await {
        Ok(v) => ok(v),
        Err(r) => r,
    }
}

/// Up to [`WINDOW`] messages before `?before=ID`, oldest first, within
/// the byte budget of a page (`left_out`: how many older ones did not fit).
async fn older(State(web): State<Web>, Path(id): Path<String>, uri: Uri) -> Response {
    let Some(before) = query_param(&uri, "before").and_then(|b| b.parse::<u64>().ok()) else {
        return error(StatusCode::BAD_REQUEST, "?before=<message id> is needed");
    };
    let query = crate::vocab::PeekQuery {
        limit: WINDOW,
        before: Some(before),
        ..Default::default()
    };
    match peek_direct(&web, &id, query).await {
        Ok((items, left_out)) => {
            let messages: Vec<Value> = items.iter().map(view::peeked).collect();
            ok(json!({"messages": messages, "left_out": left_out}))
        }
        Err(r) => r,
    }
}

/// One message whole, never shortened: what a page's "show all" reads
/// after the page showed it shortened.
async fn whole_message(State(web): State<Web>, Path((id, msg)): Path<(String, u64)>) -> Response {
    let query = crate::vocab::PeekQuery {
        message: Some(msg),
        ..Default::default()
    };
    match peek_direct(&web, &id, query).await {
        Ok((items, _)) => match items.first() {
            Some(item) => ok(json!({"message": view::peeked(item)})),
            None => error(StatusCode::NOT_FOUND, "no such message"),
        },
        Err(r) => r,
    }
}

/// Asks instance `id` for a peek over a connection of its own: the items
/// and how many were left out.
async fn peek_direct(
    web: &Web,
    id: &str,
    query: crate::vocab::PeekQuery,
) -> Result<(Vec<crate::vocab::PeekItem>, usize), Response> {
    use crate::instance::control::Client;
    let Some(info) = web.hub.info(id) else {
        return Err(error(StatusCode::NOT_FOUND, "no such instance"));
    };
    let mut client = Client::open(&info).await.map_err(|_| gone())?;
    match client.call(crate::vocab::Command::Peek { query }).await {
        Ok(Ok(crate::vocab::Reply::Messages { items, left_out })) => Ok((items, left_out)),
        Ok(Ok(_)) | Err(_) => Err(gone()),
        Ok(Err(failed)) => Err(error(StatusCode::NOT_FOUND, &failed.to_string())),
    }
}

fn gone() -> Response {
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        "the instance does not answer",
    )
}

/// An agent's work: its steps and the diff of `?turn=N` (or everything).
async fn diff(State(web): State<Web>, Path(id): Path<String>, uri: Uri) -> Response {
    let Some(agent) = query_param(&uri, "agent") else {
        return error(StatusCode::BAD_REQUEST, "?agent=<name> is needed");
    };
    let turn = query_param(&uri, "turn").and_then(|t| t.parse::<u32>().ok());
    let command = Command::ReadDiff {
        target: DiffTarget::Agent(agent),
        turn,
    };
    match web.hub.call(&id, command).await {
        Ok(Reply::Diff { view }) => ok(json!({
            "branch": view.branch,
            "base": view.base,
            "steps": view.steps,
            "turn": view.turn,
            "patch": view.patch,
            "uncommitted": view.uncommitted,
        })),
        Ok(other) => unexpected(&other),
        Err(e) => hub_error(e),
    }
}

/// A document's text (`?file=`, else the entry document).
async fn document(State(web): State<Web>, Path(id): Path<String>, uri: Uri) -> Response {
    let file = query_param(&uri, "file");
    match web.hub.call(&id, Command::ReadDocument { file }).await {
        Ok(Reply::Document { file, content }) => ok(json!({"file": file, "content": content})),
        Ok(other) => unexpected(&other),
        Err(e) => hub_error(e),
    }
}

async fn action(State(web): State<Web>, Path(id): Path<String>, req: Request) -> Response {
    let bytes = match axum::body::to_bytes(req.into_body(), MAX_BODY).await {
        Ok(b) => b,
        Err(_) => return error(StatusCode::PAYLOAD_TOO_LARGE, "the request is too large"),
    };
    let command = match super::action::read(&bytes) {
        Ok(command) => command,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e.to_string()),
    };
    match web.hub.call(&id, command).await {
        Ok(Reply::Said { text }) => ok(json!({"ok": true, "said": text})),
        Ok(_) => ok(json!({"ok": true})),
        Err(e) => hub_error(e),
    }
}

/// The live stream: every hub payload as one SSE `data:` line; a page that
/// fell behind is told to resync everything.
async fn events(State(web): State<Web>) -> Response {
    let rx = web.hub.subscribe();
    let stop = web.stop.clone();
    let hello = futures_util::stream::once(async {
        Ok::<_, Infallible>(Event::default().data(json!({"type": "hello"}).to_string()))
    });
    let live = futures_util::stream::unfold((rx, stop), |(mut rx, stop)| async move {
        let payload = tokio::select! {
            () = stop.cancelled() => return None,
            r = rx.recv() => r,
        };
        let data: Arc<str> = match payload {
            Ok(p) => p,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                Arc::from(json!({"type": "resync", "instance": null}).to_string())
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
        };
        Some((
            Ok::<_, Infallible>(Event::default().data(&*data)),
            (rx, stop),
        ))
    });
    use futures_util::StreamExt;
    let mut r = Sse::new(hello.chain(live))
        .keep_alive(KeepAlive::default())
        .into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_has_its_handler_and_none_is_a_page_file() {
        for (method, path) in ROUTES {
            assert!(api_route(method, path).is_some(), "{method} {path}");
            assert!(path.starts_with("/api/"), "{path}");
        }
        for path in PAGE {
            assert!(page_file(path).is_some(), "{path}");
        }
    }

    #[test]
    fn query_parameters_are_decoded() {
        let uri: Uri = "/x?a=1&file=notes%2Fa+b.md&bad=%zz".parse().unwrap();
        assert_eq!(query_param(&uri, "file").as_deref(), Some("notes/a b.md"));
        assert_eq!(query_param(&uri, "bad").as_deref(), Some("%zz"));
        assert_eq!(query_param(&uri, "none"), None);
    }
}
