//! The fast path as an agent's CLI takes it when it speaks MCP over stdio:
//! JSON-RPC lines into `awtui mcp` (the real binary), relayed over the
//! instance's socket to the server, and the answer back (issue 24, item 8).
//!
//! Measured, each next to an MCP `ping` through the same bridge and an
//! fdatasync'd append in the same folder, in the same run:
//! - `channel_send` p50 − ping p50 − append p50 (target ≤ 0.15 ms);
//! - 20 bridges, one per agent, each sending 500 messages at once: sends
//!   per second (target ≥ 5,000);
//! - the bridge's resident memory right after `initialize` and after its
//!   sends (target ≤ 8 MiB), and how much of it is the program's pages,
//!   the shared libraries' and the rest (heap, stacks). `awtui mcp` hands
//!   over to the `awtui-mcp` built beside it; with `AWTUI_MCP_IN_PROCESS=1`
//!   in the environment it runs the bridge itself, for comparison.
//!
//! The server runs in this process on a runtime of two workers, as in
//! `awtui`; each client is a plain thread writing a line and reading the
//! answer, as a CLI waits for its tool call.
//!
//! Run: `cargo bench --bench bridge` (optionally `-- --samples N`).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use awtui::context::{FileStore, StoreLayout};
use awtui::mcp::{McpConfig, McpServer, SharedContext};
use serde_json::{Value, json};

const CONCURRENT: usize = 20;
const SENDS_EACH: usize = 500;

fn agents() -> Vec<String> {
    (0..CONCURRENT).map(|i| format!("a{i}")).collect()
}

