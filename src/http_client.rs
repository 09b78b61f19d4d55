//! The one way awtui makes an HTTP client.
//!
//! TLS is rustls with the `ring` provider rather than reqwest's default
//! (aws-lc-rs), whose C library needs cmake and made a clean `cargo install`
//! take twice as long (docs/figures.md, "Installing"). reqwest built without
//! a provider panics when a client is made before one is installed, so every
//! client, awtui's own and the ones handed to rmcp, comes from here.

use std::sync::Once;

/// Makes `ring` the process's rustls provider, once; a provider installed
/// earlier (by an embedding program) is kept.
pub fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Err means another provider is already the default: keep it.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A client builder with the crypto provider in place, for callers that set
/// timeouts or headers.
pub fn builder() -> reqwest::ClientBuilder {
    install_crypto_provider();
    reqwest::Client::builder()
}

/// A client with reqwest's defaults (system roots, HTTP/2 by ALPN).
pub fn client() -> reqwest::Client {
    install_crypto_provider();
    reqwest::Client::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TLS handshake runs on ring: an HTTPS request to a listener that
    /// answers garbage fails with an error instead of reqwest's
    /// "no crypto provider" panic.
    #[tokio::test]
    async fn an_https_request_runs_the_handshake_without_a_panic() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let (mut s, _) = listener.accept().await.unwrap();
            let mut hello = [0u8; 5];
            s.read_exact(&mut hello).await.unwrap();
            // A ClientHello was sent: a TLS handshake record (type 22).
            assert_eq!(hello[0], 22, "the client spoke TLS");
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\n\r\n").await;
        });
        let err = client()
            .get(format!("https://127.0.0.1:{port}/"))
            .send()
            .await
            .expect_err("garbage is not a TLS server");
        assert!(err.is_connect() || err.is_request(), "{err}");
    }

    /// The point of this module: nothing in the build needs cmake and
    /// aws-lc's C sources (a package in the lock file is one cargo builds).
    #[test]
    fn no_c_crypto_library_is_in_the_build() {
        let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock"))
            .expect("Cargo.lock");
        for crate_name in ["aws-lc-sys", "aws-lc-rs", "openssl-sys"] {
            let entry = format!("name = \"{crate_name}\"");
            assert!(
                !lock.contains(&entry),
                "{crate_name} is back in Cargo.lock: `cargo tree -i {crate_name}` shows who pulls it"
            );
        }
    }
}
