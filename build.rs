//! Packs the `awtui` binary's relative relocations (`-z
//! pack-relative-relocs`, DT_RELR) when it is built on and for a glibc that
//! loads them (2.36 or later).
//!
//! Why: the binary is position-independent, and its tens of thousands of
//! relative relocations (vtables, string tables, panic locations) fill a
//! `.rela.dyn` of 0.6–1 MB that the loader reads whole in every process it
//! starts. Each `awtui mcp` bridge (one per agent, for the agent's whole
//! life) kept that in its resident memory for nothing; packed, the table
//! is ~12 kB. Only the binary's link changes (`rustc-link-arg-bins`):
//! nothing is compiled differently.
//!
//! A glibc older than 2.36 refuses such a binary (lld marks it as needing
//! the `GLIBC_ABI_DT_RELR` version), so the flag is given only to a native
//! build on a host whose own glibc, the one the binary links against, is
//! 2.36 or later.

use std::env;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let native = env::var("TARGET").ok() == env::var("HOST").ok();
    let gnu_linux = env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    if native && gnu_linux && glibc_loads_relr() {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether this process's glibc (the host's) is 2.36 or later.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn glibc_loads_relr() -> bool {
    unsafe extern "C" {
        fn gnu_get_libc_version() -> *const std::ffi::c_char;
    }
    // SAFETY: glibc returns a static NUL-terminated string such as "2.36".
    let version = unsafe { std::ffi::CStr::from_ptr(gnu_get_libc_version()) };
    let mut parts = version
        .to_str()
        .unwrap_or_default()
        .split('.')
        .map(|part| part.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (2, 36)
}

/// Not glibc: no packed relocations.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn glibc_loads_relr() -> bool {
    false
}
