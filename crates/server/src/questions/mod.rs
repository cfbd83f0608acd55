//! Questions and answers: everything a server asks of its client and waits for. A tool
//! asks through [`ask::AskClient`] (typed with [`elicit`]); the question travels inside
//! a task (`in_task`), on a plain call's own stream (`in_call`), or as a client-hosted
//! task (`client_hosted`); `outgoing` matches the client's answers to the requests
//! that asked them, and `reask` asks again after a refused answer.

pub mod ask;
pub(crate) mod client_hosted;
pub mod elicit;
pub(crate) mod in_call;
pub(crate) mod in_task;
pub(crate) mod outgoing;
pub(crate) mod reask;
