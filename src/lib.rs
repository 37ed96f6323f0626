//! idemlint: finds code that makes payment APIs charge a customer twice.
pub mod facts;
pub mod lang;
