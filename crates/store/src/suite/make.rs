//! Test plumbing: what a `$make` of [`store_suite!`](crate::store_suite) may return.

use crate::TaskStore;
use std::any::Any;
use std::sync::Arc;

/// What must outlive a case's store: a temporary directory, a test schema to drop.
pub type Guard = Box<dyn Any + Send>;

/// What a suite `$make` returns: a store, with what must outlive it or not, or `None`
/// to skip the case.
///
/// Why a pair and not a wrapping store: a wrapper would have to forward every method of
/// [`TaskStore`] (a default left in place would answer for the backend), and each new
/// store method would have to be written there too.
pub trait SuiteStore {
    /// The store to run the case on, if any, and what to drop once the case ended.
    fn into_parts(self) -> Option<(Arc<dyn TaskStore>, Guard)>;
}

impl SuiteStore for Arc<dyn TaskStore> {
    fn into_parts(self) -> Option<(Arc<dyn TaskStore>, Guard)> {
        Some((self, Box::new(())))
    }
}

impl SuiteStore for Option<Arc<dyn TaskStore>> {
    fn into_parts(self) -> Option<(Arc<dyn TaskStore>, Guard)> {
        self.and_then(SuiteStore::into_parts)
    }
}

impl<G: Send + 'static> SuiteStore for (Arc<dyn TaskStore>, G) {
    fn into_parts(self) -> Option<(Arc<dyn TaskStore>, Guard)> {
        Some((self.0, Box::new(self.1)))
    }
}

impl<G: Send + 'static> SuiteStore for Option<(Arc<dyn TaskStore>, G)> {
    fn into_parts(self) -> Option<(Arc<dyn TaskStore>, Guard)> {
        self.and_then(SuiteStore::into_parts)
    }
}
