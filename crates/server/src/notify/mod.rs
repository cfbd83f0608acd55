//! Notifications to clients: engine events routed to the sessions that should see them
//! (`routing`). The messages themselves are built in [`crate::messages`].

pub(crate) mod routing;
