//! The value flow's sinks: where a value becomes an idempotency key (a header, a parameter, a
//! constructor argument, a binding named like a key), and the header and error helpers they use.

use super::*;

impl<'p> Ev<'_, 'p> {
    pub(super) fn is_header_name_ctor(&self, name: &str) -> bool {
        self.flow
            .cat
            .sinks
            .header_name_constructors
            .iter()
            .any(|c| c == simple_name(name))
    }

    /// A header / attribute / map-key name that carries an idempotency key. Only name-like
    /// literals count (`"Idempotency-Key"`, `"stripe.idempotency_key"`), not log messages
    /// that mention one (`"missing Idempotency-Key for {}"`).
    pub(super) fn is_key_name_expr(&self, e: &Expr) -> bool {
        self.literal_name(e)
            .is_some_and(|n| self.flow.cat.is_key_name_literal(&n))
    }

    pub(super) fn push_flow(
        &mut self,
        value: &Expr,
        sink: Span,
        sink_kind: SinkKind,
        out: &mut Vec<KeyFlow>,
    ) {
        if let (Some(names), ExprKind::Name(n)) = (&mut self.sink_names, &value.kind) {
            names.push(n.to_string());
        }
        let taint = match &value.kind {
            ExprKind::Lambda(id) => self.lambda_value(*id),
            _ => self.eval(value),
        };
        if let Some(taint) = taint {
            out.push(KeyFlow {
                taint,
                sink,
                sink_fn: self.at,
                kind: FlowKind::Direct,
                sink_kind,
            });
        }
    }

    pub(super) fn let_sink(&mut self, b: &Binding, out: &mut Vec<KeyFlow>) {
        if let Some(init) = &b.init
            && self.flow.cat.is_key_variable(&b.name)
        {
            self.push_flow(init, b.name_span, SinkKind::Named, out);
        }
    }

    /// Sinks in one expression (not its children; the walk visits those).
    pub(super) fn expr_sinks(&mut self, e: &Expr, out: &mut Vec<KeyFlow>) {
        let cat = self.flow.cat;
        match &e.kind {
            ExprKind::Assign { target, value, .. } => {
                let kind = match &target.kind {
                    ExprKind::Name(n) | ExprKind::Field { name: n, .. } => {
                        cat.is_key_variable(n).then_some(SinkKind::Named)
                    }
                    // `request.headers["Idempotency-Key"] = v`, `headers[IDEMPOTENCY_KEY] = v`
                    ExprKind::Index { index, .. } => {
                        self.is_key_name_expr(index).then_some(SinkKind::Request)
                    }
                    _ => None,
                };
                if let Some(kind) = kind {
                    self.push_flow(value, target.span, kind, out);
                }
            }
            ExprKind::Call {
                receiver,
                name,
                args,
            } => {
                // A library's own key slot (an SDK option setter, a named argument of a
                // library call) is on a request; a project type's is only named like one.
                let lib_kind = |ev: &Self| {
                    if ev.library_object(receiver.as_deref(), name) {
                        SinkKind::Request
                    } else {
                        SinkKind::Named
                    }
                };
                if args.iter().any(|a| {
                    a.name
                        .as_deref()
                        .is_some_and(|n| cat.is_key_variable(n) || cat.is_key_name(n))
                }) {
                    let kind = lib_kind(self);
                    self.args_sinks(args, kind, out);
                } else {
                    self.args_sinks(args, SinkKind::Named, out);
                }
                // Kotlin `"Idempotency-Key" to key`.
                if name == "to"
                    && receiver
                        .as_deref()
                        .is_some_and(|r| self.is_key_name_expr(r))
                    && let Some(a) = args.first()
                {
                    self.push_flow(&a.value, a.value.span, SinkKind::Request, out);
                }
                // `headers.computeIfAbsent("Idempotency-Key") { .. }`,
                // `headers.entry("idempotency-key").or_insert_with(|| ..)`: a key invented when
                // the header is missing (a memoiser on a header, not a per-id cache).
                if cat.is_memoizer(name) {
                    let key_arg = match receiver.as_deref().map(|r| &r.kind) {
                        Some(ExprKind::Call {
                            name: n, args: a, ..
                        }) if n == "entry" => a.first(),
                        _ => args.first(),
                    };
                    if key_arg.is_some_and(|a| self.is_key_name_expr(&a.value))
                        && let Some(l) = args
                            .iter()
                            .find(|a| matches!(a.value.kind, ExprKind::Lambda(_)))
                    {
                        self.push_flow(&l.value, l.value.span, SinkKind::Request, out);
                    }
                }
                if cat.is_key_setter(name)
                    && let Some(a) = args.iter().rfind(|a| a.name.is_none())
                {
                    let kind = lib_kind(self);
                    self.push_flow(&a.value, a.value.span, kind, out);
                }
                // A payment SDK's positional key: `requestPayment(request, key)`, Kotlin
                // `CreatePaymentRequest.Builder(source, key)`.
                if let Some(i) =
                    cat.sdk_key_arg(name, || receiver.as_deref().and_then(|r| r.path_text()))
                    && let Some(a) = args.get(i)
                {
                    self.push_flow(&a.value, a.value.span, SinkKind::Request, out);
                }
                self.param_sinks(receiver.as_deref(), name, args, out);
                // Helpers that put a fresh key in a sink themselves.
                let var = match (receiver.as_deref().map(|r| &r.kind), name.as_str()) {
                    (Some(ExprKind::Name(v)), "get" | "invoke" | "call" | "apply" | "run") => {
                        v.as_str()
                    }
                    _ => name.as_str(),
                };
                let gate = self.flow.sink_gate();
                let may_set =
                    gate.may_set_key(self.at.unit, name) || gate.may_set_key(self.at.unit, var);
                let rt = receiver
                    .as_deref()
                    .filter(|_| may_set)
                    .and_then(|r| self.receiver_type(r));
                let inner = may_set
                    .then(|| {
                        self.flow.callee_summary(
                            self.at,
                            receiver.as_deref(),
                            rt.as_deref(),
                            name,
                            args,
                            |f, c| f.sets_fresh_key(c),
                        )
                    })
                    .flatten()
                    .or_else(|| {
                        // A factory lambda held in a local: `producerFactory.get()`,
                        // `makeRequest()`, a Kotlin extension lambda value `chain.stampKey()`.
                        if !may_set {
                            return None;
                        }
                        let lambda = self.flow.local_lambda(self.at, var)?;
                        self.flow.sets_fresh_key(lambda)
                    });
                let inner =
                    inner.or_else(|| self.omitted_fresh_default(receiver.as_deref(), name, args));
                if let Some(inner) = inner {
                    out.push(KeyFlow {
                        taint: self.through_call(e, name, inner),
                        sink: e.span,
                        sink_fn: self.at,
                        kind: FlowKind::HelperSetsKey,
                        sink_kind: SinkKind::Request,
                    });
                }
            }
            ExprKind::New { ty, args, .. } => {
                // Fields of a library's struct or request (`stripe::CreateRefund { .. }`) are
                // on a request; a project type's are only named like a key.
                let kind = if is_library_type(self.flow.p, ty) {
                    SinkKind::Request
                } else {
                    SinkKind::Named
                };
                self.args_sinks(args, kind, out);
                self.constructor_sinks(ty, args, out);
                // `new CreatePaymentRequest.Builder(source, key)`.
                let (owner, last) = match ty.rsplit_once('.') {
                    Some((o, l)) => (Some(o), l),
                    None => (None, ty.as_str()),
                };
                if let Some(i) = cat.sdk_key_arg(last, || owner)
                    && let Some(a) = args.get(i)
                {
                    self.push_flow(&a.value, a.value.span, SinkKind::Request, out);
                }
            }
            ExprKind::Macro { args, .. } => {
                self.args_sinks(args, SinkKind::Request, out);
            }
            // A name/value pair for a list of headers: Rust `("Idempotency-Key", key)`.
            ExprKind::Other(parts)
                if parts.len() == 2
                    && self.is_key_name_expr(&parts[0])
                    && !self.is_key_name_expr(&parts[1]) =>
            {
                self.push_flow(&parts[1], parts[1].span, SinkKind::Request, out);
            }
            _ => {}
        }
    }

    /// `header("Idempotency-Key", v)`, `Map.of("idempotency_key", v)`, named arguments
    /// `idempotencyKey = v`, struct fields, `json!({"idempotency_key": v})`.
    /// `named` is what a named argument called like a key is: on a request for a library's
    /// call or struct, only named for a project type's.
    pub(super) fn args_sinks(&mut self, args: &[Arg], named: SinkKind, out: &mut Vec<KeyFlow>) {
        let cat = self.flow.cat;
        for (i, a) in args.iter().enumerate() {
            if let Some(n) = &a.name {
                if cat.is_key_variable(n) || cat.is_key_name(n) {
                    self.push_flow(&a.value, a.value.span, named, out);
                }
                continue;
            }
            if args.len() >= 2
                && self.is_key_name_expr(&a.value)
                && let Some(v) = args.get(i + 1)
                && !self.is_key_name_expr(&v.value)
            {
                self.push_flow(&v.value, v.value.span, SinkKind::Request, out);
            }
        }
    }

    /// Positional arguments bound to a project function's key parameter
    /// (`createCharge(@Header("Idempotency-Key") String key, ..)`, `fun charge(idempotencyKey: String)`).
    pub(super) fn param_sinks(
        &mut self,
        receiver: Option<&Expr>,
        name: &str,
        args: &[Arg],
        out: &mut Vec<KeyFlow>,
    ) {
        if args.is_empty()
            || !(self.flow.p.has_key_params(name)
                || self
                    .flow
                    .p
                    .header_params(name)
                    .iter()
                    .any(|h| self.flow.cat.is_key_name(h)))
        {
            return;
        }
        let cat = self.flow.cat;
        let rt = receiver.and_then(|r| self.receiver_type(r));
        let candidates: Vec<FnRef> =
            if receiver.is_none() && name.starts_with(|c: char| c.is_uppercase()) {
                // A Kotlin constructor call `PayoutRequest(..)`.
                self.flow.p.resolve(name, args.len()).collect()
            } else {
                self.flow
                    .callees(self.at, receiver, rt.as_deref(), name, args)
                    .0
            };
        // The parameter, and whether the helper is known to put it on a request (a header
        // annotation, or a header call it makes with it) rather than only named like a key.
        let mut key_idx: Option<(usize, SinkKind)> = None;
        for c in candidates {
            let f = self.flow.p.func(c);
            let params: Vec<_> = f.params.iter().filter(|p| p.name != "self").collect();
            for (i, p) in params.iter().enumerate() {
                let by_annotation = p.annotations.iter().any(|a| {
                    matches!(
                        a.name.as_str(),
                        "Header" | "RequestHeader" | "HeaderParam" | "Param"
                    ) && a.args.iter().any(|x| self.is_key_name_expr(&x.value))
                });
                if by_annotation {
                    key_idx = Some((i, SinkKind::Request));
                    break;
                }
                if cat.is_key_variable(&p.name) {
                    key_idx = Some((i, SinkKind::Named));
                    break;
                }
            }
            if key_idx.is_some() {
                break;
            }
            if let Some(i) = self.flow.key_param_of(c) {
                key_idx = Some((i, SinkKind::Request));
                break;
            }
        }
        if let Some((i, kind)) = key_idx
            && let Some(a) = args.get(i).filter(|a| a.name.is_none())
        {
            self.push_flow(&a.value, a.value.span, kind, out);
        }
    }
    /// A call that leaves out a key parameter whose default is fresh
    /// (`PayoutCommand(accountId, amount)` with `idempotencyKey: String = UUID..`).
    pub(super) fn omitted_fresh_default(
        &mut self,
        receiver: Option<&Expr>,
        name: &str,
        args: &[Arg],
    ) -> Option<Taint> {
        let p = self.flow.p;
        let candidates: Vec<FnRef> =
            if receiver.is_none() && name.starts_with(|c: char| c.is_uppercase()) {
                p.resolve(name, args.len()).collect()
            } else {
                let rt = receiver.and_then(|r| self.receiver_type(r));
                self.flow
                    .callees(self.at, receiver, rt.as_deref(), name, args)
                    .0
            };
        let positional = args.iter().filter(|a| a.name.is_none()).count();
        for c in candidates {
            let params: Vec<_> = p
                .func(c)
                .params
                .iter()
                .filter(|x| x.name != "self")
                .collect();
            for (i, param) in params.iter().enumerate() {
                let supplied = i < positional
                    || args
                        .iter()
                        .any(|a| a.name.as_deref() == Some(param.name.as_str()));
                if supplied
                    || param.default.is_none()
                    || !self.flow.cat.is_key_variable(&param.name)
                {
                    continue;
                }
                if let Some(t) = self
                    .flow
                    .key_flows(c)
                    .into_iter()
                    .find(|k| k.kind == FlowKind::ParamDefault && k.sink == param.span)
                {
                    return Some(t.taint);
                }
            }
        }
        None
    }

    /// `new PayoutRequest(UUID.randomUUID().toString(), amount)`: the argument bound to a
    /// constructor parameter or record component named like a key.
    pub(super) fn constructor_sinks(&mut self, ty: &str, args: &[Arg], out: &mut Vec<KeyFlow>) {
        if args.is_empty() || args.iter().any(|a| a.name.is_some()) {
            return;
        }
        let ty = simple_name(ty);
        let p = self.flow.p;
        let cat = self.flow.cat;
        let mut names: Option<Vec<String>> = None;
        for c in p.resolve(ty, args.len()) {
            if p.func(c).kind == crate::facts::FnKind::Constructor {
                names = Some(p.func(c).params.iter().map(|x| x.name.clone()).collect());
                break;
            }
        }
        if names.is_none() {
            names = p.record_components(ty, args.len());
        }
        let Some(names) = names else { return };
        if let Some(i) = names.iter().position(|n| cat.is_key_variable(n)) {
            let a = &args[i];
            self.push_flow(&a.value, a.value.span, SinkKind::Named, out);
        }
    }
}

