//! What the ordered walk finds first on a path: nothing, a guard, or money moving, and where.

use crate::facts::Span;
use crate::project::FnRef;

/// Where something happened: function, span, source text.
#[derive(Clone, Debug)]
pub struct Loc {
    pub at: FnRef,
    pub span: Span,
    pub what: String,
}

/// The first decisive thing on a path.
#[derive(Clone, Debug)]
pub enum Reach {
    Nothing,
    Guarded(Loc),
    /// Money moves: where, and the calls leading there (outermost first). `by_name`: known
    /// only from the called method's name (`chargeCustomer`), not from an SDK call or a POST to
    /// a payment endpoint; such evidence is followed only a few calls deep.
    Money {
        at: Loc,
        path: Vec<Loc>,
        by_name: bool,
    },
}
