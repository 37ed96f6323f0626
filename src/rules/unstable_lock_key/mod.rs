//! IDEM006 unstable-lock-key: a host name, pod name, pid, random or clock value in the key or
//! name of a distributed lock. Every replica then takes a different lock, so the lock
//! excludes nobody.

use super::ctx::Ctx;
use crate::catalog::SourceKind;
use crate::coord::Coord;
use crate::facts::{Expr, ExprKind};
use crate::finding::{Finding, Label};
use crate::flow::Taint;
use crate::hash::HashSet;
use crate::project::{FnRef, walk_expr, walk_stmts};

use super::meta::{Need, Rule, RuleMeta};
use crate::finding::Severity;

/// IDEM006: what it is, how it is reported, what it needs.
pub static META: RuleMeta = RuleMeta {
    id: Rule::UnstableLockKey,
    code: CODE,
    name: "unstable-lock-key",
    summary: "A distributed lock's key contains a host name, pod name, pid, random or clock value, so every replica or run takes a different lock",
    severity: Severity::Error,
    default_enabled: true,
    doc: include_str!("IDEM006.md"),
    precision: "high",
    security_severity: "7.0",
    tags: &["correctness", "payments", "concurrency", "lock"],
    home: module_path!(),
    needs: &[Need::LockKeys],
};

pub const CODE: &str = "IDEM006";

pub fn check(ctx: &Ctx, co: &Coord, out: &mut Vec<Finding>) {
    let mut seen = HashSet::default();
    for k in co.lock_keys() {
        let Some(t) = co
            .flow
            .value_in(k.at, k.key)
            .or_else(|| field_value(co, k.at, k.key))
        else {
            continue;
        };
        // Reported where the value is made: in a helper, that is where it needs changing.
        let (at, span) = match &t.via {
            Some(v) => (v.at, v.span),
            None => (t.at, t.span),
        };
        if !seen.insert((at.unit, span)) {
            continue;
        }
        let (kind, why) = match t.kind {
            SourceKind::Process => (
                "a per-process value",
                "it differs in every replica, so each pod takes its own lock and they all run",
            ),
            SourceKind::Random => (
                "a random value",
                "it is new on every run, so no two runs ever compete for the same lock",
            ),
            SourceKind::Time => (
                "a clock reading",
                "it differs between replicas and runs by milliseconds, so they never compete for the same lock",
            ),
        };
        let what = match &t.via {
            Some(v) => format!("`{}` (returned by `{}`)", v.what, v.callee),
            None => format!("`{}`", t.what),
        };
        let mut labels = Vec::new();
        if t.via.is_some() {
            labels.push(Label {
                unit: t.at.unit,
                span: t.span,
                message: "used in the lock key here".into(),
            });
        }
        if k.at.unit == t.at.unit && !k.call.contains(t.span) {
            labels.push(Label {
                unit: k.at.unit,
                span: first_line(co, k.at.unit, k.call),
                message: format!("the lock key of `{}`", k.api),
            });
        }
        out.push(Finding {
            code: CODE,
            unit: at.unit,
            span,
            label: format!("{kind} in a lock key"),
            message: format!(
                "the key of a distributed lock (`{}`) contains {what}, {kind}: {why}",
                k.api
            ),
            labels,
            note: Some("host names, pod names and pids identify the lock's *owner*; they belong in the lock's value, never in its key".into()),
            help: "derive the lock key from what must not run twice: the job name and the billing period (e.g. `\"monthly-billing:\" + YearMonth.now()`), identical in every replica".into(),
            symbol: ctx.symbol(at),
            origin: None,
            inferred: None,
        });
    }
}

fn first_line(co: &Coord, unit: usize, span: crate::facts::Span) -> crate::facts::Span {
    let text = co.p.units[unit].src.slice(span);
    let first = text.lines().next().unwrap_or("").trim_end();
    crate::facts::Span::new(span.start, span.start + first.len())
}

/// A per-process value held in a field the key reads: `private val host = System.getenv(..)`,
/// `this.node = InetAddress.getLocalHost().getHostName()` in a constructor, also through locals
/// and getters (`"sweep-" + nodeName.get()`).
fn field_value(co: &Coord, at: FnRef, key: &Expr) -> Option<Taint> {
    field_value_at(co, at, key, 0)
}

fn field_value_at(co: &Coord, at: FnRef, key: &Expr, depth: u32) -> Option<Taint> {
    if depth > 4 {
        return None;
    }
    let p = co.p;
    let mut names: Vec<String> = Vec::new();
    let mut locals: Vec<&Expr> = Vec::new();
    let mut calls: Vec<&Expr> = Vec::new();
    walk_expr(key, &mut |x| match &x.kind {
        ExprKind::Name(n) => {
            if let Some(b) = crate::coord::local_binding(p, at, n, x.span.start) {
                locals.extend(b.init.as_ref());
            } else if !p
                .ancestors(at)
                .any(|a| p.func(a).params.iter().any(|q| q.name == *n))
            {
                names.push(n.to_string());
            }
        }
        ExprKind::Field { receiver, name } if matches!(&receiver.kind, ExprKind::Name(s) if s == "this" || s == "self") => {
            names.push(name.to_string())
        }
        ExprKind::Call { .. } => calls.push(x),
        _ => {}
    });
    for init in locals {
        if let Some(t) = co
            .flow
            .value_in(at, init)
            .or_else(|| field_value_at(co, at, init, depth + 1))
        {
            return Some(t);
        }
    }
    // Getters of project types: `nodeName.get()` returning a field set from the host name.
    for c in calls {
        if let ExprKind::Call {
            receiver,
            name,
            args,
        } = &c.kind
        {
            for t in co.flow.call_targets(at, receiver.as_deref(), name, args) {
                if t != at
                    && let Some(ret) = crate::coord::endpoints::returned_expr(p, t)
                    && let Some(found) = field_value_at(co, t, ret, depth + 1)
                {
                    return Some(found);
                }
            }
        }
    }
    let owner = p.enclosing_type(at)?;
    let ty = &p.units[at.unit].facts().types[owner];
    for n in names {
        if let Some(b) = ty.fields.iter().find(|b| b.name == n)
            && let Some(init) = &b.init
            && let Some(t) = co.flow.value_in(at, init)
        {
            return Some(t);
        }
        // Assigned in a constructor or initialiser.
        for &m in &ty.methods {
            let mf = FnRef {
                unit: at.unit,
                f: m,
            };
            let mut found = None;
            walk_stmts(&p.func(mf).body, &mut |x| {
                if found.is_none()
                    && let ExprKind::Assign { target, value, .. } = &x.kind
                    && match &target.kind {
                        ExprKind::Name(t) => *t == n,
                        ExprKind::Field { receiver, name } => {
                            *name == n
                                && matches!(&receiver.kind, ExprKind::Name(s) if s == "this" || s == "self")
                        }
                        _ => false,
                    }
                {
                    found = co.flow.value_in(mf, value);
                }
            });
            if found.is_some() {
                return found;
            }
        }
    }
    None
}
