//! Every line awtui prints on its standard output and error goes through one
//! writer, because every pipe awtui writes to may close or stop being read
//! at any moment (`awtui start wf.yaml 2>&1 | head -c 100`, a stderr pipe
//! nobody reads) and neither may crash or stall the engine:
//!
//! - callers only queue a line ([`out`], [`err`], [`json`]); a dedicated
//!   thread writes it, so a full pipe blocks that thread and nobody else;
//! - the queue is bounded ([`MAX_LINES`], [`MAX_BYTES`]): when it is full,
//!   lines are dropped and counted, and `[n lines dropped]` is written in
//!   their place once the reader catches up;
//! - a write that fails (a closed pipe: `EPIPE`, since Rust ignores
//!   `SIGPIPE`) stops output on that stream for good, silently; nothing
//!   panics;
//! - text lines are sanitized ([`crate::sanitize::for_terminal`]): no escape
//!   sequence or control character reaches a terminal; JSON is written as
//!   it is (serde escapes control characters);
//! - [`flush`] waits for the queue to drain but gives up when the reader
//!   has taken nothing for [`EXIT_STALL`], so a process hosting an instance
//!   can always exit; [`drain`] waits as long as the reader lives.

use std::convert::Infallible;
use std::io::{self, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use crate::batch_writer::{BatchWriter, Options};
use crate::sanitize::for_terminal;

/// How many lines may wait for a slow reader before new ones are dropped.
pub const MAX_LINES: usize = 4096;
/// How many bytes may wait for a slow reader before new lines are dropped
/// (one line is always accepted into an empty queue, however long).
pub const MAX_BYTES: usize = 16 << 20;
/// How long [`flush`] waits for a reader that takes nothing at all.
pub const EXIT_STALL: Duration = Duration::from_secs(2);
/// Writes are made in pieces of this size, so a slow reader of one long
/// line (the `run --json` report) counts as progress.
const CHUNK: usize = 64 << 10;

/// A standard stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Out,
    /// Standard error.
    Err,
}

impl Stream {
    fn index(self) -> usize {
        match self {
            Stream::Out => 0,
            Stream::Err => 1,
        }
    }
}

/// How a line is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// A line of text for a person: sanitized, a newline added.
    Text,
    /// Data for a program (serde JSON, `ctx` output to a script): written
    /// exactly as given.
    Verbatim,
}

/// Where the writer thread writes: the real standard streams, or a test's
/// double.
pub trait Sink: Send + 'static {
    /// Writes all of `bytes` to `stream`; an error stops that stream.
    fn write(&mut self, stream: Stream, bytes: &[u8]) -> io::Result<()>;
}

/// The process's standard output and error.
#[derive(Debug, Default)]
pub struct StdSink;

impl Sink for StdSink {
    fn write(&mut self, stream: Stream, bytes: &[u8]) -> io::Result<()> {
        match stream {
            Stream::Out => {
                let mut out = io::stdout().lock();
                out.write_all(bytes)?;
                out.flush()
            }
            Stream::Err => {
                let mut err = io::stderr().lock();
                err.write_all(bytes)?;
                err.flush()
            }
        }
    }
}

#[derive(Debug)]
enum Item {
    Line {
        stream: Stream,
        form: Form,
        text: String,
    },
    Dropped {
        stream: Stream,
        count: u64,
    },
}

impl Item {
    fn stream(&self) -> Stream {
        match self {
            Item::Line { stream, .. } | Item::Dropped { stream, .. } => *stream,
        }
    }

    fn render(self) -> Vec<u8> {
        match self {
            Item::Line {
                form: Form::Text,
                text,
                ..
            } => {
                let mut text = for_terminal(&text);
                text.push('\n');
                text.into_bytes()
            }
            Item::Line {
                form: Form::Verbatim,
                text,
                ..
            } => text.into_bytes(),
            Item::Dropped { count, .. } => format!(
                "[{count} line{} dropped]\n",
                if count == 1 { "" } else { "s" }
            )
            .into_bytes(),
        }
    }
}

impl Item {
    /// The bytes it holds in the queue (what [`MAX_BYTES`] bounds).
    fn queued_bytes(&self) -> usize {
        match self {
            Item::Line { text, .. } => text.len(),
            Item::Dropped { .. } => 0,
        }
    }
}

