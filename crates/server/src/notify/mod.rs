//! Notifications to clients: engine events routed to the sessions that should see them
//! (`routing`) and the notification messages built from them (`messages`).

pub(crate) mod messages;
pub(crate) mod routing;
