//! The table: which scenario runs on which peer and wire, and why the others cannot.
//! [`peer_suite!`](crate::peer_suite!) expands it for one front-end.

/// Stamps out the peer table for one front-end: for every peer and wire, a module
/// (`fastmcp_tasks_on_auto_wire`, `rmcp_on_legacy_wire`, ...) holding one `#[test]` per
/// scenario, or an ignored test whose reason says why the scenario does not apply.
///
/// `$fe` is `library` or `cli` (a few cells apply to one of them only); `$make` is the
/// path of a function returning the front-end, e.g. `crate::library`.
///
/// ```ignore
/// fn library() -> MyFrontEnd { MyFrontEnd }
/// mcp_tasks_testkit::peer_suite!(library, crate::library);
/// ```
#[macro_export]
macro_rules! peer_suite {
    ($fe:ident, $make:path) => {
        $crate::__peer_module! { $fe, $make, fastmcp_tasks_on_auto_wire, FASTMCP_TASKS, Auto;
            lists_its_tools: run;
            a_task_reports_its_steps: run;
            a_detached_task_is_followed_by_id: run;
            cancel_ends_a_task: run;
            cancel_is_refused_where_not_offered: na "fastmcp-tasks offers tasks/cancel (cancel_ends_a_task runs)";
            a_question_is_answered: run;
            a_declined_question_reaches_the_tool: run;
            an_unknown_task_is_refused: run;
            sampling_is_answered: na "the fastmcp-tasks server has no tool that asks for a sampling";
            progress_reaches_the_caller: na "the fastmcp-tasks server speaks the extension wire, which has no progress notifications";
            no_tasks_on_this_wire: na "fastmcp-tasks offers tasks on the wire it negotiates";
        }
        $crate::__peer_module! { $fe, $make, everything_http_on_auto_wire, EVERYTHING_HTTP, Auto;
            lists_its_tools: run;
            a_task_reports_its_steps: run;
            a_detached_task_is_followed_by_id: run;
            cancel_ends_a_task: run;
            cancel_is_refused_where_not_offered: na "the everything server offers tasks/cancel (cancel_ends_a_task runs)";
            a_question_is_answered: run;
            a_declined_question_reaches_the_tool: run;
            an_unknown_task_is_refused: run;
            sampling_is_answered: run;
            progress_reaches_the_caller: run;
            no_tasks_on_this_wire: na "the everything server offers tasks on 2025-11-25, the wire auto picks";
        }
        $crate::__peer_module! { $fe, $make, everything_stdio_on_auto_wire, EVERYTHING_STDIO, Auto;
            lists_its_tools: run;
            a_task_reports_its_steps: run;
            a_detached_task_is_followed_by_id: na "over stdio each connection starts its own server: a new connection cannot find an earlier one's task";
            cancel_ends_a_task: cli_na "over stdio the server is the CLI process's child: `call --detach` stops it, so no later `cancel` can reach the task";
            cancel_is_refused_where_not_offered: na "the everything server offers tasks/cancel (cancel_ends_a_task runs)";
            a_question_is_answered: run;
            a_declined_question_reaches_the_tool: run;
            an_unknown_task_is_refused: run;
            sampling_is_answered: run;
            progress_reaches_the_caller: run;
            no_tasks_on_this_wire: na "the everything server offers tasks on 2025-11-25, the wire auto picks";
        }
        $crate::__peer_module! { $fe, $make, rmcp_on_auto_wire, RMCP, Auto;
            lists_its_tools: run;
            a_task_reports_its_steps: run;
            a_detached_task_is_followed_by_id: run;
            cancel_ends_a_task: run;
            cancel_is_refused_where_not_offered: na "rmcp offers tasks/cancel (cancel_ends_a_task runs)";
            a_question_is_answered: run;
            a_declined_question_reaches_the_tool: run;
            an_unknown_task_is_refused: run;
            sampling_is_answered: na "the Rust peers serve slow_steps, ask_name and until_cancelled only: nothing asks for a sampling";
            progress_reaches_the_caller: na "the Rust peers serve slow_steps, ask_name and until_cancelled only: nothing reports progress";
            no_tasks_on_this_wire: na "rmcp offers tasks on the extension wire, the one auto picks";
        }
        $crate::__peer_module! { $fe, $make, rmcp_on_extension_wire, RMCP, Extension;
            lists_its_tools: run;
            a_task_reports_its_steps: run;
            a_detached_task_is_followed_by_id: run;
            cancel_ends_a_task: run;
            cancel_is_refused_where_not_offered: na "rmcp offers tasks/cancel (cancel_ends_a_task runs)";
            a_question_is_answered: run;
            a_declined_question_reaches_the_tool: run;
            an_unknown_task_is_refused: run;
            sampling_is_answered: na "the Rust peers serve slow_steps, ask_name and until_cancelled only: nothing asks for a sampling";
            progress_reaches_the_caller: na "the Rust peers serve slow_steps, ask_name and until_cancelled only: nothing reports progress";
            no_tasks_on_this_wire: na "rmcp offers tasks on the extension wire";
        }
        $crate::__peer_module! { $fe, $make, rmcp_on_legacy_wire, RMCP, Legacy;
            lists_its_tools: na "rmcp 3.11 has tasks only as the extension: on 2025-11-25 it offers none";
            a_task_reports_its_steps: na "rmcp 3.11 has tasks only as the extension: on 2025-11-25 it offers none";
            a_detached_task_is_followed_by_id: na "rmcp 3.11 has tasks only as the extension: on 2025-11-25 it offers none";
            cancel_ends_a_task: na "rmcp 3.11 has tasks only as the extension: on 2025-11-25 it offers none";
            cancel_is_refused_where_not_offered: na "rmcp 3.11 has tasks only as the extension: on 2025-11-25 it offers none";
            a_question_is_answered: na "rmcp 3.11 has tasks only as the extension: on 2025-11-25 it offers none";
            a_declined_question_reaches_the_tool: na "rmcp 3.11 has tasks only as the extension: on 2025-11-25 it offers none";
            an_unknown_task_is_refused: na "rmcp 3.11 has tasks only as the extension: on 2025-11-25 it offers none";
            sampling_is_answered: na "the Rust peers serve slow_steps, ask_name and until_cancelled only: nothing asks for a sampling";
            progress_reaches_the_caller: na "the Rust peers serve slow_steps, ask_name and until_cancelled only: nothing reports progress";
            no_tasks_on_this_wire: run;
        }
        $crate::__peer_module! { $fe, $make, tower_mcp_on_auto_wire, TOWER_MCP, Auto;
            lists_its_tools: run;
            a_task_reports_its_steps: run;
            a_detached_task_is_followed_by_id: run;
            cancel_ends_a_task: run;
            cancel_is_refused_where_not_offered: na "tower-mcp offers tasks/cancel (cancel_ends_a_task runs)";
            a_question_is_answered: run;
            a_declined_question_reaches_the_tool: run;
            an_unknown_task_is_refused: run;
            sampling_is_answered: na "the Rust peers serve slow_steps, ask_name and until_cancelled only: nothing asks for a sampling";
            progress_reaches_the_caller: na "the Rust peers serve slow_steps, ask_name and until_cancelled only: nothing reports progress";
            no_tasks_on_this_wire: na "tower-mcp offers tasks on both wires";
        }
        $crate::__peer_module! { $fe, $make, tower_mcp_on_extension_wire, TOWER_MCP, Extension;
            lists_its_tools: run;
            a_task_reports_its_steps: run;
            a_detached_task_is_followed_by_id: run;
            cancel_ends_a_task: run;
            cancel_is_refused_where_not_offered: na "tower-mcp offers tasks/cancel (cancel_ends_a_task runs)";
            a_question_is_answered: run;
            a_declined_question_reaches_the_tool: run;
            an_unknown_task_is_refused: run;
            sampling_is_answered: na "the Rust peers serve slow_steps, ask_name and until_cancelled only: nothing asks for a sampling";
            progress_reaches_the_caller: na "the Rust peers serve slow_steps, ask_name and until_cancelled only: nothing reports progress";
            no_tasks_on_this_wire: na "tower-mcp offers tasks on both wires";
        }
        $crate::__peer_module! { $fe, $make, tower_mcp_on_legacy_wire, TOWER_MCP, Legacy;
            lists_its_tools: run;
            a_task_reports_its_steps: run;
            a_detached_task_is_followed_by_id: run;
            cancel_ends_a_task: run;
            cancel_is_refused_where_not_offered: na "tower-mcp offers tasks/cancel (cancel_ends_a_task runs)";
            a_question_is_answered: na "tower-mcp 0.25 carries no question of a task on 2025-11-25 (no tasks/result; tests/interop/workarounds.md): the task waits until its ttl";
            a_declined_question_reaches_the_tool: na "tower-mcp 0.25 carries no question of a task on 2025-11-25 (no tasks/result; tests/interop/workarounds.md): the task waits until its ttl";
            an_unknown_task_is_refused: run;
            sampling_is_answered: na "the Rust peers serve slow_steps, ask_name and until_cancelled only: nothing asks for a sampling";
            progress_reaches_the_caller: na "the Rust peers serve slow_steps, ask_name and until_cancelled only: nothing reports progress";
            no_tasks_on_this_wire: na "tower-mcp offers tasks on both wires";
        }
        $crate::__peer_module! { $fe, $make, turul_memory_on_auto_wire, TURUL_MEMORY, Auto;
            lists_its_tools: run;
            a_task_reports_its_steps: run;
            a_detached_task_is_followed_by_id: run;
            cancel_ends_a_task: run;
            cancel_is_refused_where_not_offered: na "turul offers tasks/cancel (cancel_ends_a_task runs)";
            a_question_is_answered: run;
            a_declined_question_reaches_the_tool: run;
            an_unknown_task_is_refused: run;
            sampling_is_answered: na "the turul peer serves slow_compute, count_to and echo: nothing asks for a sampling";
            progress_reaches_the_caller: na "turul's count_to asks a question half-way, which a plain call cannot answer here; its tasks report no progress";
            no_tasks_on_this_wire: na "turul offers tasks on 2026-07-28, the only wire it speaks";
        }
        $crate::__peer_module! { $fe, $make, turul_memory_on_extension_wire, TURUL_MEMORY, Extension;
            lists_its_tools: run;
            a_task_reports_its_steps: run;
            a_detached_task_is_followed_by_id: run;
            cancel_ends_a_task: run;
            cancel_is_refused_where_not_offered: na "turul offers tasks/cancel (cancel_ends_a_task runs)";
            a_question_is_answered: run;
            a_declined_question_reaches_the_tool: run;
            an_unknown_task_is_refused: run;
            sampling_is_answered: na "the turul peer serves slow_compute, count_to and echo: nothing asks for a sampling";
            progress_reaches_the_caller: na "turul's count_to asks a question half-way, which a plain call cannot answer here; its tasks report no progress";
            no_tasks_on_this_wire: na "turul offers tasks on 2026-07-28, the only wire it speaks";
        }
        $crate::__peer_module! { $fe, $make, turul_sqlite_on_extension_wire, TURUL_SQLITE, Extension;
            lists_its_tools: run;
            a_task_reports_its_steps: run;
            a_detached_task_is_followed_by_id: run;
            cancel_ends_a_task: run;
            cancel_is_refused_where_not_offered: na "turul offers tasks/cancel (cancel_ends_a_task runs)";
            a_question_is_answered: run;
            a_declined_question_reaches_the_tool: run;
            an_unknown_task_is_refused: run;
            sampling_is_answered: na "the turul peer serves slow_compute, count_to and echo: nothing asks for a sampling";
            progress_reaches_the_caller: na "turul's count_to asks a question half-way, which a plain call cannot answer here; its tasks report no progress";
            no_tasks_on_this_wire: na "turul offers tasks on 2026-07-28, the only wire it speaks";
        }
        $crate::__peer_module! { $fe, $make, ts_streamable_http_on_auto_wire, TS_STREAMABLE_HTTP, Auto;
            lists_its_tools: run;
            a_task_reports_its_steps: run;
            a_detached_task_is_followed_by_id: run;
            cancel_ends_a_task: run;
            cancel_is_refused_where_not_offered: na "simpleStreamableHttp.js offers tasks/cancel (cancel_ends_a_task runs)";
            a_question_is_answered: na "simpleStreamableHttp.js's task tool `delay` asks no question";
            a_declined_question_reaches_the_tool: na "simpleStreamableHttp.js's task tool `delay` asks no question";
            an_unknown_task_is_refused: run;
            sampling_is_answered: na "simpleStreamableHttp.js has no tool that asks for a sampling";
            progress_reaches_the_caller: na "simpleStreamableHttp.js has no tool that reports progress";
            no_tasks_on_this_wire: na "simpleStreamableHttp.js offers tasks on 2025-11-25, the wire auto picks";
        }
        $crate::__peer_module! { $fe, $make, ts_task_interactive_on_auto_wire, TS_TASK_INTERACTIVE, Auto;
            lists_its_tools: run;
            a_task_reports_its_steps: na "simpleTaskInteractive.js's two task tools each ask the client mid-task and report no status message; the question and sampling scenarios follow them to their end";
            a_detached_task_is_followed_by_id: na "simpleTaskInteractive.js's two task tools each ask the client mid-task: a detached one waits for an answer nobody gives";
            cancel_ends_a_task: na "simpleTaskInteractive.js does not offer tasks/cancel (cancel_is_refused_where_not_offered runs)";
            cancel_is_refused_where_not_offered: run;
            a_question_is_answered: run;
            a_declined_question_reaches_the_tool: run;
            an_unknown_task_is_refused: run;
            sampling_is_answered: run;
            progress_reaches_the_caller: na "simpleTaskInteractive.js has no tool that reports progress";
            no_tasks_on_this_wire: na "simpleTaskInteractive.js offers tasks on 2025-11-25, the wire auto picks";
        }
    };
}

