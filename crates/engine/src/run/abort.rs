//! What keeps a job's work from taking its job down: [`Guarded`] catches its panics,
//! and [`AbortState`] (with its handle, [`WorkAbort`]) stops it. Either way the work
//! ends and the job goes on to record how (see `job`).
//!
//! The abort state lives in the job's handover, which every running task has anyway,
//! rather than in an allocation of its own (what `futures::future::Abortable` costs).

use futures::future::Aborted;
use futures::task::AtomicWaker;
use futures::FutureExt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

/// Whether a job's work is to stop, and the job's waker to tell it.
#[derive(Default)]
pub(crate) struct AbortState {
    aborted: AtomicBool,
    waker: AtomicWaker,
}

impl AbortState {
    /// Polls `work` unless it was aborted: `Err(Aborted)` once it was, as an
    /// `Abortable` would say; the job is woken when it is.
    pub(crate) fn poll<W: Future + Unpin>(
        &self,
        work: &mut W,
        cx: &mut Context<'_>,
    ) -> Poll<Result<W::Output, Aborted>> {
        if self.aborted.load(Ordering::Acquire) {
            return Poll::Ready(Err(Aborted));
        }
        if let Poll::Ready(output) = Pin::new(work).poll(cx) {
            return Poll::Ready(Ok(output));
        }
        self.waker.register(cx.waker());
        // Aborted between the first check and the registration: no wake-up comes.
        if self.aborted.load(Ordering::Acquire) {
            return Poll::Ready(Err(Aborted));
        }
        Poll::Pending
    }
}

/// Stops a job's work, not the recording of its end: what an `AbortHandle` is to an
/// `Abortable`, for the state in the job's handover. Cheap to clone.
#[derive(Clone)]
pub(crate) struct WorkAbort(Arc<dyn AbortSite>);

/// What holds a job's [`AbortState`] (the job's handover): named by a trait so that
/// this module, which the executor uses, does not depend on the job's module, which
/// uses the executor.
pub(crate) trait AbortSite: Send + Sync + 'static {
    /// The abort state of the job.
    fn abort_state(&self) -> &AbortState;
}

impl WorkAbort {
    /// The abort handle of the job sharing `site` (its handover).
    pub(crate) fn of<S: AbortSite>(site: &Arc<S>) -> Self {
        WorkAbort(Arc::clone(site) as Arc<dyn AbortSite>)
    }

    /// Stops the work: it is not polled again, and the job goes on to its end.
    pub(crate) fn abort(&self) {
        let state = self.0.abort_state();
        state.aborted.store(true, Ordering::Release);
        state.waker.wake();
    }

    /// Whether [`WorkAbort::abort`] was called.
    pub(crate) fn is_aborted(&self) -> bool {
        self.0.abort_state().aborted.load(Ordering::Acquire)
    }
}

/// Work as a job runs it: a panic, while making its future or in it, comes out as
/// the `Err` of a [`std::thread::Result`]. Smaller than an `Either` of the future and a
/// ready error (which would hold a whole outcome for the rare panic), so every running
/// task's job is too.
pub(crate) enum Guarded<W> {
    /// The work's future, its panics caught.
    Work(futures::future::CatchUnwind<AssertUnwindSafe<W>>),
    /// Making the future panicked: this, once.
    Panicked(Option<Box<dyn std::any::Any + Send>>),
}

impl<W: Future + Unpin> Guarded<W> {
    /// The work `make` returns, or its panic.
    pub(crate) fn new(make: impl FnOnce() -> W) -> Self {
        match std::panic::catch_unwind(AssertUnwindSafe(make)) {
            Ok(work) => Guarded::Work(AssertUnwindSafe(work).catch_unwind()),
            Err(panic) => Guarded::Panicked(Some(panic)),
        }
    }
}

impl<W: Future + Unpin> Future for Guarded<W> {
    type Output = std::thread::Result<W::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut *self {
            Guarded::Work(work) => Pin::new(work).poll(cx),
            Guarded::Panicked(panic) => Poll::Ready(Err(panic
                .take()
                .unwrap_or_else(|| Box::new("polled after the panic was reported")))),
        }
    }
}