/// One `awtui mcp` process and its pipes.
struct Bridge {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Bridge {
    fn start(root: &std::path::Path, agent: &str) -> Bridge {
        let mut child = Command::new(env!("CARGO_BIN_EXE_awtui"))
            .args(["mcp", "--instance", "default", "--agent", agent, "--dir"])
            .arg(root)
            .env_remove("AWTUI_TOKEN")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("awtui mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut b = Bridge {
            child,
            stdin,
            stdout,
            next_id: 0,
        };
        b.call(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            }),
        );
        b.line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        b
    }

    fn line(&mut self, value: &Value) {
        let mut text = value.to_string();
        text.push('\n');
        self.stdin.write_all(text.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends one request and waits for its answer (notifications in
    /// between are skipped).
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.line(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut text = String::new();
        loop {
            text.clear();
            let n = self.stdout.read_line(&mut text).unwrap();
            assert!(n > 0, "the bridge closed its output");
            let answer: Value = serde_json::from_str(&text).unwrap();
            if answer["id"] == json!(id) {
                assert!(answer.get("error").is_none(), "{answer}");
                return answer;
            }
        }
    }

    fn ping(&mut self) {
        self.call("ping", json!({}));
    }

    fn send(&mut self, text: &str) {
        let answer = self.call(
            "tools/call",
            json!({"name": "channel_send", "arguments": {"message": text}}),
        );
        assert_ne!(answer["result"]["isError"], json!(true), "{answer}");
    }

    /// Resident memory of the bridge process, in KiB.
    fn rss_kib(&self) -> u64 {
        self.rss().total
    }

    /// The program the bridge process runs: `awtui-mcp` once `awtui mcp`
    /// handed over to it, `awtui` when it runs the bridge itself.
    fn program(&self) -> std::path::PathBuf {
        std::fs::read_link(format!("/proc/{}/exe", self.child.id())).unwrap()
    }

    /// Resident memory of the bridge process and where it lies, from its
    /// `/proc/<pid>/smaps`.
    fn rss(&self) -> Rss {
        let smaps = std::fs::read_to_string(format!("/proc/{}/smaps", self.child.id())).unwrap();
        let program = self.program();
        let binary = program.to_str().unwrap_or_default();
        let mut rss = Rss::default();
        let mut path = "";
        for line in smaps.lines() {
            let mut words = line.split_whitespace();
            let first = words.next().unwrap_or("");
            if first.contains('-') && !first.ends_with(':') {
                path = words.nth(4).unwrap_or("");
            } else if first == "Rss:" {
                let kib: u64 = words.next().and_then(|n| n.parse().ok()).unwrap_or(0);
                rss.total += kib;
                if path == binary {
                    rss.binary += kib;
                } else if path.contains(".so") {
                    rss.libraries += kib;
                }
            }
        }
        rss
    }
}

/// Resident memory of a bridge, in KiB.
#[derive(Debug, Default)]
struct Rss {
    /// Everything resident (what `VmRSS` counts).
    total: u64,
    /// Pages of the program it runs (`awtui-mcp` or `awtui`): code,
    /// read-only data, and the relocated data the loader wrote.
    binary: u64,
    /// Pages of the shared libraries (libc, libm, the loader, libgcc_s).
    libraries: u64,
}

impl Rss {
    fn mib(kib: u64) -> f64 {
        kib as f64 / 1024.0
    }

    /// `binary 5.1, libraries 2.0, heap and stacks 0.4 MiB`.
    fn split(&self) -> String {
        format!(
            "binary {:.1}, libraries {:.1}, heap and stacks {:.1} MiB",
            Rss::mib(self.binary),
            Rss::mib(self.libraries),
            Rss::mib(self.total - self.binary - self.libraries)
        )
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// fdatasync'd appends of a channel-sized line in the instance's folder:
/// the floor a durable send cannot go under.
fn append_probe(dir: &std::path::Path) -> impl FnMut() -> Duration {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("append-probe.jsonl"))
        .unwrap();
    let line = format!("{}\n", "x".repeat(160));
    move || {
        let start = Instant::now();
        file.write_all(line.as_bytes()).unwrap();
        file.sync_data().unwrap();
        start.elapsed()
    }
}

fn p50(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let mut samples = 1000;
    let mut argv = std::env::args().skip(1);
    while let Some(a) = argv.next() {
        if a == "--samples" {
            samples = argv.next().and_then(|n| n.parse().ok()).unwrap_or(samples);
        }
    }
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(".workflow").join("default");
    let layout = StoreLayout {
        channel: "channel.md".into(),
        document: "notes.md".into(),
        documents: vec![],
        agents: agents(),
    };
    let store = FileStore::open(&dir, &layout).unwrap();
    let handle = server
        .block_on(McpServer::start(McpConfig {
            context: SharedContext::new(Box::new(store)),
            agents: agents(),
            instance_dir: Some(dir.clone()),
            tool_timeout: None,
        }))
        .unwrap();

    // One bridge: ping, append and send, interleaved so the disk's and
    // the machine's moods touch all three alike.
    let mut one = Bridge::start(tmp.path(), "a0");
    let rss_initialized = one.rss();
    let mut append = append_probe(&dir);
    for i in 0..50 {
        one.ping();
        one.send(&format!("warm-up {i}"));
    }
    let (mut pings, mut appends, mut sends) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..samples {
        let start = Instant::now();
        one.ping();
        pings.push(start.elapsed());
        appends.push(append());
        let start = Instant::now();
        one.send(&format!("message {i} from the bench"));
        sends.push(start.elapsed());
    }
    let rss_after = one.rss();
    let (ping, append, send) = (p50(pings), p50(appends), p50(sends));
    println!("through `awtui mcp` (stdio bridge), {samples} samples:");
    println!("  ping p50                     {:.3} ms", ms(ping));
    println!("  fdatasync'd append p50       {:.3} ms", ms(append));
    println!("  channel_send p50             {:.3} ms", ms(send));
    println!(
        "  send - ping - append         {:.3} ms   (target <= 0.15)",
        ms(send) - ms(ping) - ms(append)
    );
    println!(
        "  bridge RSS                   {:.1} MiB after initialize, {:.1} MiB after {} sends   (target <= 8)",
        Rss::mib(rss_initialized.total),
        Rss::mib(rss_after.total),
        samples + 50
    );
    println!(
        "    running {} (AWTUI_MCP_IN_PROCESS=1 keeps the bridge in awtui)",
        one.program().display()
    );
    println!("    after initialize: {}", rss_initialized.split());
    println!("    after the sends:  {}", rss_after.split());
    drop(one);

    // Twenty bridges sending at once.
    let bridges: Vec<Bridge> = agents()
        .iter()
        .map(|a| Bridge::start(tmp.path(), a))
        .collect();
    let start = Instant::now();
    let threads: Vec<_> = bridges
        .into_iter()
        .enumerate()
        .map(|(n, mut b)| {
            std::thread::spawn(move || {
                for i in 0..SENDS_EACH {
                    b.send(&format!("{n}/{i} at once"));
                }
                b.rss_kib()
            })
        })
        .collect();
    let peak_rss = threads
        .into_iter()
        .map(|t| t.join().unwrap())
        .max()
        .unwrap_or(0);
    let took = start.elapsed();
    let total = CONCURRENT * SENDS_EACH;
    println!(
        "{CONCURRENT} bridges x {SENDS_EACH} sends: {:.0} msg/s ({total} in {:.2} s)   (target >= 5,000); largest bridge {:.1} MiB",
        total as f64 / took.as_secs_f64(),
        took.as_secs_f64(),
        peak_rss as f64 / 1024.0
    );
    server.block_on(handle.stop());
}
