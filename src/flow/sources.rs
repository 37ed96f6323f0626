//! The value flow's sources: where a fresh value (random, clock, a date pattern that changes
//! every period) comes from, as the evaluation ([`super::Ev`]) recognises it.

use super::*;

impl<'p> Ev<'_, 'p> {
    pub(super) fn source(&self, e: &Expr, kind: SourceKind) -> Option<Taint> {
        Some(Taint {
            span: e.span,
            at: self.at,
            kind,
            what: self.text(e.span),
            via: None,
        })
    }

    pub(super) fn is_period_conversion(&self, name: &str) -> bool {
        self.flow.cat.period.conversions.iter().any(|c| c == name)
    }

    pub(super) fn is_period_ctor(&self, receiver: Option<&Expr>, name: &str) -> bool {
        let ctors = &self.flow.cat.period.constructors;
        match receiver.and_then(|r| r.path_text()) {
            Some(p) => {
                ctors.iter().any(|c| c == simple_name(&p))
                    && matches!(name, "from" | "of" | "ofInstant" | "parse")
            }
            None => ctors.iter().any(|c| c == name),
        }
    }

    pub(super) fn is_date_formatter_ctor(&self, ty: &str) -> bool {
        matches!(
            ty,
            "SimpleDateFormat" | "DateTimeFormatter" | "FastDateFormat"
        )
    }

    /// A date/time pattern literal used to format: `ofPattern("yyyy-MM")`,
    /// `new SimpleDateFormat("yyyyMM")`, `now.format("%Y-%m")`, `ISO_LOCAL_DATE`.
    pub(super) fn date_pattern_in(&self, receiver: Option<&Expr>, args: &[Arg]) -> Option<String> {
        let field_inits: Vec<&Expr> = args
            .iter()
            .map(|a| &a.value)
            .chain(receiver)
            .filter_map(|e| match &e.kind {
                ExprKind::Name(n) | ExprKind::Field { name: n, .. } => self.field_init(n),
                _ => None,
            })
            .collect();
        let mut found = None;
        let mut look = |e: &Expr| {
            crate::project::walk_expr(e, &mut |x| {
                if found.is_some() {
                    return;
                }
                match &x.kind {
                    ExprKind::Call { name, args, .. }
                        if name == "ofPattern" || name == "forPattern" =>
                    {
                        found = args.first().and_then(|a| str_lit(&a.value));
                    }
                    ExprKind::New { ty, args, .. }
                        if self.is_date_formatter_ctor(simple_name(ty)) =>
                    {
                        found = args.first().and_then(|a| str_lit(&a.value));
                    }
                    ExprKind::Field { name, .. } | ExprKind::Name(name)
                        if self
                            .flow
                            .cat
                            .period
                            .date_constants
                            .iter()
                            .any(|c| c == name) =>
                    {
                        found = Some("yyyy-MM-dd".to_string());
                    }
                    ExprKind::Name(n) => {
                        if let Some(Val {
                            str_const: Some(s), ..
                        }) = self.env.get(n, x.span.start)
                            && (s.contains('%') || s.contains("yy") || s.contains("uu"))
                        {
                            found = Some(s.clone());
                        }
                    }
                    _ => {}
                }
            });
        };
        for a in args {
            look(&a.value);
        }
        if let Some(r) = receiver {
            look(r);
        }
        // A formatter held in a field or constant: `PERIOD.format(now)`.
        for init in field_inits {
            look(init);
        }
        if found.is_none() {
            // `now.format("%Y-%m")`: a direct literal argument when the receiver is the time.
            let recv_is_time = receiver.is_some_and(|r| {
                let mut ev = Ev {
                    flow: self.flow,
                    at: self.at,
                    env: self.env,
                    depth: self.depth,
                    sink_names: None,
                };
                ev.eval(r).is_some_and(|t| t.kind == SourceKind::Time)
            });
            if recv_is_time {
                found = args.iter().find_map(|a| str_lit(&a.value));
            }
        }
        found
    }

    /// `rng.nextLong()`, `new SecureRandom().nextInt()`, `thread_rng().gen::<u64>()`,
    /// `Alphanumeric.sample_string(&mut rng, 16)`.
    pub(super) fn is_random_method(&mut self, receiver: Option<&Expr>, name: &str) -> bool {
        let ro = &self.flow.cat.random_objects;
        let methods = if self.lang() == Lang::Rust {
            &ro.methods_rust
        } else {
            &ro.methods_jvm
        };
        if !methods.iter().any(|m| m == name) {
            return false;
        }
        let Some(r) = receiver else {
            return false;
        };
        self.is_random_object(r)
    }

    pub(super) fn is_random_object(&mut self, r: &Expr) -> bool {
        let ro = &self.flow.cat.random_objects;
        let is_type = |t: &str| ro.types.iter().any(|x| x == simple_name(t));
        match &r.kind {
            ExprKind::New { ty, .. } => is_type(ty),
            ExprKind::Call {
                name,
                receiver: None,
                ..
            } if is_type(name) => true,
            ExprKind::Call {
                receiver: Some(inner),
                ..
            } if inner.path_text().is_some_and(|p| is_type(&p)) => true,
            ExprKind::Call { .. } => self.eval(r).is_some_and(|t| t.kind == SourceKind::Random),
            ExprKind::Name(n) => {
                ro.names.iter().any(|x| x == n)
                    || ro.rust_distributions.iter().any(|x| x == n)
                    || self.var_type(n).is_some_and(|t| is_type(&t))
                    || self.env.get(n, r.span.start).is_some_and(|v| {
                        v.taint
                            .as_ref()
                            .is_some_and(|t| t.kind == SourceKind::Random)
                    })
            }
            ExprKind::Field { receiver, name } => {
                matches!(&receiver.kind, ExprKind::Name(s) if s == "this" || s == "self")
                    && (ro.names.iter().any(|x| x == name)
                        || self.var_type(name).is_some_and(|t| is_type(&t)))
            }
            ExprKind::Unary { operand, .. } => self.is_random_object(operand),
            _ => false,
        }
    }

    pub(super) fn is_clock_read(&self, receiver: Option<&Expr>, name: &str) -> bool {
        let c = &self.flow.cat.clocks;
        if !c.methods.iter().any(|m| m == name) {
            return false;
        }
        let Some(r) = receiver else { return false };
        let n = match &r.kind {
            ExprKind::Name(n) => n.as_str(),
            ExprKind::Field { receiver, name } if matches!(&receiver.kind, ExprKind::Name(s) if s == "this" || s == "self") => {
                name.as_str()
            }
            _ => return false,
        };
        n.to_ascii_lowercase().ends_with("clock")
            || self.var_type(n).is_some_and(|t| c.types.contains(&t))
    }

    /// Is a call on `receiver` (`name` when it has none) a call on a library's object? Down
    /// a fluent chain to what it starts from (`RequestOptions.builder().setApiKey(..)` starts
    /// from the type `RequestOptions`; `request.toBuilder()..` from the local `request`), whose
    /// declared or named type must be known and not a project type. A call with no receiver
    /// is a library's when no project function has its name.
    pub(super) fn library_object(&self, receiver: Option<&Expr>, name: &str) -> bool {
        let p = self.flow.p;
        let Some(mut r) = receiver else {
            // A free function no project function is called, and not a project type's
            // constructor (Kotlin `X(..)`).
            let project_ctor =
                name.starts_with(char::is_uppercase) && !p.types_named(name).is_empty();
            return p.count_named(name) == 0 && !project_ctor;
        };
        while let ExprKind::Call {
            receiver: Some(inner),
            ..
        } = &r.kind
        {
            r = inner;
        }
        let ty = self.receiver_type(r).or_else(|| match &r.kind {
            ExprKind::New { ty, .. } => ty.split(['.', ':', '<']).next().map(str::to_string),
            ExprKind::Call {
                receiver: None,
                name,
                ..
            } => name
                .starts_with(char::is_uppercase)
                .then(|| name.to_string()),
            _ => r
                .path_text()
                .filter(|t| simple_name(t).starts_with(char::is_uppercase)),
        });
        ty.is_some_and(|t| is_library_type(p, &t))
    }
}