pub(super) fn is_header_getter(name: &str) -> bool {
    matches!(
        name,
        "header"
            | "getHeader"
            | "getFirstHeader"
            | "getLastHeader"
            | "get"
            | "getFirst"
            | "getHeaderString"
            | "firstValue"
            | "getAttribute"
            | "attribute"
            | "tag"
            | "headers"
    )
}

/// Calls whose lambda / argument builds an error for the missing case.
pub(super) fn is_error_path(name: &str) -> bool {
    matches!(
        name,
        "orElseThrow"
            | "ok_or_else"
            | "ok_or"
            | "map_err"
            | "context"
            | "with_context"
            | "expect"
            | "requireNotNull"
            | "checkNotNull"
            | "getOrThrow"
    )
}

/// `IllegalStateException`, `MissingKeyError`: constructing an error is not making a value.
pub(super) fn is_error_type(name: &str) -> bool {
    let n = simple_name(name);
    n.starts_with(|c: char| c.is_uppercase())
        && (n.ends_with("Exception") || n.ends_with("Error") || n.ends_with("Throwable"))
}

pub(super) fn is_header_setter(name: &str) -> bool {
    matches!(
        name,
        "header"
            | "addHeader"
            | "setHeader"
            | "putHeader"
            | "set"
            | "add"
            | "append"
            | "insert"
            | "put"
            | "attribute"
            | "setAttribute"
            | "tag"
            | "headers"
    )
}

/// A type written `t` (`RequestOptions`, `CreatePaymentRequest.Builder`, `stripe::CreateRefund`)
/// that no project type declares, by its simple name or by its outer type's.
pub(super) fn is_library_type(p: &Project, t: &str) -> bool {
    let first = t.split(['.', ':', '<']).next().unwrap_or(t);
    p.types_named(simple_name(t)).is_empty() && p.types_named(first).is_empty()
}
