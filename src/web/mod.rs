//! `awtui web`: the control room in a browser, for every running instance
//! of the user (the registry the home screen reads). The server is one
//! more client of each instance's control endpoint, like `attach`: it
//! renders what the engines say and sends them the same commands the
//! control room and the CLI send.
//!
//! - [`auth`]: the sign-in token, the sessions, the Host and CSRF checks.
//! - [`hub`]: the instances, their live events, the attention list.
//! - [`view`]: the engine's data as the page draws it.
//! - [`server`]: the routes, the security headers, the live stream.
//! - [`notify`]: new attention items to a webhook.
//!
//! The page itself (`static/`: one HTML file, one script, one style sheet)
//! is the project's own and embedded in the binary; no build step.

pub mod action;
pub mod auth;
pub mod hub;
pub mod notify;
pub mod server;
pub mod view;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The port `awtui web` listens on unless `--port` says otherwise.
pub const DEFAULT_PORT: u16 = 7780;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// A non-loopback `--listen` without `--allow-remote`.
    #[error(
        "--listen {0} is not a loopback address: anyone who can reach it could try the token; \
         add --allow-remote to serve there anyway (or keep the default and reach it through \
         `ssh -L` or a tailnet, see the README)"
    )]
    RemoteNotAllowed(IpAddr),
    /// The secret.
    #[error(transparent)]
    Secret(#[from] auth::SecretError),
    /// The address is taken or not ours.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// How to serve.
#[derive(Clone, Debug)]
pub struct Options {
    /// The address to listen on (loopback by default).
    pub listen: IpAddr,
    /// The port (0: any free one).
    pub port: u16,
    /// A non-loopback `listen` is allowed.
    pub allow_remote: bool,
    /// Make a new secret first (the old one stops working).
    pub new_token: bool,
    /// Where new attention items are sent.
    pub webhook: Option<notify::Webhook>,
}

/// A server that runs.
pub struct Served {
    /// The address to open, with the sign-in token in its fragment.
    pub url: String,
    /// The page's address without the token (for links).
    pub page: String,
    /// Where it listens.
    pub addr: SocketAddr,
    /// The server task; it ends after `stop`.
    pub task: JoinHandle<()>,
}

/// The page's address on `listen`:`port`, as a browser reaches it.
pub fn page_address(listen: IpAddr, port: u16) -> String {
    let host = if listen.is_unspecified() || listen.is_loopback() {
        "127.0.0.1".to_string()
    } else {
        match listen {
            IpAddr::V4(a) => a.to_string(),
            IpAddr::V6(a) => format!("[{a}]"),
        }
    };
    format!("http://{host}:{port}/")
}

/// The sign-in address: the page with the token in the fragment, which a
/// browser never sends to a server (nor in a `Referer`); the page's
/// script takes it out of the address at once.
pub fn signin_address(page: &str, token: &str) -> String {
    format!("{page}#token={token}")
}

/// The sign-in address of the server on `listen`:`port` with the current
/// (unspent) token from the file (one is made when there is none, or a
/// new one with `new_token`): `awtui web --link`, for another browser.
pub fn link(listen: IpAddr, port: u16, new_token: bool) -> Result<String, WebError> {
    let token = auth::load_or_create(new_token)?;
    Ok(signin_address(&page_address(listen, port), &token))
}

/// Checks the options, reads (or makes) the secret, binds and serves until
/// `stop`.
pub async fn start(opts: Options, stop: CancellationToken) -> Result<Served, WebError> {
    if !opts.listen.is_loopback() && !opts.allow_remote {
        return Err(WebError::RemoteNotAllowed(opts.listen));
    }
    let token = auth::load_or_create(opts.new_token)?;
    let asked = SocketAddr::new(opts.listen, opts.port);
    let listener = tokio::net::TcpListener::bind(asked)
        .await
        .map_err(|source| WebError::Bind {
            addr: asked,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| WebError::Bind {
        addr: asked,
        source,
    })?;
    let page = page_address(opts.listen, addr.port());
    let url = signin_address(&page, &token);
    let guard = auth::Guard::new(
        token,
        auth::token_path().ok(),
        auth::hosts_for(opts.listen, addr.port()),
    )?;
    let fresh = opts
        .webhook
        .map(|hook| notify::spawn(hook, page.clone(), stop.clone()));
    let hub = hub::Hub::start(stop.clone(), fresh);
    let app = server::app(server::Web {
        guard: Arc::new(guard),
        hub,
        stop: stop.clone(),
    });
    let task = tokio::spawn(async move {
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(stop.cancelled_owned())
            .await;
        if let Err(e) = served {
            tracing::error!("web server stopped: {e}");
        }
    });
    Ok(Served {
        url,
        page,
        addr,
        task,
    })
}
