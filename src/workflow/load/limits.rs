//! `limits:`: loop guards and budgets for the whole workflow.

use super::Walker;
use super::keys;
use crate::workflow::schema::Limits;
use crate::workflow::yaml::{Node, Value};

impl Walker<'_> {
    pub(super) fn limits(&mut self, node: &Node) -> Limits {
        let mut limits = Limits::default();
        let Some(fields) = self.keyed(node, &keys::LIMITS, "limits") else {
            return limits;
        };
        for (key, value) in fields {
            let what = format!("limits.{}", key.name);
            match key.name.as_str() {
                "max_turns" => limits.max_turns = self.count(value, &what, 1),
                "agent_max_turns" => limits.agent_max_turns = self.count(value, &what, 1),
                "retries" => limits.retries = self.count(value, &what, 0),
                "loop_repeats" => limits.loop_repeats = self.count(value, &what, 0),
                "release_after_missed_heartbeats" => {
                    limits.release_after_missed_heartbeats = self.count(value, &what, 1)
                }
                "wall_clock" => limits.wall_clock = self.duration(value, &what),
                "retry_backoff" => limits.retry_backoff = self.duration(value, &what),
                "stall_after" => limits.stall_after = self.duration(value, &what),
                "approval_timeout" => limits.approval_timeout = self.duration(value, &what),
                "tool_timeout" => limits.tool_timeout = self.duration(value, &what),
                _ => {
                    limits.cost_usd = match value.value {
                        Value::Int(i) if i > 0 => Some(i as f64),
                        Value::Float(f) if f > 0.0 => Some(f),
                        _ => {
                            self.diags.error(
                                value.pos,
                                format!("{what} must be a positive amount of US dollars"),
                            );
                            None
                        }
                    }
                }
            }
        }
        limits
    }
}
