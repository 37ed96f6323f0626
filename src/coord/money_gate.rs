//! The answer of the money gate (`Coord::money_gate`, found in `money_callers.rs`): which
//! functions may reach money.

use crate::hash::HashSet;
use crate::project::FnRef;

pub struct MoneyGate {
    /// The functions whose walk may reach money. Empty when the gate is off.
    member: HashSet<FnRef>,
    /// The units those functions are in.
    units: HashSet<usize>,
    /// Off (`--exhaustive`): every function may.
    open: bool,
}

impl MoneyGate {
    /// The gate off: every function may reach money.
    pub fn open() -> MoneyGate {
        MoneyGate {
            member: HashSet::default(),
            units: HashSet::default(),
            open: true,
        }
    }

    /// May `f`'s walk, or a walk over code written in `f`, reach money?
    pub fn may_reach(&self, f: FnRef) -> bool {
        self.open || self.member.contains(&f)
    }

    /// May some function of unit `u` reach money?
    pub fn may_reach_in(&self, u: usize) -> bool {
        self.open || self.units.contains(&u)
    }

    /// Is the gate off (every function may reach money)?
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// The functions that may reach money (none when the gate is off), in no order.
    pub fn members(&self) -> impl Iterator<Item = FnRef> + '_ {
        self.member.iter().copied()
    }

    /// Can nothing in the project reach money?
    pub fn is_empty(&self) -> bool {
        !self.open && self.member.is_empty()
    }

    /// The functions in `member` may reach money.
    pub(super) fn new(member: HashSet<FnRef>) -> MoneyGate {
        MoneyGate {
            units: member.iter().map(|f| f.unit).collect(),
            member,
            open: false,
        }
    }
}