/// The bookkeeping of the bounded queue between callers and the writer
/// thread (no I/O; the items themselves wait in the [`BatchWriter`]).
#[derive(Debug, Default)]
struct Queue {
    /// Items queued and not yet begun by the writer.
    queued: usize,
    /// The text bytes of those items.
    bytes: usize,
    /// Lines dropped per stream since the last marker.
    dropped: [u64; 2],
    /// Streams whose writes failed.
    closed: [bool; 2],
    /// The writer holds an item it has not finished writing.
    writing: bool,
    /// Counts every piece written, so a waiter can tell a slow reader from
    /// none at all.
    progress: u64,
    /// When the writer last took an item or finished a piece: a writer
    /// stuck since long ago is not waited for again.
    moved: Option<Instant>,
}

impl Queue {
    /// Whether a line of `len` bytes for `stream` fits; counts it dropped
    /// when it does not.
    fn accepts(&mut self, stream: Stream, len: usize) -> bool {
        let i = stream.index();
        if self.closed[i] {
            return false;
        }
        let full = self.queued > 0 && (self.queued >= MAX_LINES || self.bytes + len > MAX_BYTES);
        if full {
            self.dropped[i] += 1;
        }
        !full
    }

    /// The writer begins `item`: it no longer waits in the queue.
    fn taken(&mut self, item: &Item) {
        // Saturating: a broken sink forgot everything queued.
        self.queued = self.queued.saturating_sub(1);
        self.bytes = self.bytes.saturating_sub(item.queued_bytes());
    }

    /// Stops `stream` for good: what is queued for it is skipped.
    fn close(&mut self, stream: Stream) {
        self.closed[stream.index()] = true;
        self.dropped[stream.index()] = 0;
    }

    fn idle(&self) -> bool {
        self.queued == 0 && !self.writing
    }
}

#[derive(Debug, Default)]
struct Shared {
    queue: Mutex<Queue>,
    /// Wakes [`Writer::flush`] after each piece written.
    written: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The sink panicked: both streams stop for good and nothing counts
    /// as queued any more, so no [`Writer::flush`] waits for it.
    fn broken(&self) {
        let mut q = self.lock();
        q.close(Stream::Out);
        q.close(Stream::Err);
        q.queued = 0;
        q.bytes = 0;
        q.writing = false;
        drop(q);
        self.written.notify_all();
    }

    /// Writes one item to `sink` in pieces, counting progress; a failed
    /// piece closes its stream.
    fn write_item(&self, sink: &mut impl Sink, item: Item) {
        let stream = item.stream();
        let mut q = self.lock();
        q.taken(&item);
        if q.closed[stream.index()] {
            drop(q);
            self.written.notify_all();
            return;
        }
        q.writing = true;
        q.moved = Some(Instant::now());
        drop(q);
        let bytes = item.render();
        for piece in bytes.chunks(CHUNK) {
            let failed = sink.write(stream, piece).is_err();
            let mut q = self.lock();
            q.progress += 1;
            q.moved = Some(Instant::now());
            if failed {
                q.close(stream);
            }
            drop(q);
            self.written.notify_all();
            if failed {
                break;
            }
        }
        self.lock().writing = false;
        self.written.notify_all();
    }
}

/// A queue and the thread that writes it to a [`Sink`] (a
/// [`BatchWriter`]; lines are written one by one, in order).
#[derive(Debug, Clone)]
pub struct Writer {
    shared: Arc<Shared>,
    /// `None` when no thread could be started: output is dropped.
    thread: Option<Arc<BatchWriter<Item, Infallible>>>,
}

impl Writer {
    /// Starts the writer thread. If no thread can be started, output is
    /// dropped rather than ever blocking a caller.
    pub fn start(mut sink: impl Sink) -> Writer {
        let shared = Arc::new(Shared::default());
        let worker = Arc::clone(&shared);
        let thread = BatchWriter::start(
            "awtui-output",
            Options::default(),
            move |items: &mut Vec<Item>| {
                let written = catch_unwind(AssertUnwindSafe(|| {
                    for item in items.drain(..) {
                        worker.write_item(&mut sink, item);
                    }
                }));
                if written.is_err() {
                    worker.broken();
                }
                Ok(())
            },
        )
        .ok()
        .map(Arc::new);
        if thread.is_none() {
            let mut q = shared.lock();
            q.close(Stream::Out);
            q.close(Stream::Err);
        }
        Writer { shared, thread }
    }

    /// Queues text (a [`Form::Text`] line gets its newline); never blocks
    /// on the reader.
    pub fn line(&self, stream: Stream, form: Form, text: String) {
        let mut q = self.shared.lock();
        if q.accepts(stream, text.len()) {
            self.mark_gap(&mut q, stream);
            self.enqueue(&mut q, Item::Line { stream, form, text });
        }
    }

