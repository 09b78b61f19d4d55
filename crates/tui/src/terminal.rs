//! The real terminal: entering and leaving the alternate screen, raw mode,
//! mouse capture and bracketed paste, restoring it on every exit path
//! (normal return, error via [`Guard`], panic via the hooks), suspending
//! for `$PAGER`, and the clipboard. OSC 52 is the only escape sequence the
//! control room writes itself, built here from base64 text, never from
//! agent text directly.

use std::io::{self, Write};
use std::sync::Once;

use ratatui::DefaultTerminal;
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};

static HOOK: Once = Once::new();

/// Opens the screen: a panic hook that logs the panic and turns mouse
/// capture off, then `ratatui::try_init` (which adds the hook restoring
/// raw mode and the main screen, after ours as ratatui recommends), then
/// mouse capture and bracketed paste.
pub fn init() -> io::Result<DefaultTerminal> {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            tracing::error!("panic: {info}");
            let _ = execute!(io::stdout(), DisableMouseCapture, DisableBracketedPaste);
            previous(info);
        }));
    });
    let terminal = ratatui::try_init()?;
    execute!(io::stdout(), EnableMouseCapture, EnableBracketedPaste)?;
    Ok(terminal)
}

/// Gives the terminal back as it was. Safe to call more than once and when
/// the terminal is gone (errors are ignored: there is no one to tell).
pub fn restore() {
    let _ = execute!(
        io::stdout(),
        DisableMouseCapture,
        DisableBracketedPaste,
        ratatui::crossterm::cursor::Show
    );
    // Not `ratatui::restore`: it prints failures with `eprintln!`, which
    // panics when the terminal has hung up.
    let _ = ratatui::try_restore();
}

/// Leaves the screen for a program that needs the terminal (the pager).
pub fn suspend() {
    let _ = execute!(
        io::stdout(),
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen
    );
    let _ = disable_raw_mode();
}

/// Comes back after [`suspend`]; the caller must clear and redraw.
pub fn resume() -> io::Result<()> {
    enable_raw_mode()?;
    execute!(
        io::stdout(),
        EnterAlternateScreen,
        Clear(ClearType::All),
        EnableMouseCapture,
        EnableBracketedPaste
    )
}

/// Restores the terminal when dropped (error paths).
pub struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// Standard base64 (RFC 4648) with padding.
pub fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            T[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            T[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

/// The OSC 52 sequence that puts `text` on the clipboard.
pub fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", base64(text.as_bytes()))
}

/// Writes the clipboard sequence to the terminal.
pub fn copy(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(osc52(text).as_bytes())?;
    out.flush()
}

/// Shows `text` in `$PAGER` (default `less`), with the screen suspended.
/// The text was sanitised by the caller.
pub fn page(text: &str) -> Result<(), String> {
    let pager = std::env::var("PAGER")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| "less".into());
    let words = shlex::split(&pager)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| format!("cannot read $PAGER '{pager}'"))?;
    let mut child = std::process::Command::new(&words[0])
        .args(&words[1..])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start pager '{pager}': {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A pager that quits early closes its input: not an error.
        let _ = stdin.write_all(text.as_bytes());
    }
    child.wait().map_err(|e| format!("pager '{pager}': {e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_and_osc52() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        let seq = osc52("\x1b]0;evil\x07");
        assert!(seq.starts_with("\x1b]52;c;"));
        assert_eq!(
            seq.matches('\x1b').count(),
            1,
            "agent text cannot add escapes"
        );
    }
}
