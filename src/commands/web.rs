//! `awtui web [--port P] [--listen ADDR --allow-remote] [--new-token]
//! [--link]`: serves every running instance to a browser until Ctrl-C or
//! SIGTERM (see [`crate::web`]). Prints one line on stdout, the address to
//! open with its one-time sign-in token; what a non-loopback address
//! exposes goes to stderr; everything else goes to the log
//! (`<data dir>/web/awtui-web.log`). With `--link` it only prints the
//! sign-in address for the server already running there (each address
//! signs one browser in).

use std::net::IpAddr;

use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

use super::exit;
use crate::{errln, outln};

/// `awtui web [--port P] [--listen ADDR --allow-remote] [--new-token]`.
#[derive(Clone, Debug, clap::Args)]
pub struct WebArgs {
    /// The port (0: any free one).
    #[arg(long, default_value_t = crate::web::DEFAULT_PORT)]
    pub port: u16,
    /// Listen on this address instead of 127.0.0.1 (needs
    /// --allow-remote unless it is a loopback address).
    #[arg(long, default_value = "127.0.0.1")]
    pub listen: IpAddr,
    /// Allow a --listen address other than loopback.
    #[arg(long)]
    pub allow_remote: bool,
    /// Make a new sign-in token first; the old one and every session of a
    /// running server stop working.
    #[arg(long)]
    pub new_token: bool,
    /// Only print a sign-in address for the server running on --port
    /// (each address signs one browser in), then exit.
    #[arg(long)]
    pub link: bool,
}

/// Runs the server; returns the exit code.
pub fn run(args: WebArgs) -> u8 {
    if !args.listen.is_loopback() && !args.allow_remote {
        errln!(
            "awtui web: {}",
            crate::web::WebError::RemoteNotAllowed(args.listen)
        );
        return exit::INVALID;
    }
    if args.link {
        return match crate::web::link(args.listen, args.port, args.new_token) {
            Ok(address) => {
                outln!("{address}");
                exit::OK
            }
            Err(e) => {
                errln!("awtui web: {e}");
                exit::FAILED
            }
        };
    }
    let config = match crate::tui::Config::load() {
        Ok(c) => c,
        Err(e) => {
            errln!("awtui: bad config: {e}");
            return exit::INVALID;
        }
    };
    if let Ok(dir) = crate::instance::layout::data_dir()
        && let Ok(dir) = crate::instance::layout::private_dir(&dir.join("web"))
    {
        let _ = super::logging::to_file(&dir.join("awtui-web.log"));
    }
    let Some(rt) = super::runtime(true) else {
        return exit::FAILED;
    };
    rt.block_on(serve(args, config.webhook))
}

async fn serve(args: WebArgs, webhook: Option<crate::web::notify::Webhook>) -> u8 {
    let (mut interrupt, mut terminate) = match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(i), Ok(t)) => (i, t),
        (Err(e), _) | (_, Err(e)) => {
            errln!("cannot listen for Ctrl-C: {e}");
            return exit::FAILED;
        }
    };
    let stop = CancellationToken::new();
    let opts = crate::web::Options {
        listen: args.listen,
        port: args.port,
        allow_remote: args.allow_remote,
        new_token: args.new_token,
        webhook,
    };
    let served = match crate::web::start(opts, stop.clone()).await {
        Ok(s) => s,
        Err(e) => {
            errln!("awtui web: {e}");
            return match e {
                crate::web::WebError::RemoteNotAllowed(_) => exit::INVALID,
                _ => exit::FAILED,
            };
        }
    };
    if !args.listen.is_loopback() {
        errln!(
            "awtui web listens on {} (not loopback): anyone who reaches it and holds the token \
             can read every instance's channel, documents and diffs, post as you, approve or \
             deny tool calls and stop agents; the traffic is plain HTTP. Prefer `ssh -L` or a \
             tailnet (README, \"Web\").",
            served.addr
        );
    }
    tracing::info!("awtui web serves on {}", served.addr);
    outln!("{}", served.url);
    crate::output::flush();
    tokio::select! {
        _ = interrupt.recv() => {}
        _ = terminate.recv() => {}
    }
    stop.cancel();
    let _ = tokio::time::timeout(super::SHUTDOWN_GRACE, served.task).await;
    exit::OK
}
