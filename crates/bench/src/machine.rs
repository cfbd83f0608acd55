//! What machine a run measured: every figure depends on it.

use serde::Serialize;

/// The machine, as `/proc` describes it.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    /// Record type in the JSON lines.
    pub kind: &'static str,
    /// Cores this process may use.
    pub cores: usize,
    /// CPU model name.
    pub cpu_model: String,
    /// Total memory in bytes.
    pub memory_bytes: Option<u64>,
    /// Kernel release.
    pub kernel: String,
    /// Version of the bench (and of `mcp-tasks`).
    pub bench_version: &'static str,
    /// Whether the bench itself was built with optimizations.
    pub optimized_build: bool,
    /// The 1-minute load average when the run started (other work on the machine
    /// skews every rate).
    pub load_average_at_start: Option<f64>,
}

impl Machine {
    /// Reads the machine description.
    pub fn detect() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        Machine {
            kind: "machine",
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu_model: field(&cpuinfo, "model name").unwrap_or_else(|| "unknown".into()),
            memory_bytes: field(&meminfo, "MemTotal")
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
                .map(|kib| kib * 1024),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "unknown".into()),
            bench_version: env!("CARGO_PKG_VERSION"),
            optimized_build: !cfg!(debug_assertions),
            load_average_at_start: crate::process::load_average(),
        }
    }
}

/// The value of the first `name: value` line.
fn field(text: &str, name: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == name).then(|| v.trim().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_reads_colon_lines() {
        let text = "processor\t: 0\nmodel name\t: Some CPU @ 2GHz\n";
        assert_eq!(
            field(text, "model name").as_deref(),
            Some("Some CPU @ 2GHz")
        );
        assert_eq!(field(text, "flags"), None);
    }

    #[test]
    fn detect_finds_at_least_one_core() {
        assert!(Machine::detect().cores >= 1);
    }
}
