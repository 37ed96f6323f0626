//! The value flow's types: what a name or receiver is (a field's initialiser, a local's or
//! receiver's type, the literal a name stands for), as the evaluation needs it.

use super::*;

impl<'p> Ev<'_, 'p> {
    /// The initialiser of a field of the enclosing type, or of a file-level binding.
    pub(super) fn field_init(&self, name: &str) -> Option<&'p Expr> {
        let p: &'p Project = self.flow.p;
        let unit = &p.units[self.at.unit];
        let owner = p.ancestors(self.at).find_map(|a| p.func(a).owner);
        let mut ty = owner;
        while let Some(t) = ty {
            let decl = &unit.facts().types[t];
            if let Some(b) = decl.fields.iter().find(|b| b.name == name) {
                return b.init.as_ref();
            }
            ty = decl.parent_type;
        }
        unit.facts()
            .globals
            .iter()
            .find(|b| b.name == name)
            .and_then(|b| b.init.as_ref())
    }

    /// The declared or constructed type of a call's receiver, when the code says it.
    pub(super) fn receiver_type(&self, r: &Expr) -> Option<String> {
        match &r.kind {
            ExprKind::Name(n) if n != "this" && n != "self" => self.var_type(n),
            ExprKind::Field { receiver, name } if matches!(&receiver.kind, ExprKind::Name(s) if s == "this" || s == "self") => {
                self.var_type(name)
            }
            _ => constructed_type(r),
        }
    }

    pub(super) fn var_type(&self, name: &str) -> Option<String> {
        if let Some(t) = self.env.any_type(name) {
            return Some(t.clone());
        }
        // A field of an enclosing type: the owner, types it is nested in, and for an anonymous
        // class the type of the function it is written in.
        let unit = &self.flow.p.units[self.at.unit];
        let mut ty = self.flow.p.enclosing_type(self.at);
        let mut steps = 0;
        let mut field = None;
        while let Some(t) = ty {
            steps += 1;
            if steps > 16 {
                break;
            }
            let decl = &unit.facts().types[t];
            if let Some(b) = decl.fields.iter().find(|b| b.name == name) {
                field = Some(b);
                break;
            }
            ty = decl.parent_type.or_else(|| {
                decl.parent_fn
                    .and_then(|pf| {
                        self.flow.p.enclosing_type(FnRef {
                            unit: self.at.unit,
                            f: pf,
                        })
                    })
                    .filter(|x| *x != t)
            });
        }
        field.and_then(|b| {
            b.ty.as_deref()
                .map(|t| simple_name(t).to_string())
                .or_else(|| {
                    b.init.as_ref().and_then(|i| match &i.kind {
                        ExprKind::New { ty, .. } => Some(simple_name(ty).to_string()),
                        ExprKind::Call { name, .. } => Some(name.to_string()),
                        _ => None,
                    })
                })
        })
    }

    /// A literal name: a string literal, a local or project constant holding one, a
    /// `HeaderName::from_static("..")`, or an ALL_CAPS constant named like a key header.
    pub(super) fn literal_name(&self, e: &Expr) -> Option<String> {
        let is_const = |n: &str| {
            n.chars()
                .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
        };
        match &e.kind {
            ExprKind::Str(s) => Some(s.to_string()),
            ExprKind::Name(n) => {
                if let Some(Val {
                    str_const: Some(s), ..
                }) = self.env.get(n.as_str(), e.span.start)
                {
                    return Some(s.clone());
                }
                // A constant of the enclosing type or file, then one declared elsewhere in the
                // project (static import) if every declaration agrees.
                if let Some(init) = self.field_init(n) {
                    return self.flow.p.const_str(init, self.flow.cat);
                }
                if let Some(v) = self.flow.p.unique_constant(n) {
                    return Some(v);
                }
                (is_const(n) && self.flow.cat.is_key_name(n)).then(|| n.to_string())
            }
            ExprKind::Field { receiver, name: n } => {
                if matches!(&receiver.kind, ExprKind::Name(r) if r == "this" || r == "self" || r == "Self")
                {
                    return self
                        .field_init(n)
                        .and_then(|init| self.flow.p.const_str(init, self.flow.cat));
                }
                // `Headers.IDEMPOTENCY_KEY`: the field of that project type; a constant of a
                // library type is known only by its name.
                if let Some(path) = receiver.path_text()
                    && let Some(v) = self
                        .flow
                        .p
                        .type_constant(simple_name(&path), n, self.flow.cat)
                {
                    return Some(v);
                }
                (is_const(n) && self.flow.cat.is_key_name(n)).then(|| n.to_string())
            }
            ExprKind::Call {
                name,
                args,
                receiver,
            } => {
                // `KEY.clone()`, `HeaderNames.IDEMPOTENCY.value()`, `Header.KEY.getName()`.
                if args.is_empty()
                    && matches!(
                        name.as_str(),
                        "clone"
                            | "to_owned"
                            | "as_str"
                            | "to_string"
                            | "as_ref"
                            | "toString"
                            | "value"
                            | "getValue"
                            | "headerName"
                            | "getHeaderName"
                            | "getName"
                            | "key"
                            | "getKey"
                            | "label"
                            | "getLabel"
                    )
                    && let Some(r) = receiver
                {
                    return self.literal_name(r);
                }
                if args.len() == 1 && self.is_header_name_ctor(name) {
                    return self.literal_name(&args[0].value);
                }
                None
            }
            ExprKind::New { ty, args, .. } if args.len() == 1 && self.is_header_name_ctor(ty) => {
                self.literal_name(&args[0].value)
            }
            ExprKind::Unary { operand, .. } => self.literal_name(operand),
            _ => None,
        }
    }
}