    /// Hands `item` to the thread (under the queue's lock, so items keep
    /// the order of their callers).
    fn enqueue(&self, q: &mut Queue, item: Item) {
        if let Some(thread) = &self.thread {
            q.queued += 1;
            q.bytes += item.queued_bytes();
            thread.submit(item);
        }
    }

    /// Puts a `[n lines dropped]` marker where lines of `stream` went missing.
    fn mark_gap(&self, q: &mut Queue, stream: Stream) {
        let count = std::mem::take(&mut q.dropped[stream.index()]);
        if count > 0 && !q.closed[stream.index()] {
            self.enqueue(q, Item::Dropped { stream, count });
        }
    }

    /// Waits until everything queued is written (or dropped with its
    /// closed stream), or, with `stall`, until the reader took nothing for
    /// that long; `true` when nothing is left.
    pub fn flush(&self, stall: Option<Duration>) -> bool {
        let mut q = self.shared.lock();
        self.mark_gap(&mut q, Stream::Out);
        self.mark_gap(&mut q, Stream::Err);
        let mut progress = q.progress;
        // A writer already stuck for a while counts from when it stuck.
        let since = match (q.writing, q.moved) {
            (true, Some(moved)) => moved,
            _ => Instant::now(),
        };
        let mut deadline = stall.map(|s| since + s);
        while !q.idle() {
            let Some(until) = deadline else {
                q = self
                    .shared
                    .written
                    .wait(q)
                    .unwrap_or_else(PoisonError::into_inner);
                continue;
            };
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            q = self
                .shared
                .written
                .wait_timeout(q, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            if q.progress != progress {
                progress = q.progress;
                deadline = stall.map(|s| Instant::now() + s);
            }
        }
        true
    }
}

fn global() -> &'static Writer {
    static WRITER: OnceLock<Writer> = OnceLock::new();
    WRITER.get_or_init(|| Writer::start(StdSink))
}

/// Prints a line for a person on standard output (sanitized).
pub fn out(text: impl Into<String>) {
    global().line(Stream::Out, Form::Text, text.into());
}

/// Prints a line for a person on standard error (sanitized).
pub fn err(text: impl Into<String>) {
    global().line(Stream::Err, Form::Text, text.into());
}

/// Prints a line of JSON on standard output: faithful (the same value)
/// and safe to read in a terminal: serde escapes C0 controls, and C1
/// controls and bidirectional marks are escaped too
/// ([`crate::sanitize::escape_json_invisibles`]).
pub fn json(text: impl Into<String>) {
    let mut text = crate::sanitize::escape_json_invisibles(text.into());
    text.push('\n');
    global().line(Stream::Out, Form::Verbatim, text);
}

/// Prints data for a program on standard output exactly as given: no
/// newline added, nothing removed (`ctx` output read by an agent's script).
pub fn raw(text: impl Into<String>) {
    global().line(Stream::Out, Form::Verbatim, text.into());
}

/// Waits until what was printed is written, giving up after [`EXIT_STALL`]
/// without progress: before a full-screen view takes the terminal, and
/// before a process that hosts an instance exits (`awtui stop` waits for
/// that exit, so a reader that takes nothing must not hold it).
pub fn flush() -> bool {
    global().flush(Some(EXIT_STALL))
}

/// Waits until what was printed is written or its reader has gone, however
/// long that takes: before a client command exits, so `awtui list | less`
/// loses nothing.
pub fn drain() {
    global().flush(None);
}

/// `outln!("…", args)`: [`out`] with `format!` arguments.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::out(format!($($arg)*))
    };
}

