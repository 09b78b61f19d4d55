//! `awtui approve|deny [<request>] [--always [RULE]] [--reason TEXT]
//! [--instance NAME]`: answers a tool call an agent's CLI asks about, from
//! the shell, as `user` (the same engine command as the control room's `y`
//! and `n`). Without a request number it lists what waits.

use super::{exit, remote};
use crate::approvals::{Answer, Rule, Verdict};
use crate::engine::{Command, Reply};
use crate::errln;

/// `awtui approve` / `awtui deny`: which request, how, where.
#[derive(Clone, Debug, clap::Args)]
pub struct DecisionArgs {
    /// The request's number (`#3` or `3`); without it, list what waits.
    pub request: Option<String>,
    /// Keep the decision for this agent: for the call's exact command or
    /// file, or for RULE (such as 'Bash(git status*)') when given.
    #[arg(long, value_name = "RULE", num_args = 0..=1, default_missing_value = "")]
    pub always: Option<String>,
    /// Why (the model sees it when denied).
    #[arg(long)]
    pub reason: Option<String>,
    /// The instance (default: the only one running).
    #[arg(long)]
    pub instance: Option<String>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// Reads `#3` or `3`.
pub fn parse_request(text: &str) -> Result<u64, String> {
    text.trim()
        .trim_start_matches('#')
        .parse::<u64>()
        .map_err(|_| format!("'{text}' is not a request number such as 3 or #3"))
}

/// The answer `verdict` with the command line's options, checked.
pub fn answer(
    verdict: Verdict,
    always: Option<&str>,
    reason: Option<&str>,
) -> Result<Answer, String> {
    let rule = match always.map(str::trim) {
        Some("") | None => None,
        Some(text) => Some(Rule::parse(text).map_err(|e| format!("--always: {e}"))?),
    };
    Ok(Answer {
        verdict: Some(verdict),
        always: always.is_some(),
        rule,
        reason: reason.map(str::to_string),
    })
}

/// Carries out `awtui approve` (allow) or `awtui deny`; returns the exit code.
pub fn run(verdict: Verdict, args: &DecisionArgs) -> u8 {
    let answer = match answer(verdict, args.always.as_deref(), args.reason.as_deref()) {
        Ok(a) => a,
        Err(e) => {
            errln!("{e}");
            return exit::INVALID;
        }
    };
    let request = match args.request.as_deref().map(parse_request).transpose() {
        Ok(r) => r,
        Err(e) => {
            errln!("{e}");
            return exit::INVALID;
        }
    };
    let (resolved, rt) = match remote::resolve_option(args.instance.as_deref()) {
        Ok(found) => found,
        Err(code) => return code,
    };
    let json = args.json;
    rt.block_on(async move {
        let mut client = match remote::open(&resolved.info).await {
            Ok(c) => c,
            Err(code) => return code,
        };
        let what = format!("@{}", client.info.instance);
        let Some(request) = request else {
            let pending = match remote::command(
                &mut client,
                &what,
                Command::Snapshot { messages: 0 },
            )
            .await
            {
                Ok(Reply::Snapshot { snapshot }) => snapshot.approvals.pending,
                Ok(other) => {
                    errln!("unexpected answer: {other:?}");
                    return exit::FAILED;
                }
                Err(code) => return code,
            };
            if json {
                super::print::json(serde_json::to_string(&pending).unwrap_or_default());
            } else if pending.is_empty() {
                super::print::line("no approval request waits".to_string());
            } else {
                let text: String = pending.iter().map(super::print::approval_request).collect();
                super::print::line(text.trim_end().to_string());
            }
            return exit::OK;
        };
        match remote::command(&mut client, &what, Command::Approve { request, answer }).await {
            Ok(_) => {
                let verb = if verdict == Verdict::Allow {
                    "allowed"
                } else {
                    "denied"
                };
                if json {
                    super::print::json(
                        serde_json::json!({"request": request, "verdict": verdict}).to_string(),
                    );
                } else {
                    errln!("{verb} #{request} in @{}", client.info.instance);
                }
                exit::OK
            }
            Err(code) => code,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_numbers_and_always_rules_are_read_from_the_command_line() {
        assert_eq!(parse_request("#3"), Ok(3));
        assert_eq!(parse_request("12"), Ok(12));
        assert!(parse_request("x").is_err());
        let a = answer(Verdict::Allow, Some(""), None).unwrap();
        assert!(a.always && a.rule.is_none());
        let a = answer(Verdict::Deny, Some("Bash(rm *)"), Some("no")).unwrap();
        assert_eq!(a.rule.unwrap().to_string(), "Bash(rm *)");
        assert_eq!(a.reason.as_deref(), Some("no"));
        assert!(answer(Verdict::Allow, Some("Bash(x"), None).is_err());
        assert!(!answer(Verdict::Allow, None, None).unwrap().always);
    }
}
