//! Every JSON-RPC error code mcp-tasks sends, named once. Handlers refer to these
//! constants, never to bare numbers, so a grep finds every place a code is produced.

/// Invalid JSON was received (the body could not be parsed at all).
pub const PARSE_ERROR: i64 = -32700;
/// The JSON is not a valid JSON-RPC 2.0 request object (wrong `jsonrpc`, missing
/// `method`, a batch array, ...).
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist, or (2025-11-25 tasks) a tool's `taskSupport` forbids the
/// way it was called.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters: wrong types, missing fields, unknown or expired task ids,
/// bad cursors, cancelling a terminal task.
pub const INVALID_PARAMS: i64 = -32602;
/// The server failed in a way that is not the caller's fault.
pub const INTERNAL_ERROR: i64 = -32603;
/// A request arrived on a session that has not finished `initialize`.
pub const SERVER_NOT_INITIALIZED: i64 = -32002;
/// A resource limit was hit (body too large, quota). Server-defined range.
pub const LIMIT_EXCEEDED: i64 = -32000;
/// The request was cancelled by the client (`notifications/cancelled`) or the work was
/// interrupted; used as the stored error of a cancelled synchronous call.
pub const REQUEST_CANCELLED: i64 = -32800;
/// A request the server was waiting on got no answer in time (an input request of a
/// task). Server-defined range.
pub const REQUEST_TIMEOUT: i64 = -32001;
/// Tasks extension: the `Mcp-Method` / `Mcp-Name` headers disagree with the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// Tasks extension: the client did not declare a capability the call needs.
pub const MISSING_CAPABILITY: i64 = -32021;
/// A `tools/call` the server's Cedar policies refuse: a `forbid` applies, or no
/// `permit` does. `data` names the deciding policies (`policies`) and the `reason`.
/// Server-defined range.
pub const FORBIDDEN_BY_POLICY: i64 = -32030;
/// 2026-07-28 stateless wire: the request names a protocol version this server does
/// not speak.
pub const UNSUPPORTED_VERSION: i64 = -32022;
