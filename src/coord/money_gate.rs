//! The answer of the money gate (`Coord::money_gate`, found in `money_callers.rs`): which
//! functions may reach money.

use crate::project::FnRef;

pub struct MoneyGate {
    /// Per unit, per function: may its walk reach money? Empty when the gate is off.
    member: Vec<Vec<bool>>,
    /// Off (`--exhaustive`): every function may.
    open: bool,
}

impl MoneyGate {
    /// The gate off: every function may reach money.
    pub fn open() -> MoneyGate {
        MoneyGate {
            member: Vec::new(),
            open: true,
        }
    }

    /// May `f`'s walk, or a walk over code written in `f`, reach money?
    pub fn may_reach(&self, f: FnRef) -> bool {
        self.open
            || self
                .member
                .get(f.unit)
                .and_then(|m| m.get(f.f))
                .copied()
                .unwrap_or(true)
    }

    /// Can nothing in the project reach money?
    pub fn is_empty(&self) -> bool {
        !self.open && self.member.iter().all(|m| !m.iter().any(|x| *x))
    }

    /// The functions marked `true` may reach money (per unit, per function).
    pub(super) fn new(member: Vec<Vec<bool>>) -> MoneyGate {
        MoneyGate {
            member,
            open: false,
        }
    }
}
