//! `awtui-mcp`: the stdio MCP bridge of `awtui mcp`, built alone so that
//! the bridge each agent runs for its whole life maps only its own code.
//! `awtui mcp` hands over to it when it is installed beside `awtui`
//! ([`awtui::mcp::bridge::handover`]); it takes the same arguments, and
//! hands anything else back to `awtui mcp`.

fn main() -> std::process::ExitCode {
    awtui::mcp::bridge::handover::lean_main()
}
