//! Names as words: `createPaymentIntent` -> create, payment, intent; `charge_customer` ->
//! charge, customer. The coordination rules classify calls by the words of their names
//! (money-moving, lock-like, writes), as the catalogue lists them.

use crate::catalog::Catalog;

/// Lower-case words of an identifier (camelCase, PascalCase, snake_case, SCREAMING_CASE,
/// digits split off).
pub fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let boundary = !cur.is_empty()
            && ((c.is_uppercase()
                && (chars[i - 1].is_lowercase()
                    || chars[i - 1].is_ascii_digit()
                    || chars.get(i + 1).is_some_and(|n| n.is_lowercase())
                        && chars[i - 1].is_uppercase()))
                || (c.is_ascii_digit() != chars[i - 1].is_ascii_digit()));
        if boundary {
            out.push(std::mem::take(&mut cur));
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Could one of `name`'s words be among `stems`? Each word is a piece of the name, lower-cased:
/// an ASCII name with none of them in it (ignoring case) has no such word. (A non-ASCII letter
/// may lower-case to an ASCII one: such names are always looked at.)
fn may_have_word(stems: &aho_corasick::AhoCorasick, name: &str) -> bool {
    !name.is_ascii() || stems.is_match(name)
}

/// Is `w` in `list`? (Catalogue lists hold `String`s; names in the facts are `Text`.)
pub(crate) fn has(list: &[String], w: &str) -> bool {
    list.iter().any(|x| x == w)
}

/// Does a call named `name` (not a project function with a body) move money?
/// `chargeCustomer`, `createCharge`, `refund`, `payInvoice`, `createPaymentIntent`,
/// `transferFunds`; not `getCharge`, `recordCharge`, `billingPeriod`, `captureException`.
pub fn is_money_name(cat: &Catalog, name: &str) -> bool {
    if cat.money_calls.iter().any(|m| m == name) {
        return true;
    }
    if name.starts_with(|c: char| c.is_uppercase()) {
        // A type or constructor (`ChargeRequest(..)`).
        return false;
    }
    if !may_have_word(&cat.money_stems, name) {
        return false;
    }
    let m = &cat.coord.money;
    let w = words(name);
    let Some(first) = w.first() else {
        return false;
    };
    if has(&m.not_first, first) || w.iter().any(|x| has(&m.never_with, x)) {
        return false;
    }
    let verb_first = has(&m.actions, first) || has(&m.verbs, first) || has(&m.first_verbs, first);
    let qualified = |i: usize| !verb_first || i == 0 || i + 1 == w.len();
    if w.iter()
        .enumerate()
        .any(|(i, x)| has(&m.qualifiers, x) && qualified(i))
    {
        return false;
    }
    if w.len() == 2 && first == "transfer" && (w[1] == "to" || w[1] == "from") {
        // `InputStream.transferTo(out)`.
        return false;
    }
    let hits: Vec<&String> = w.iter().filter(|x| has(&m.verbs, x)).collect();
    if let [only] = hits[..] {
        // `retryableFailedCharges()`, `pendingPayouts()`: a plural at the end of a phrase that
        // starts with no verb names things (a query), not an action.
        let noun_phrase =
            w.len() > 1 && w.last() == Some(only) && only.ends_with('s') && !verb_first;
        return !noun_phrase;
    }
    if !hits.is_empty() {
        return true;
    }
    if has(&m.first_verbs, first) {
        return w.len() == 1 || w[1..].iter().any(|x| has(&m.first_verb_objects, x));
    }
    has(&m.actions, first) && w[1..].iter().any(|x| has(&m.objects, x))
}

/// Is `method` of the project interface `type_name`, which nothing in the project implements, a
/// money call by the port's name? `BillingGateway.collect`, `PaymentProcessor.process`,
/// `PspPort.submitPayment`; not `PaymentEventPublisher.send`, `BillingGateway.getInvoice`.
pub fn is_payment_port_call(cat: &Catalog, type_name: &str, method: &str) -> bool {
    let m = &cat.coord.money;
    let tw = words(type_name);
    let mw = words(method);
    let Some(first) = mw.first() else {
        return false;
    };
    tw.iter().any(|w| has(&m.port_words, w))
        && !tw
            .iter()
            .any(|w| has(&m.port_never, w) || has(&m.never_with, w))
        && has(&m.actions, first)
        && !mw.iter().any(|w| has(&m.never_with, w))
}

/// Is a call named `name` a distributed lock, claim or leader check by its name?
/// `tryLock`, `acquireLock`, `executeWithLock`, `claimRun`, `isLeader`; not `unlock`,
/// `releaseLock`, `block`, `clock`.
pub fn is_lock_name(cat: &Catalog, name: &str) -> bool {
    if cat.lock_apis.iter().any(|m| m == name) {
        return true;
    }
    if !may_have_word(&cat.lock_stems, name) {
        return false;
    }
    let w = words(name);
    // Releasing, and asking (`isLocked`, `getLockTimeout`), take nothing.
    if w.first().is_some_and(|f| {
        matches!(
            f.as_str(),
            "release"
                | "unlock"
                | "free"
                | "drop"
                | "is"
                | "has"
                | "get"
                | "check"
                | "was"
                | "should"
                | "can"
                | "find"
                | "count"
                | "list"
                | "log"
                | "to"
        )
    }) && !w.iter().any(|x| x == "leader" || x == "leadership")
    {
        return false;
    }
    // A money name wins (`chargeLeasePayment`).
    !is_money_name(cat, name) && w.iter().any(|x| has(&cat.coord.locks.words, x))
}

/// Is a name (a field or variable read in a condition) a leader flag? `isLeader`, `leader`,
/// `hasLeadership`.
pub fn is_leader_name(name: &str) -> bool {
    words(name)
        .iter()
        .any(|w| w == "leader" || w == "leadership")
}

/// Words that start a write that records something as done: `markCompleted`, `saveInvoice`,
/// `setPaid`, `recordCharge`, `update_status`, `insert_run`.
pub const WRITE_WORDS: &[&str] = &[
    "mark", "set", "save", "record", "update", "insert", "complete", "finish", "put", "store",
    "persist", "upsert", "add", "close", "finalize", "flag", "register",
];

pub fn is_write_name(name: &str) -> bool {
    words(name)
        .first()
        .is_some_and(|f| WRITE_WORDS.contains(&f.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_identifiers() {
        assert_eq!(
            words("createPaymentIntent"),
            ["create", "payment", "intent"]
        );
        assert_eq!(words("charge_customer"), ["charge", "customer"]);
        assert_eq!(words("HTTPClient"), ["http", "client"]);
        assert_eq!(words("v1Charges"), ["v", "1", "charges"]);
        assert_eq!(words("MAX_LOCK_TIME"), ["max", "lock", "time"]);
    }

    #[test]
    fn money_names() {
        let cat = Catalog::builtin();
        for n in [
            "charge",
            "chargeCustomer",
            "createCharge",
            "refund",
            "issueRefund",
            "payInvoice",
            "createPaymentIntent",
            "confirmPaymentIntent",
            "transferFunds",
            "billCustomer",
            "capturePayment",
            "create_payout",
            "processPayment",
            "retryInvoicePayment",
            "retryFailedCharges",
            "settleCharges",
            "chargeDueInvoices",
            "refundPendingOrders",
            "settle_pending_payouts",
            "processPendingPayments",
            "payOutEligibleSellers",
        ] {
            assert!(is_money_name(cat, n), "{n}");
        }
        for n in [
            "getCharge",
            "findCharges",
            "retryableFailedCharges",
            "pendingPayouts",
            "overdueRefunds",
            "listRefunds",
            "recordCharge",
            "markBilled",
            "billingPeriod",
            "captureException",
            "captureAll",
            "transferTo",
            "transferAll",
            "payload",
            "ChargeRequest",
            "createSetupIntent",
            "createPaymentMethod",
            "runBilling",
            "createCustomer",
            "refundPending",
            "chargeDue",
            "dueCharges",
            "pendingRefundCount",
            "openPayouts",
            "failedCharges",
            "countDueInvoices",
            "payAccountVerification",
            "chargeValidation",
        ] {
            assert!(!is_money_name(cat, n), "{n}");
        }
    }

    #[test]
    fn lock_names() {
        let cat = Catalog::builtin();
        for n in [
            "tryLock",
            "acquireLock",
            "executeWithLock",
            "claimRun",
            "isLeader",
            "try_lock",
            "withLock",
        ] {
            assert!(is_lock_name(cat, n), "{n}");
        }
        for n in [
            "unlock",
            "releaseLock",
            "block",
            "clock",
            "charge",
            "leaderboard",
        ] {
            assert!(!is_lock_name(cat, n), "{n}");
        }
    }
}
