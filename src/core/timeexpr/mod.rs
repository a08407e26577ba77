//! Time expressions in search queries and record texts.

pub(crate) mod calendar;