/// One peer and wire of [`peer_suite!`](crate::peer_suite!): a module of cells.
#[doc(hidden)]
#[macro_export]
macro_rules! __peer_module {
    ($fe:ident, $make:path, $module:ident, $peer:ident, $wire:ident;
     $($scenario:ident : $kind:ident $($reason:literal)?;)*) => {
        mod $module {
            $( $crate::__peer_cell! { $fe, $make, $peer, $wire, $scenario, $kind $($reason)? } )*
        }
    };
}

/// One cell of [`peer_suite!`](crate::peer_suite!): a test, or an ignored one with its
/// reason.
#[doc(hidden)]
#[macro_export]
macro_rules! __peer_cell {
    ($fe:ident, $make:path, $peer:ident, $wire:ident, $scenario:ident, run) => {
        #[test]
        fn $scenario() {
            let peer = &$crate::peer_suite::$peer;
            let Some(running) = peer.start() else { return };
            $crate::peer_suite::block_on($crate::peer_suite::scenarios::$scenario(
                &$make(),
                peer,
                &running.at,
                $crate::peer_suite::Wire::$wire,
            ));
        }
    };
    (cli, $make:path, $peer:ident, $wire:ident, $scenario:ident, cli_na $reason:literal) => {
        $crate::__peer_cell! { cli, $make, $peer, $wire, $scenario, na $reason }
    };
    ($fe:ident, $make:path, $peer:ident, $wire:ident, $scenario:ident, cli_na $reason:literal) => {
        $crate::__peer_cell! { $fe, $make, $peer, $wire, $scenario, run }
    };
    ($fe:ident, $make:path, $peer:ident, $wire:ident, $scenario:ident, na $reason:literal) => {
        // Listed, not run: `cargo test` prints "ignored, <reason>". There is nothing to
        // run, so `--include-ignored` passes it.
        #[test]
        #[ignore = $reason]
        fn $scenario() {}
    };
}