/// `errln!("…", args)`: [`err`] with `format!` arguments.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::output::err(format!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// A sink that records what it was given; `gate` holds each write until
    /// the test lets it through, `fail` makes writes fail like a closed pipe.
    struct Fake {
        seen: Arc<Mutex<Vec<(Stream, String)>>>,
        gate: Option<mpsc::Receiver<()>>,
        entered: mpsc::Sender<()>,
        fail: [bool; 2],
    }

    impl Sink for Fake {
        fn write(&mut self, stream: Stream, bytes: &[u8]) -> io::Result<()> {
            let _ = self.entered.send(());
            if let Some(gate) = &self.gate {
                let _ = gate.recv();
            }
            if self.fail[stream.index()] {
                return Err(io::Error::from(io::ErrorKind::BrokenPipe));
            }
            self.seen
                .lock()
                .unwrap()
                .push((stream, String::from_utf8_lossy(bytes).into_owned()));
            Ok(())
        }
    }

    type Seen = Arc<Mutex<Vec<(Stream, String)>>>;

    /// A writer on a fake sink; the sender opens the gate (by being
    /// dropped), the receiver hears of every write begun.
    fn fake(gated: bool, fail: [bool; 2]) -> (Writer, Seen, mpsc::Sender<()>, mpsc::Receiver<()>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (gate_tx, gate_rx) = mpsc::channel();
        let (entered_tx, entered_rx) = mpsc::channel();
        let writer = Writer::start(Fake {
            seen: seen.clone(),
            gate: gated.then_some(gate_rx),
            entered: entered_tx,
            fail,
        });
        (writer, seen, gate_tx, entered_rx)
    }

    #[test]
    fn text_is_sanitized_json_is_kept() {
        let (w, seen, _gate, _entered) = fake(false, [false, false]);
        w.line(Stream::Out, Form::Text, "a\x1b]0;title\x07b\x1b[2J".into());
        w.line(Stream::Err, Form::Text, "x\x1b]52;c;aGk=\x07y".into());
        w.line(Stream::Out, Form::Verbatim, "{\"t\":\"\\u001b\"}\n".into());
        assert!(w.flush(None));
        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen,
            vec![
                (Stream::Out, "ab\n".to_string()),
                (Stream::Err, "xy\n".to_string()),
                (Stream::Out, "{\"t\":\"\\u001b\"}\n".to_string()),
            ]
        );
    }

    #[test]
    fn a_reader_that_takes_nothing_never_blocks_callers() {
        // The first write hangs (a full pipe nobody reads).
        let (w, seen, gate, entered) = fake(true, [false, false]);
        w.line(Stream::Out, Form::Text, "line 0".into());
        entered.recv_timeout(Duration::from_secs(30)).unwrap();
        for i in 1..MAX_LINES + 100 {
            w.line(Stream::Out, Form::Text, format!("line {i}"));
        }
        // Nothing moves: a flush gives up instead of hanging, and so does
        // the next one.
        assert!(!w.flush(Some(Duration::from_millis(50))));
        assert!(!w.flush(Some(Duration::from_millis(50))));
        // The reader catches up: the gap is marked where it happened.
        drop(gate);
        assert!(w.flush(None));
        w.line(Stream::Out, Form::Text, "after".into());
        assert!(w.flush(None));
        let seen = seen.lock().unwrap();
        let texts: Vec<&str> = seen.iter().map(|(_, t)| t.trim_end()).collect();
        assert_eq!(texts.len(), MAX_LINES + 3);
        assert_eq!(texts[0], "line 0");
        assert_eq!(texts[MAX_LINES], format!("line {MAX_LINES}"));
        assert_eq!(texts[MAX_LINES + 1], "[99 lines dropped]");
        assert_eq!(texts[MAX_LINES + 2], "after");
    }

    #[test]
    fn a_closed_stream_drops_its_lines_and_the_other_goes_on() {
        let (w, seen, _gate, _entered) = fake(false, [true, false]);
        w.line(Stream::Out, Form::Text, "lost".into());
        assert!(w.flush(None));
        for i in 0..10 {
            w.line(Stream::Out, Form::Text, format!("out {i}"));
            w.line(Stream::Err, Form::Text, format!("err {i}"));
        }
        assert!(w.flush(None));
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 10);
        assert!(seen.iter().all(|(s, _)| *s == Stream::Err));
    }

    struct Panicking;

    impl Sink for Panicking {
        fn write(&mut self, _: Stream, _: &[u8]) -> io::Result<()> {
            panic!("the sink broke");
        }
    }

    #[test]
    fn a_sink_that_panics_stops_output_and_never_holds_a_flush() {
        let w = Writer::start(Panicking);
        for i in 0..10 {
            w.line(Stream::Out, Form::Text, format!("line {i}"));
        }
        assert!(w.flush(None));
        w.line(Stream::Err, Form::Text, "after".into());
        assert!(w.flush(None));
    }

    #[test]
    fn a_long_line_is_written_in_pieces() {
        let (w, seen, _gate, _entered) = fake(false, [false, false]);
        let long = "x".repeat(3 * CHUNK);
        w.line(Stream::Out, Form::Verbatim, format!("{long}\n"));
        assert!(w.flush(None));
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 4);
        let joined: String = seen.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(joined, format!("{long}\n"));
    }
}
