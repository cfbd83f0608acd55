//! How long each tool's calls run, as far as the task window cares: whether its recent
//! calls ended within the window or not. The extension wire (and a plain call under
//! the sync budget) holds a call for the window to answer an instant one inline; for a
//! tool whose calls run long, that wait is only a floor under every creation. A tool
//! whose last [`LEARNED_AFTER`] observed calls all outlasted the window (or that
//! declares an expected duration beyond it, [`Tool::expected_duration`]) gets its task
//! at once. No call waits to find out whether the tool became quick: every task that
//! ends reports how long it ran ([`ToolDurations::observe_finished`]), and a tool
//! whose task completed within the window waits it again.
//!
//! [`Tool::expected_duration`]: crate::Tool::expected_duration

use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::Duration;

use crate::tools::registry::Tool;

/// Calls observed in a row outlasting the window before a tool's calls skip it.
pub const LEARNED_AFTER: u32 = 8;

/// Most tools remembered (a gateway may offer many; each costs a few bytes).
const MOST_TOOLS: usize = 4096;

/// What one tool's recent calls did.
#[derive(Debug, Default, Clone, Copy)]
struct Recent {
    /// Observed calls in a row (up to [`LEARNED_AFTER`]) that outlasted the window.
    long_in_a_row: u32,
}

/// Per tool, whether its calls usually outlast the task window.
#[derive(Debug, Default)]
pub struct ToolDurations {
    recent: Mutex<HashMap<String, Recent>>,
}

impl ToolDurations {
    /// The window a call of `tool` waits now: `window`, or zero when the tool is
    /// known to run longer (declared, or learned).
    pub fn window_for(&self, tool: &Tool, window: Duration) -> Duration {
        if window.is_zero() {
            return window;
        }
        if tool.expected().is_some_and(|expected| expected > window) {
            return Duration::ZERO;
        }
        if self.runs_long(tool.name()) {
            Duration::ZERO
        } else {
            window
        }
    }

    /// Whether `tool`'s recent calls all outlasted the window (it skips it).
    pub fn runs_long(&self, tool: &str) -> bool {
        self.recent
            .lock()
            .get(tool)
            .is_some_and(|r| r.long_in_a_row >= LEARNED_AFTER)
    }

    /// Records how long a task of `tool` ran, from creation to completion: one that
    /// completed within `window` would have been answered inline, so a tool that was
    /// skipping the window waits it again. This is how a tool that became quick is
    /// noticed without holding any call back to find out.
    pub fn observe_finished(&self, tool: &str, ran: Duration, window: Duration) {
        if ran >= window {
            return;
        }
        if let Some(r) = self.recent.lock().get_mut(tool) {
            *r = Recent::default();
        }
    }

    /// Records what a call that waited the window did: ended within it
    /// (`ended_inline`), or outlasted it. Calls that skipped the window are not
    /// recorded (they say nothing about it).
    pub fn observe(&self, tool: &str, ended_inline: bool) {
        let mut recent = self.recent.lock();
        if recent.len() >= MOST_TOOLS && !recent.contains_key(tool) {
            return;
        }
        let r = recent.entry(tool.to_string()).or_default();
        if ended_inline {
            *r = Recent::default();
        } else {
            r.long_in_a_row = (r.long_in_a_row + 1).min(LEARNED_AFTER);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str) -> Tool {
        Tool::new(name, "t", json!({"type": "object"}), |_a, _c| {
            Box::pin(async { Ok(json!({})) })
        })
        .unwrap()
    }

    const WINDOW: Duration = Duration::from_millis(20);

    #[test]
    fn a_tool_whose_calls_outlast_the_window_skips_it_until_a_task_of_it_ends_quickly() {
        let d = ToolDurations::default();
        let slow = tool("slow");
        for _ in 0..LEARNED_AFTER - 1 {
            assert_eq!(d.window_for(&slow, WINDOW), WINDOW);
            d.observe("slow", false);
        }
        assert_eq!(d.window_for(&slow, WINDOW), WINDOW, "not learned yet");
        d.observe("slow", false);
        assert!(
            (0..100).all(|_| d.window_for(&slow, WINDOW).is_zero()),
            "no call of a learned tool waits the window"
        );
        // Tasks that ran longer than the window change nothing.
        d.observe_finished("slow", WINDOW * 3, WINDOW);
        assert!(d.window_for(&slow, WINDOW).is_zero());
        // A task that completed within the window: the tool waits it again.
        d.observe_finished("slow", WINDOW / 2, WINDOW);
        assert_eq!(d.window_for(&slow, WINDOW), WINDOW);
        // A call that waited and ended inline also resets what was learned.
        for _ in 0..LEARNED_AFTER {
            d.observe("slow", false);
        }
        assert!(d.window_for(&slow, WINDOW).is_zero());
        d.observe("slow", true);
        assert_eq!(d.window_for(&slow, WINDOW), WINDOW);
    }

    #[test]
    fn quick_tools_keep_the_window_and_a_declared_duration_skips_it() {
        let d = ToolDurations::default();
        let quick = tool("quick");
        for i in 0..50 {
            d.observe("quick", i % 4 == 0);
            assert_eq!(
                d.window_for(&quick, WINDOW),
                WINDOW,
                "a tool that often ends inline"
            );
        }
        let declared = tool("declared").expected_duration(Duration::from_secs(60));
        assert!(d.window_for(&declared, WINDOW).is_zero());
        let short = tool("short").expected_duration(Duration::from_millis(5));
        assert_eq!(d.window_for(&short, WINDOW), WINDOW);
        assert_eq!(d.window_for(&tool("any"), Duration::ZERO), Duration::ZERO);
    }
}
