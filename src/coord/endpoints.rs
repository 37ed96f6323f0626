//! POSTs to money-moving endpoints (`/v1/charges`, `/v1/payment_intents/{id}/confirm`, ...)
//! and whether an idempotency key goes with them.
//!
//! A URL is reduced to a *shape*: its literal pieces, with holes for values the code computes
//! (`baseUrl + "/v1/invoices/" + id + "/pay"` -> `*/v1/invoices/*/pay`). Constants, locals,
//! templates, `format!`/`String.format` and project helpers that build a URL from a parameter
//! are followed. The shape is matched against the catalogue's endpoint paths.

use super::syntax::{field_binding, innermost_stmt, local_binding, peel, stmt_exprs};
use super::words::has;

use crate::catalog::Catalog;
use crate::facts::{Expr, ExprKind, FnKind, Span, TypeKind, simple_name};
use crate::flow::Flow;
use crate::hash::{HashMap, HashSet};
use crate::project::{FnRef, Project, walk_expr, walk_stmts};
use rayon::prelude::*;

/// The object a call chain starts from, through calls and fields: `options` in
/// `options.toBuilder().build()` and in `options.headers.put(..)` (`events::chain_root`
/// stops at a field).
pub(crate) fn chain_root_expr(e: &Expr) -> &Expr {
    let mut e = peel(e);
    loop {
        match &e.kind {
            ExprKind::Call {
                receiver: Some(r), ..
            }
            | ExprKind::Field { receiver: r, .. } => e = peel(r),
            _ => return e,
        }
    }
}

/// A call chain as a message names it: whitespace dropped and arguments elided
/// (`CreatePaymentIntent::new(..).customer(..).send`); a long one keeps its first and last
/// calls (`CreatePaymentIntent::new(..)...send`).
fn call_text(src: &str) -> String {
    let mut out = String::new();
    let mut depth = 0u32;
    let mut empty = true;
    for c in src.chars().filter(|c| !c.is_whitespace()) {
        match c {
            '(' => {
                if depth == 0 {
                    out.push('(');
                    empty = true;
                } else {
                    empty = false;
                }
                depth += 1;
            }
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    out.push_str(if empty { ")" } else { "..)" });
                }
            }
            _ if depth == 0 => out.push(c),
            _ => empty = false,
        }
    }
    if out.len() > 60
        && let (Some(first), Some(last)) = (out.find(").").map(|i| i + 1), out.rfind('.'))
        && first < last
    {
        return format!("{}...{}", &out[..first], &out[last + 1..]);
    }
    out
}

/// `null`, `None`.
fn is_null(e: &Expr) -> bool {
    matches!(&peel(e).kind, ExprKind::Lit(l) if l == "null")
        || matches!(&peel(e).kind, ExprKind::Name(n) if n == "None")
}

#[derive(Clone, Debug)]
enum Piece {
    Lit {
        text: String,
        unit: usize,
        span: Span,
    },
    Hole,
    Param(usize),
}

/// A POST to a money-moving endpoint.
#[derive(Clone, Debug)]
pub struct PostSite {
    /// The function the request is sent from.
    pub at: FnRef,
    /// The call (or `new HttpPost(..)`) that makes the POST, or the call of a project helper
    /// that makes it.
    pub site: Span,
    /// The endpoint's string literal (unit, span): in the call, a constant's declaration, or
    /// a caller's argument.
    pub literal: (usize, Span),
    /// The catalogue path matched (`/v1/charges`) and its provider.
    pub endpoint: String,
    pub provider: String,
    pub has_key: bool,
    /// The project helper that sends it, when the site is a helper call.
    pub helper: Option<FnRef>,
    /// A Retrofit/Feign/HTTP-interface method: the site is its declaration.
    pub declared: bool,
    /// The client library, as the interceptor catalogue names frameworks (`OkHttp`,
    /// `Apache HttpClient 5`, `Spring`); `Some([])` for clients no interceptor can reach
    /// (`java.net.http`, Ktor), `None` when unknown.
    pub families: Option<&'static [&'static str]>,
    /// A payment SDK's money call (`PaymentIntent.create(..)`) rather than a POST: which SDK
    /// and call, and where the method's name is.
    pub sdk: Option<super::sdk::SdkMatch>,
    /// Where the client it is sent with is built (`None` when that is not known): a keyed
    /// interceptor covers it when registered there.
    pub client: Option<Vec<super::clients::Region>>,
}

#[derive(Default)]
pub struct Posts {
    pub sites: Vec<PostSite>,
    by_site: HashMap<(usize, Span), usize>,
    /// Interface methods declared as POSTs to a money endpoint (`@POST("v1/charges")`).
    declared: HashMap<FnRef, usize>,
    /// Project interceptors or middleware that set an idempotency key header, with their
    /// framework and where they are registered (`None` when that is not known).
    pub key_interceptors: Vec<(FnRef, String, Option<Vec<super::clients::Region>>)>,
    /// SDK calls whose params make them move no money (`PaymentIntent.create` without
    /// `confirm`): no rule counts them as money, whatever their name.
    no_money: HashSet<(usize, Span)>,
}

impl Posts {
    pub fn at_site(&self, unit: usize, span: Span) -> Option<&PostSite> {
        self.by_site.get(&(unit, span)).map(|&i| &self.sites[i])
    }

    /// Is the call at `span` an SDK call whose params make it move no money?
    pub fn moves_no_money(&self, unit: usize, span: Span) -> bool {
        self.no_money.contains(&(unit, span))
    }

    pub fn declared(&self, f: FnRef) -> Option<&PostSite> {
        self.declared.get(&f).map(|&i| &self.sites[i])
    }

    /// A project interceptor that puts a key on requests of this site's client. When both
    /// where the client is built and where the interceptor is registered are known, one
    /// registered on that client; else one of the client's framework (any, when the client is
    /// not known), written for the same platform (a Rust middleware never runs for a JVM
    /// client, nor the other way round).
    pub fn covered_by_interceptor(&self, p: &Project, s: &PostSite) -> Option<FnRef> {
        let jvm = |u: usize| p.units[u].lang != crate::facts::Lang::Rust;
        self.key_interceptors
            .iter()
            .filter(|(f, _, _)| jvm(f.unit) == jvm(s.at.unit))
            .find(|(_, fw, regs)| match (&s.client, regs) {
                (Some(client), Some(regs)) => super::clients::registered_on(client, regs),
                _ => match s.families {
                    None => true,
                    Some(fams) => fams.iter().any(|f| fw == f),
                },
            })
            .map(|(f, _, _)| *f)
    }
}

const OKHTTP: &[&str] = &["OkHttp"];
const APACHE: &[&str] = &["Apache HttpClient 5", "Apache HttpClient 4"];
const SPRING: &[&str] = &["Spring", "Spring WebClient"];
const REQWEST: &[&str] = &["reqwest-middleware"];
const UREQ: &[&str] = &["ureq"];
const FEIGN: &[&str] = &["OpenFeign"];
const MICRONAUT: &[&str] = &["Micronaut"];
const NO_INTERCEPTORS: &[&str] = &[];

/// The client library a request chain is built with (in Rust, the one its file imports).
fn chain_family(
    chain: &[&Expr],
    lang: crate::facts::Lang,
    imports: &crate::decls::Imports,
) -> Option<&'static [&'static str]> {
    if lang == crate::facts::Lang::Rust {
        let ureq = imports
            .iter()
            .any(|i| i == "ureq" || i.starts_with("ureq::"));
        return Some(if ureq { UREQ } else { REQWEST });
    }
    let mut fam = None;
    for c in chain {
        let (name, recv) = match &c.kind {
            ExprKind::New { ty, .. } => (simple_name(ty), None),
            ExprKind::Call { name, receiver, .. } => (name.as_str(), receiver.as_deref()),
            _ => continue,
        };
        let recv_path = recv.and_then(|r| r.path_text()).unwrap_or_default();
        let recv_last = simple_name(&recv_path).to_string();
        fam = match name {
            "HttpPost"
            | "ClassicRequestBuilder"
            | "SimpleRequestBuilder"
            | "BasicClassicHttpRequest"
            | "BasicHttpRequest"
            | "SimpleHttpRequest" => Some(APACHE),
            "newBuilder" if recv_last == "HttpRequest" => Some(NO_INTERCEPTORS),
            "POST" => Some(NO_INTERCEPTORS),
            "submitForm" | "submitFormWithBinaryData" => Some(NO_INTERCEPTORS),
            "Builder" if recv_last == "Request" => Some(OKHTTP),
            "postForObject" | "postForEntity" | "postForLocation" | "exchange" => Some(SPRING),
            _ if recv_last == "ClassicRequestBuilder" || recv_last == "SimpleRequestBuilder" => {
                Some(APACHE)
            }
            _ => fam,
        };
        if let ExprKind::New { ty, .. } = &c.kind
            && ty.ends_with("Request.Builder")
        {
            fam = Some(OKHTTP);
        }
    }
    fam
}

/// Does a call of this name make the request (`post(..)`, `postForObject(..)`,
/// `request(Method::POST, ..)`)? Its receiver is the client it is sent with.
fn makes_request(name: &str) -> bool {
    POST_CALLS.contains(&name) || METHOD_CALLS.contains(&name)
}

/// Names of calls that make a POST by themselves.
const POST_CALLS: &[&str] = &[
    "post",
    "POST",
    "Post",
    "postForObject",
    "postForEntity",
    "postForLocation",
    "postAbs",
    "submitForm",
    "submitFormWithBinaryData",
    "HttpPost",
];
/// Names that say POST as an argument or an annotation (`HttpMethod.POST`, `Method::Post`,
/// `@POST`, `@PostExchange`), besides [`POST_CALLS`].
const POST_NAMES: &[&str] = &["POST", "Post", "PostExchange"];
/// Calls that make a request whose method is an argument (`method(HttpMethod.POST)`,
/// `request(Method::POST, url)`, `exchange(url, HttpMethod.POST, ..)`).
const METHOD_CALLS: &[&str] = &[
    "method",
    "request",
    "exchange",
    "BasicClassicHttpRequest",
    "BasicHttpRequest",
    "create",
    "newRequest",
    "Request",
];
/// Receivers of a `post(..)` that serve a route rather than send a request.
const SERVER_HINTS: &[&str] = &[
    "router", "route", "routes", "routing", "server", "mock", "stub", "wiremock", "app", "handler",
    "mvc", "spark", "javalin",
];
/// Calls that wrap or convert a URL without changing it.
const URL_WRAPPERS: &[&str] = &[
    "create",
    "URI",
    "URL",
    "toUri",
    "toURI",
    "toUrl",
    "toURL",
    "toHttpUrl",
    "toHttpUrlOrNull",
    "parse",
    "get",
    "toString",
    "to_string",
    "to_owned",
    "into",
    "as_str",
    "as_ref",
    "clone",
    "trim",
    "url",
    "uri",
    "fromHttpUrl",
    "fromUriString",
    "toUriString",
    "build",
    "encode",
    "expand",
];

struct Shaper<'p> {
    p: &'p Project,
    budget: std::cell::Cell<u32>,
    /// Annotations that give a field a configured value (catalogue `[config]`).
    config_annotations: Vec<String>,
    /// Annotations that bind a type's properties under a prefix (catalogue `[config]`).
    properties_annotations: Vec<String>,
}

impl<'p> Shaper<'p> {
    /// The shape of `e` evaluated in `at` (or, for a field initialiser, in `unit`).
    fn shape(&self, unit: usize, at: Option<FnRef>, e: &'p Expr, depth: u32, out: &mut Vec<Piece>) {
        if depth > 12 || out.len() > 64 || self.budget.get() == 0 {
            out.push(Piece::Hole);
            return;
        }
        self.budget.set(self.budget.get() - 1);
        let e = peel(e);
        match &e.kind {
            ExprKind::Str(s) => {
                // `format!` / `String.format` placeholders are holes.
                out.push(Piece::Lit {
                    text: s.to_string(),
                    unit,
                    span: e.span,
                })
            }
            ExprKind::Template(parts) => {
                for part in parts {
                    self.shape(unit, at, part, depth + 1, out);
                }
            }
            ExprKind::Binary { op, lhs, rhs } if op == "+" => {
                self.shape(unit, at, lhs, depth + 1, out);
                self.shape(unit, at, rhs, depth + 1, out);
            }
            ExprKind::Name(n) => self.name_shape(unit, at, None, n, e.span.start, depth, out),
            ExprKind::Field { receiver, name } => {
                let owner = receiver.path_text().filter(|t| {
                    t != "this"
                        && t != "self"
                        && simple_name(t).starts_with(|c: char| c.is_uppercase())
                });
                if owner.is_none()
                    && !matches!(&receiver.kind, ExprKind::Name(s) if s == "this" || s == "self")
                {
                    // Kotlin `props.approveUrl`: a bound property.
                    out.push(
                        self.bound_property(unit, at, receiver, name)
                            .unwrap_or(Piece::Hole),
                    );
                    return;
                }
                self.name_shape(unit, at, owner.as_deref(), name, e.span.start, depth, out)
            }
            ExprKind::Macro { name, args } if name == "format" || name == "concat" => {
                self.format_shape(unit, at, args, depth, out)
            }
            ExprKind::Call {
                receiver,
                name,
                args,
            } => {
                let receiver_e = receiver.as_deref();
                if (name == "format" || name == "formatted")
                    && let Some(first) = args.first()
                    && matches!(first.value.kind, ExprKind::Str(_))
                {
                    return self.format_shape(unit, at, args, depth, out);
                }
                if name == "formatted"
                    && let Some(r) = receiver
                    && matches!(r.kind, ExprKind::Str(_))
                {
                    return self.shape(unit, at, r, depth + 1, out);
                }
                if matches!(name.as_str(), "concat" | "plus") && args.len() == 1 {
                    if let Some(r) = receiver {
                        self.shape(unit, at, r, depth + 1, out);
                    }
                    return self.shape(unit, at, &args[0].value, depth + 1, out);
                }
                if matches!(
                    name.as_str(),
                    "path" | "join" | "resolve" | "pathSegment" | "addPathSegments"
                ) && args.len() == 1
                {
                    if let Some(r) = receiver {
                        self.shape(unit, at, r, depth + 1, out);
                    }
                    return self.shape(unit, at, &args[0].value, depth + 1, out);
                }
                if URL_WRAPPERS.contains(&name.as_str()) {
                    if args.len() == 1 && !matches!(args[0].value.kind, ExprKind::Lambda(_)) {
                        return self.shape(unit, at, &args[0].value, depth + 1, out);
                    }
                    if args.is_empty()
                        && let Some(r) = receiver
                    {
                        return self.shape(unit, at, r, depth + 1, out);
                    }
                }
                // `tossProperties.approveUrl()`, `props.getBaseUrl()`: a bound property (before
                // the getter's own body, which only returns the field Spring sets).
                if args.is_empty()
                    && let Some(r) = receiver_e
                    && let Some(piece) = self.bound_property(unit, at, r, name)
                {
                    out.push(piece);
                    return;
                }
                // A project helper that builds the URL: `url("/v1/charges")` returning
                // `baseUrl + path`.
                if let Some(at) = at
                    && let Some(callee) = self.unique_callee(name, args.len())
                    && callee != at
                    && let Some(ret) = returned_expr(self.p, callee)
                {
                    let mut inner = Vec::new();
                    self.shape(callee.unit, Some(callee), ret, depth + 1, &mut inner);
                    for piece in inner {
                        match piece {
                            Piece::Param(i) => {
                                match super::syntax::param_to_arg(self.p, callee, receiver_e, i)
                                    .and_then(|j| args.get(j))
                                {
                                    Some(a) => self.shape(unit, Some(at), &a.value, depth + 1, out),
                                    None => out.push(Piece::Hole),
                                }
                            }
                            other => out.push(other),
                        }
                    }
                    return;
                }
                out.push(Piece::Hole)
            }
            ExprKind::New { ty, args, .. }
                if matches!(simple_name(ty), "URI" | "URL" | "String" | "StringBuilder")
                    && args.len() == 1 =>
            {
                self.shape(unit, at, &args[0].value, depth + 1, out)
            }
            _ => out.push(Piece::Hole),
        }
    }

    fn unique_callee(&self, name: &str, arity: usize) -> Option<FnRef> {
        let mut it = self
            .p
            .resolve(name, arity)
            .filter(|f| self.p.func(*f).has_body);
        let first = it.next()?;
        it.next().is_none().then_some(first)
    }

    #[allow(clippy::too_many_arguments)]
    fn name_shape(
        &self,
        unit: usize,
        at: Option<FnRef>,
        owner: Option<&str>,
        n: &str,
        pos: usize,
        depth: u32,
        out: &mut Vec<Piece>,
    ) {
        if owner.is_none()
            && let Some(at) = at
        {
            let func = self.p.func(at);
            if let Some(i) = func.params.iter().position(|p| p.name == n) {
                out.push(if func.kind == FnKind::Lambda {
                    Piece::Hole
                } else {
                    Piece::Param(i)
                });
                return;
            }
            if let Some(b) = local_binding(self.p, at, n, pos) {
                match &b.init {
                    Some(i) => self.shape(unit, Some(at), i, depth + 1, out),
                    None => out.push(Piece::Hole),
                }
                return;
            }
            if self
                .p
                .ancestors(at)
                .any(|a| self.p.func(a).params.iter().any(|p| p.name == n))
            {
                out.push(Piece::Hole);
                return;
            }
        }
        match field_binding(self.p, unit, at, owner, n) {
            Some((u, b)) if b.init.is_some() => {
                let init = b.init.as_ref().expect("checked");
                self.shape(u, None, init, depth + 1, out)
            }
            // `@Value("${psp.base-url}") String baseUrl`: the configured value.
            Some((u, b)) => match self.configured_value(b) {
                Some((text, span)) => out.push(Piece::Lit {
                    text: text.to_string(),
                    unit: u,
                    span,
                }),
                None => out.push(Piece::Hole),
            },
            _ => out.push(Piece::Hole),
        }
    }

    /// The configured value of property `name` read on `receiver`, a value of a type bound
    /// under a prefix (`@ConfigurationProperties(prefix = "payment.toss")`): `approveUrl()`,
    /// `getApproveUrl()` or `approveUrl` is `payment.toss.approve-url` (or `.approveUrl`).
    fn bound_property(
        &self,
        unit: usize,
        at: Option<FnRef>,
        receiver: &'p Expr,
        name: &str,
    ) -> Option<Piece> {
        if self.properties_annotations.is_empty() || self.p.config_texts.is_empty() {
            return None;
        }
        let ExprKind::Name(var) = &peel(receiver).kind else {
            return None;
        };
        let ty = at
            .and_then(|f| {
                let func = self.p.func(f);
                func.params
                    .iter()
                    .find(|q| q.name == *var)
                    .and_then(|q| q.ty.clone())
                    .or_else(|| {
                        local_binding(self.p, f, var, receiver.span.start)
                            .and_then(|b| b.ty.clone())
                    })
            })
            .or_else(|| {
                field_binding(self.p, unit, at, None, var).and_then(|(_, b)| b.ty.clone())
            })?;
        let decl = self.p.types_named(simple_name(&ty)).iter().find_map(|t| {
            let d = &self.p.units[t.unit].facts().types[t.t];
            d.annotations
                .iter()
                .find(|a| self.properties_annotations.contains(&a.name))
        })?;
        let prefix = decl
            .args
            .iter()
            .find_map(|a| match (&a.name, &a.value.kind) {
                (Some(n), ExprKind::Str(s)) if n == "prefix" || n == "value" => Some(s.as_str()),
                (None, ExprKind::Str(s)) => Some(s.as_str()),
                _ => None,
            })?;
        let prop = super::syntax::getter_property(name).unwrap_or_else(|| name.to_string());
        let kebab: String = prop
            .chars()
            .flat_map(|c| {
                if c.is_ascii_uppercase() {
                    vec!['-', c.to_ascii_lowercase()]
                } else {
                    vec![c]
                }
            })
            .collect();
        [kebab, prop].iter().find_map(|p| {
            crate::config_values::lookup(&self.p.config_texts, &format!("{prefix}.{p}")).map(|v| {
                Piece::Lit {
                    text: v.to_string(),
                    unit,
                    span: receiver.span,
                }
            })
        })
    }

    /// The value a field's configuration annotation (`@Value("${psp.base-url}")`,
    /// `@ConfigProperty(name = "psp.base-url")`, `@Property(name = ..)`; catalogue
    /// `[config] annotations`) gives it, from the project's configuration files, with the
    /// annotation's span.
    fn configured_value(&self, b: &'p crate::facts::Binding) -> Option<(&'p str, Span)> {
        let a = b
            .annotations
            .iter()
            .find(|a| self.config_annotations.contains(&a.name))?;
        let key = a.args.iter().find_map(|x| match &x.value.kind {
            ExprKind::Str(s) => Some(crate::config_values::key_of(s)),
            _ => None,
        })?;
        crate::config_values::lookup(&self.p.config_texts, key).map(|v| (v, a.span))
    }

    /// `format!("{}/v1/charges", base)`, `String.format("%s/v1/refunds", base)`: the
    /// template's literal text with holes for its placeholders.
    fn format_shape(
        &self,
        unit: usize,
        at: Option<FnRef>,
        args: &'p [crate::facts::Arg],
        depth: u32,
        out: &mut Vec<Piece>,
    ) {
        let Some(first) = args.first() else {
            out.push(Piece::Hole);
            return;
        };
        let ExprKind::Str(s) = &first.value.kind else {
            return self.shape(unit, at, &first.value, depth + 1, out);
        };
        let mut text = String::new();
        let mut chars = s.chars().peekable();
        let mut next_arg = 1;
        let flush = |text: &mut String, out: &mut Vec<Piece>| {
            if !text.is_empty() {
                out.push(Piece::Lit {
                    text: std::mem::take(text),
                    unit,
                    span: first.value.span,
                });
            }
        };
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    text.push('{');
                }
                '{' => {
                    let mut inner = String::new();
                    for d in chars.by_ref() {
                        if d == '}' {
                            break;
                        }
                        inner.push(d);
                    }
                    flush(&mut text, out);
                    if inner.is_empty() || inner.starts_with(':') {
                        match args.get(next_arg) {
                            Some(a) => self.shape(unit, at, &a.value, depth + 1, out),
                            None => out.push(Piece::Hole),
                        }
                        next_arg += 1;
                    } else {
                        out.push(Piece::Hole);
                    }
                }
                '%' if chars.peek().is_some_and(|d| d.is_ascii_alphabetic()) => {
                    chars.next();
                    flush(&mut text, out);
                    match args.get(next_arg) {
                        Some(a) => self.shape(unit, at, &a.value, depth + 1, out),
                        None => out.push(Piece::Hole),
                    }
                    next_arg += 1;
                }
                _ => text.push(c),
            }
        }
        flush(&mut text, out);
    }
}

/// The expression a function returns when it has one `return` or an expression body.
pub(crate) fn returned_expr(p: &Project, f: FnRef) -> Option<&Expr> {
    match super::syntax::returned_exprs(p.func(f)).as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

const HOLE: char = '\u{0}';

/// Matches a shape against the catalogue's endpoints: (path, provider, index of the piece the
/// match starts in).
fn match_endpoint(cat: &Catalog, pieces: &[Piece]) -> Option<(String, String, usize)> {
    let mut chars: Vec<(char, usize)> = Vec::new();
    'build: for (i, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Lit { text, .. } => {
                for c in text.chars() {
                    if c == '?' || c == '#' {
                        break 'build;
                    }
                    chars.push((c, i));
                }
            }
            Piece::Hole | Piece::Param(_) => chars.push((HOLE, i)),
        }
    }
    while chars
        .last()
        .is_some_and(|(c, _)| *c == '/' || c.is_whitespace())
    {
        chars.pop();
    }
    for ep in &cat.coord.endpoint {
        for path in &ep.paths {
            if let Some(start) = match_path(&chars, path, true) {
                return Some((path.clone(), ep.provider.clone(), chars[start].1));
            }
        }
    }
    // Paths that move money only on the provider's own host (`/payments` at Adyen or
    // Checkout.com): the URL, from a literal or the configuration, names that host.
    let text: String = chars.iter().map(|(c, _)| c.to_ascii_lowercase()).collect();
    for ep in &cat.coord.endpoint {
        if !ep.hosts.iter().any(|h| text.contains(h.as_str())) {
            continue;
        }
        for path in &ep.host_paths {
            if let Some(start) = match_path(&chars, path, false) {
                return Some((path.clone(), ep.provider.clone(), chars[start].1));
            }
        }
    }
    None
}

/// Does `chars` end with `path` (`*` = one segment)? Returns the index where the match starts.
/// `any_host`: a path that moves money on any host (Stripe's `/v1/refunds`, for a base URL
/// from anywhere), so a literal URL whose own path has a prefix before it
/// (`https://ledger.internal/ledger-service/api/v1/refunds`) is another server's.
fn match_path(chars: &[(char, usize)], path: &str, any_host: bool) -> Option<usize> {
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let mut j = chars.len();
    for (k, seg) in segs.iter().enumerate().rev() {
        if *seg == "*" {
            let mut n = 0;
            while j > 0 && chars[j - 1].0 != '/' {
                j -= 1;
                n += 1;
            }
            if n == 0 {
                return None;
            }
        } else {
            let sc: Vec<char> = seg.chars().collect();
            if j < sc.len() {
                return None;
            }
            for (x, c) in sc.iter().rev().enumerate() {
                let (have, _) = chars[j - 1 - x];
                if !have.eq_ignore_ascii_case(c) {
                    return None;
                }
            }
            j -= sc.len();
        }
        if k > 0 {
            if j == 0 || chars[j - 1].0 != '/' {
                return None;
            }
            j -= 1;
        }
    }
    // Before the path: the start, a computed base URL, or a `/` after a host or a base URL.
    // A literal path with a prefix of its own (`/ledger-service/api/v1/charges`) is an
    // endpoint of the application's own server, not the provider's.
    if j == 0 {
        return Some(0);
    }
    let literal_before = !chars[..j - 1].iter().any(|(c, _)| *c == HOLE);
    match chars[j - 1].0 {
        '/' if j > 1 && chars[0].0 == '/' && literal_before => None,
        '/' if any_host && literal_before && url_path_prefix(&chars[..j - 1]) => None,
        '/' => Some(j - 1),
        HOLE => Some(j),
        _ => None,
    }
}

/// A literal absolute URL (`scheme://host/..`) whose path already has a segment here: the
/// text before the matched path is more than scheme and host.
fn url_path_prefix(before: &[(char, usize)]) -> bool {
    let text: String = before.iter().map(|(c, _)| *c).collect();
    let Some(i) = text.find("://") else {
        return false;
    };
    text[i + 3..].contains('/')
}

/// The literal the match starts in, or the first literal after it.
fn literal_at(pieces: &[Piece], from: usize) -> Option<(usize, Span)> {
    pieces[from..].iter().find_map(|p| match p {
        Piece::Lit { unit, span, .. } => Some((*unit, *span)),
        _ => None,
    })
}

struct Finder<'a, 'p> {
    p: &'p Project,
    cat: &'a Catalog,
    flow: &'a Flow<'p>,
    shaper: Shaper<'p>,
    key_fns: std::cell::RefCell<HashMap<FnRef, bool>>,
}

/// A helper that POSTs to a URL built from its parameter `param`.
struct Helper {
    f: FnRef,
    param: usize,
    pieces: Vec<Piece>,
    has_key: bool,
    families: Option<&'static [&'static str]>,
}

/// Finds every POST to a money endpoint in the project.
pub fn find<'p>(
    p: &'p Project,
    cat: &Catalog,
    flow: &Flow<'p>,
    interceptors: &dyn Fn() -> Vec<(FnRef, &'static crate::catalog::InterceptorEntry)>,
) -> Posts {
    let fd = Finder {
        p,
        cat,
        flow,
        shaper: Shaper {
            p,
            budget: std::cell::Cell::new(u32::MAX),
            config_annotations: cat.coord.config.annotations.clone(),
            properties_annotations: cat.coord.config.properties_annotations.clone(),
        },
        key_fns: Default::default(),
    };
    let mut posts = Posts::default();
    let mut helpers: Vec<Helper> = Vec::new();
    // The files a money endpoint's literal can reach (`endpoint_reach`), of those that may
    // send a POST.
    let all = std::sync::OnceLock::new();
    let reach =
        super::endpoint_reach::files(p, cat, &|| all.get_or_init(|| may_post(p, None)).clone());
    let may_post = match all.get() {
        Some(all) => all.iter().zip(&reach).map(|(m, r)| *m && *r).collect(),
        None => may_post(p, Some(&reach)),
    };
    p.prefetch((0..p.units.len()).filter(|&u| may_post[u]));
    for (u, unit) in p.units.iter().enumerate() {
        if !may_post[u] {
            continue;
        }
        for (f, func) in unit.facts().functions.iter().enumerate() {
            let at = FnRef { unit: u, f };
            fd.declared_post(at, &mut posts);
            if !func.has_body {
                continue;
            }
            fd.sites_in(at, &mut posts, &mut helpers);
        }
    }
    // Payment SDK money calls, in the files that import an SDK.
    let sdks = super::sdk::Sdks::new(p, cat);
    if sdks.any() {
        for u in 0..p.units.len() {
            if sdks.visible(u).is_empty() {
                continue;
            }
            for f in 0..p.units[u].facts().functions.len() {
                fd.sdk_sites_in(&sdks, FnRef { unit: u, f }, &mut posts);
            }
        }
    }
    // Callers of helpers, a few levels up (a helper may call another with its own parameter).
    let mut seen: HashSet<(FnRef, usize)> = HashSet::default();
    let mut round = 0;
    while !helpers.is_empty() && round < super::endpoint_reach::HELPER_ROUNDS {
        round += 1;
        let mut next = Vec::new();
        for h in helpers.drain(..) {
            if !seen.insert((h.f, h.param)) {
                continue;
            }
            fd.helper_callers(&h, &mut posts, &mut next);
        }
        helpers = next;
    }
    // Only a POST site asks whether an interceptor covers it: without one, the project's
    // interceptors need not even be found.
    if !posts.sites.is_empty() {
        let clients = super::clients::Clients::new(p, flow, cat, makes_request);
        posts.key_interceptors = interceptors()
            .into_iter()
            .filter(|(f, _)| p.with_nested(*f).iter().any(|g| fd.body_sets_key(*g)))
            .map(|(f, e)| (f, e.framework.clone(), clients.registrations(f, e)))
            .collect();
        // Which client each site is sent with matters only against a registration we know.
        if posts.key_interceptors.iter().any(|(_, _, r)| r.is_some()) {
            for s in &mut posts.sites {
                if s.has_key || s.helper.is_some() || s.declared || s.sdk.is_some() {
                    continue;
                }
                s.client = crate::project::find_call(p.func(s.at), s.site)
                    .and_then(|top| clients.of_request(s.at, top));
            }
        }
    }
    for (i, s) in posts.sites.iter().enumerate() {
        if !s.declared {
            posts.by_site.entry((s.at.unit, s.site)).or_insert(i);
        }
    }
    posts
}

/// Per unit: may it send or declare a POST? A POST is sent or declared by a name (`post(..)`,
/// `HttpPost`, `HttpMethod.Post`, `@PostExchange`, Ktor's `submitForm`) or by a string
/// (`"POST"`, `@RequestLine("POST /v1/charges")`): only files whose code writes one of the
/// names, or a string with the word, can.
/// Only the units `among` marks are asked (the others answer no), when it is given.
pub(crate) fn may_post(p: &Project, among: Option<&[bool]>) -> Vec<bool> {
    let asked = |u: usize| among.is_none_or(|a| a[u]);
    if among.is_some_and(|a| !a.contains(&true)) {
        return vec![false; p.units.len()];
    }
    let mut may_post = p.units_naming_any(|n| POST_CALLS.contains(&n) || POST_NAMES.contains(&n));
    let post = crate::needles::Needles::new(["post"]);
    let in_strings: Vec<bool> = (0..p.units.len())
        .into_par_iter()
        .map(|u| asked(u) && !may_post[u] && p.units_with_strings_holding_one(u, &post))
        .collect();
    for (u, s) in in_strings.into_iter().enumerate() {
        may_post[u] = asked(u) && (may_post[u] || s);
    }
    may_post
}

impl<'p> Finder<'_, 'p> {
    /// The calls of a project function's name, with the function each is in.
    fn calls_named(&self, name: &str) -> Vec<(FnRef, &'p Expr)> {
        let p = self.p;
        if p.count_named(name) == 0 {
            return Vec::new();
        }
        p.calls_named(name)
            .iter()
            .filter_map(|&(at, span)| {
                let e = crate::project::find_call(p.func(at), span)?;
                matches!(e.kind, ExprKind::Call { .. }).then_some((at, e))
            })
            .collect()
    }

    fn shape_of(&self, at: FnRef, e: &'p Expr) -> Vec<Piece> {
        self.shaper.budget.set(400);
        let mut out = Vec::new();
        self.shaper.shape(at.unit, Some(at), e, 0, &mut out);
        out
    }

    /// POST sites written in `at`.
    fn sites_in(&self, at: FnRef, posts: &mut Posts, helpers: &mut Vec<Helper>) {
        let func = self.p.func(at);
        let mut inner: HashSet<Span> = HashSet::default();
        let mut calls: Vec<&'p Expr> = Vec::new();
        walk_stmts(&func.body, &mut |e| match &e.kind {
            ExprKind::Call { receiver, .. } => {
                if let Some(r) = receiver {
                    inner.insert(peel(r).span);
                }
                calls.push(e);
            }
            ExprKind::New { .. } => calls.push(e),
            _ => {}
        });
        for top in calls {
            if inner.contains(&top.span) {
                continue;
            }
            let chain = chain_of(top);
            if !self.is_post_chain(at, &chain) {
                continue;
            }
            // URL candidates: every argument of the chain.
            for c in &chain {
                let args = match &c.kind {
                    ExprKind::Call { args, .. } | ExprKind::New { args, .. } => args,
                    _ => continue,
                };
                let mut found = false;
                for a in args {
                    if matches!(a.value.kind, ExprKind::Lambda(_)) {
                        continue;
                    }
                    let pieces = self.shape_of(at, &a.value);
                    if !pieces
                        .iter()
                        .any(|p| matches!(p, Piece::Lit { .. } | Piece::Param(_)))
                    {
                        continue;
                    }
                    if let Some((endpoint, provider, from)) = match_endpoint(self.cat, &pieces)
                        && let Some(literal) = literal_at(&pieces, from)
                    {
                        let has_key = self.neighbourhood_has_key(at, top.span);
                        posts.sites.push(PostSite {
                            at,
                            site: top.span,
                            literal,
                            endpoint,
                            provider,
                            has_key,
                            helper: None,
                            declared: false,
                            families: chain_family(
                                &chain,
                                self.p.units[at.unit].lang,
                                self.p.units[at.unit].imports(),
                            ),
                            sdk: None,
                            client: None,
                        });
                        found = true;
                        break;
                    }
                    for (i, piece) in pieces.iter().enumerate() {
                        if let Piece::Param(k) = piece
                            && self.p.func(at).kind != FnKind::Lambda
                            && pieces[..i]
                                .iter()
                                .chain(&pieces[i + 1..])
                                .all(|p| !matches!(p, Piece::Param(_)))
                        {
                            helpers.push(Helper {
                                f: at,
                                param: *k,
                                pieces: pieces.clone(),
                                has_key: self.neighbourhood_has_key(at, top.span),
                                families: chain_family(
                                    &chain,
                                    self.p.units[at.unit].lang,
                                    self.p.units[at.unit].imports(),
                                ),
                            });
                        }
                    }
                }
                if found {
                    break;
                }
            }
        }
    }

    /// SDK money calls written in `at` (not in its lambdas: they are functions of their own).
    fn sdk_sites_in(&self, sdks: &super::sdk::Sdks<'p>, at: FnRef, posts: &mut Posts) {
        let func = self.p.func(at);
        if !func.has_body {
            return;
        }
        let mut calls: Vec<&'p Expr> = Vec::new();
        walk_stmts(&func.body, &mut |e| {
            if matches!(e.kind, ExprKind::Call { .. }) {
                calls.push(e);
            }
        });
        for e in calls {
            let m = match sdks.money_call(self.flow, at, e) {
                Some(super::sdk::SdkCallIs::Money(m)) => m,
                Some(super::sdk::SdkCallIs::NoMoney) => {
                    posts.no_money.insert((at.unit, e.span));
                    continue;
                }
                None => continue,
            };
            let ExprKind::Call { args, .. } = &e.kind else {
                continue;
            };
            let sdk = &self.cat.sdks[m.sdk];
            // A key we cannot see either way (options handed in by a caller we cannot find)
            // is not reported as missing.
            let has_key = if sdk.key_required || m.once {
                true
            } else if let Some(k) = self.sdk_has_key(at, e, sdk, &sdk.call[m.call], args) {
                k
            } else {
                continue;
            };
            let src = &self.p.units[at.unit].src;
            let text = call_text(src.slice(Span::new(e.span.start, m.name_span.end)));
            posts.sites.push(PostSite {
                at,
                site: e.span,
                literal: (at.unit, m.name_span),
                endpoint: text,
                provider: sdk.provider.clone(),
                has_key,
                helper: None,
                declared: false,
                families: Some(NO_INTERCEPTORS),
                sdk: Some(m),
                client: None,
            });
        }
    }

    /// Does the SDK call `e` in `at` carry an idempotency key? `None` when that is decided by
    /// callers the project does not show.
    fn sdk_has_key(
        &self,
        at: FnRef,
        e: &'p Expr,
        sdk: &crate::catalog::Sdk,
        c: &crate::catalog::SdkCall,
        args: &'p [crate::facts::Arg],
    ) -> Option<bool> {
        if let Some(n) = c.key_arity {
            return Some(args.len() >= n && !is_null(&args[n - 1].value));
        }
        if self.sdk_call_has_key(at, e) {
            return Some(true);
        }
        // Options (or a Rust client) handed in by the caller: what the callers pass decides.
        let root = self.p.outermost(at);
        let outer = self.p.func(root);
        let mut decided_by_callers = Vec::new();
        let receiver = match &e.kind {
            ExprKind::Call { receiver, .. } => receiver.as_deref(),
            _ => None,
        };
        for a in args.iter().map(|a| &a.value).chain(receiver) {
            if let ExprKind::Name(n) = &peel(a).kind
                && let Some(i) = outer.params.iter().position(|p| p.name == n.as_str())
                && local_binding(self.p, at, n, e.span.start).is_none()
                && outer.params[i].ty.as_deref().is_some_and(|t| {
                    let t = simple_name(t.trim_start_matches(['&', ' ']));
                    has(&sdk.key_carriers, t)
                        || c.style == crate::catalog::SdkStyle::Request && has(&c.types, t)
                })
            {
                decided_by_callers.push(i);
            }
        }
        if decided_by_callers.is_empty() {
            return Some(false);
        }
        let name = outer.name.as_deref()?;
        let mut callers = 0;
        for (caller, call) in self.calls_named(name) {
            if let ExprKind::Call { args, .. } = &call.kind
                && args.len() + 1 >= outer.params.len()
                && args.len() <= outer.params.len()
            {
                callers += 1;
                if self.neighbourhood_has_key(caller, call.span) {
                    return Some(true);
                }
            }
        }
        (callers > 0).then_some(false)
    }

    /// Does the SDK call `e` in `at` name a key: in the call itself (its receiver chain and
    /// arguments, project helpers they call), or in the locals it is handed (the options, the
    /// request, the client): their initialisers and the calls made on them
    /// (`options.setIdempotencyKey(k)`, `request.header("PayPal-Request-Id", k)`). A local
    /// that is only passed along elsewhere (the params object of another call) is not
    /// followed.
    fn sdk_call_has_key(&self, at: FnRef, e: &'p Expr) -> bool {
        if self.expr_has_key(at, e) {
            return true;
        }
        let mut names: Vec<&'p str> = Vec::new();
        walk_expr(e, &mut |x| {
            if let ExprKind::Name(n) = &x.kind
                && !names.contains(&n.as_str())
            {
                names.push(n.as_str());
            }
        });
        let root = self.p.outermost(at);
        let mut i = 0;
        while i < names.len() && names.len() < 24 {
            let n = names[i];
            i += 1;
            let local = local_binding(self.p, at, n, e.span.start);
            // Fields and constants are shared by every call: only locals and parameters.
            if local.is_none() && !self.p.func(root).params.iter().any(|p| p.name == n) {
                continue;
            }
            if let Some(b) = local
                && let Some(init) = &b.init
            {
                if self.expr_has_key(at, init) {
                    return true;
                }
                // `val keyed = client.clone().with_strategy(..)`, `opts = base.toBuilder()`.
                walk_expr(init, &mut |x| {
                    if let ExprKind::Name(m) = &x.kind
                        && !names.contains(&m.as_str())
                    {
                        names.push(m.as_str());
                    }
                });
            }
            // Calls made on the local: `options.setIdempotencyKey(k)`.
            for g in self.p.with_nested(root) {
                let mut hit = false;
                walk_stmts(&self.p.func(g).body, &mut |x| {
                    if !hit
                        && let ExprKind::Call {
                            receiver: Some(r), ..
                        } = &x.kind
                        && matches!(&chain_root_expr(r).kind, ExprKind::Name(m) if m == n)
                        && x.span.start < e.span.start
                        && self.expr_has_key(g, x)
                    {
                        hit = true;
                    }
                });
                if hit {
                    return true;
                }
            }
        }
        false
    }

    /// Is this chain (outermost call first) a request sent with POST?
    fn is_post_chain(&self, at: FnRef, chain: &[&'p Expr]) -> bool {
        // The object the chain starts from: a router or mock server serves POSTs.
        if let Some(ExprKind::Call {
            receiver: Some(root),
            ..
        }) = chain.last().map(|c| &c.kind)
            && let Some(path) = peel(root).path_text()
            && path
                .split(['.', ':'])
                .flat_map(super::words::words)
                .any(|w| SERVER_HINTS.contains(&w.as_str()))
        {
            return false;
        }
        let mut post = false;
        for c in chain {
            match &c.kind {
                ExprKind::New { ty, args, .. } => {
                    let t = simple_name(ty);
                    if t == "HttpPost"
                        || (METHOD_CALLS.contains(&t)
                            && args.iter().any(|a| is_post_word(&a.value)))
                    {
                        post = true;
                    }
                }
                ExprKind::Call {
                    receiver,
                    name,
                    args,
                } => {
                    if matches!(name.as_str(), "handler" | "respond" | "route" | "andRoute") {
                        return false;
                    }
                    let is_post_name = POST_CALLS.contains(&name.as_str())
                        && (receiver.is_some() || name == "HttpPost");
                    let is_method_call = METHOD_CALLS.contains(&name.as_str())
                        && (args.iter().any(|a| is_post_word(&a.value))
                            || args.iter().any(|a| self.lambda_sets_post(at, &a.value)));
                    if is_post_name || is_method_call {
                        // A project function named `post` is a helper, not a client.
                        if self
                            .flow
                            .call_targets(at, receiver.as_deref(), name, args)
                            .iter()
                            .any(|t| self.p.func(*t).has_body)
                        {
                            return false;
                        }
                        post = true;
                    }
                }
                _ => {}
            }
        }
        post
    }

    /// Ktor `request(url) { method = HttpMethod.Post }`.
    fn lambda_sets_post(&self, at: FnRef, e: &Expr) -> bool {
        let ExprKind::Lambda(id) = e.kind else {
            return false;
        };
        let f = self.p.func(FnRef {
            unit: at.unit,
            f: id,
        });
        let mut yes = false;
        walk_stmts(&f.body, &mut |x| {
            if let ExprKind::Assign { target, value, .. } = &x.kind
                && target.path_text().is_some_and(|t| t.ends_with("method"))
                && is_post_word(value)
            {
                yes = true;
            }
        });
        yes
    }

    /// Retrofit `@POST("v1/charges")`, Feign `@RequestLine("POST /v1/charges")`, Spring
    /// `@PostExchange("/v1/charges")`, Micronaut `@Post` in a declarative client interface.
    fn declared_post(&self, at: FnRef, posts: &mut Posts) {
        let func = self.p.func(at);
        if func.has_body && func.owner.is_none() {
            return;
        }
        let Some(owner) = func.owner else { return };
        let ty = &self.p.units[at.unit].facts().types[owner];
        if ty.kind != TypeKind::Interface {
            return;
        }
        for a in &func.annotations {
            let path_arg = match a.name.as_str() {
                "POST" | "PostExchange" | "Post" => a
                    .args
                    .iter()
                    .find(|x| x.name.is_none() || x.name.as_deref() == Some("value") || x.name.as_deref() == Some("url") || x.name.as_deref() == Some("uri")),
                "RequestLine" => a.args.first().filter(|x| {
                    matches!(&x.value.kind, ExprKind::Str(s) if s.trim_start().starts_with("POST"))
                }),
                _ => None,
            };
            let Some(arg) = path_arg else { continue };
            let mut pieces = self.shape_of(at, &arg.value);
            if a.name == "RequestLine"
                && let Some(Piece::Lit { text, .. }) = pieces.first_mut()
            {
                *text = text
                    .trim_start()
                    .trim_start_matches("POST")
                    .trim_start()
                    .to_string();
            }
            let Some((endpoint, provider, from)) = match_endpoint(self.cat, &pieces) else {
                continue;
            };
            let Some(literal) = literal_at(&pieces, from) else {
                continue;
            };
            let has_key = func.params.iter().any(|p| {
                self.cat.is_key_variable(&p.name)
                    || p.annotations.iter().any(|pa| {
                        matches!(pa.name.as_str(), "HeaderMap" | "Tag" | "HeaderParam")
                            || (matches!(pa.name.as_str(), "Header" | "RequestHeader" | "Param")
                                && pa.args.iter().any(|x| self.is_key_marker_expr(&x.value)))
                    })
            }) || func
                .annotations
                .iter()
                .chain(ty.annotations.iter())
                .filter(|a| a.name == "Headers")
                .any(|a| a.args.iter().any(|x| self.is_key_marker_expr(&x.value)));
            let families = match a.name.as_str() {
                "POST" => Some(OKHTTP),
                "RequestLine" => Some(FEIGN),
                "PostExchange" => Some(SPRING),
                _ => Some(MICRONAUT),
            };
            let i = posts.sites.len();
            posts.sites.push(PostSite {
                at,
                site: func.name_span,
                literal,
                endpoint,
                provider,
                has_key,
                helper: None,
                declared: true,
                families,
                sdk: None,
                client: None,
            });
            posts.declared.insert(at, i);
        }
    }

    /// Calls of helper `h` whose argument makes the URL a money endpoint.
    fn helper_callers(&self, h: &Helper, posts: &mut Posts, next: &mut Vec<Helper>) {
        for (at, call) in super::sdk_params::calls_of(self.flow, self.p, h.f) {
            let ExprKind::Call { receiver, args, .. } = &call.kind else {
                continue;
            };
            let Some(arg_i) =
                super::syntax::param_to_arg(self.p, h.f, receiver.as_deref(), h.param)
                    .filter(|&j| j < args.len())
            else {
                continue;
            };
            let arg = self.shape_of(at, &args[arg_i].value);
            let mut pieces = Vec::new();
            for piece in &h.pieces {
                match piece {
                    Piece::Param(k) if *k == h.param => pieces.extend(arg.iter().cloned()),
                    Piece::Param(_) => pieces.push(Piece::Hole),
                    other => pieces.push(other.clone()),
                }
            }
            // The helper keys its request from a key parameter, unless this caller
            // passes none (`post_form(path, &form, None)`).
            let has_key = (h.has_key && !self.key_left_out(h.f, receiver.as_deref(), args))
                || self.neighbourhood_has_key(at, call.span);
            if let Some((endpoint, provider, from)) = match_endpoint(self.cat, &pieces)
                && let Some(literal) = literal_at(&pieces, from)
            {
                posts.sites.push(PostSite {
                    at,
                    site: call.span,
                    literal,
                    endpoint,
                    provider,
                    has_key,
                    helper: Some(h.f),
                    declared: false,
                    families: h.families,
                    sdk: None,
                    client: None,
                });
            } else if self.p.func(at).kind != FnKind::Lambda
                && let Some(k) = pieces.iter().find_map(|p| match p {
                    Piece::Param(k) => Some(*k),
                    _ => None,
                })
            {
                next.push(Helper {
                    f: at,
                    param: k,
                    pieces,
                    has_key,
                    families: h.families,
                });
            }
        }
    }

    /// Is an idempotency key set on the request sent at `site` in `at`? Looks at the
    /// statement, then at every statement of the function that uses a local it mentions
    /// (the request, its builder, headers, entity, context), a few steps out, and into
    /// project helpers called there.
    fn neighbourhood_has_key(&self, at: FnRef, site: Span) -> bool {
        let root = self.p.outermost(at);
        let fns = self.p.with_nested(root);
        let Some(seed) = innermost_stmt(&self.p.func(at).body, site) else {
            return false;
        };
        let mut exprs: Vec<&'p Expr> = stmt_exprs(seed);
        let mut locals: HashSet<&str> = HashSet::default();
        for g in &fns {
            let func = self.p.func(*g);
            locals.extend(func.params.iter().map(|p| p.name.as_str()));
            crate::flow::walk_lets(&func.body, &mut |b| {
                locals.insert(b.name.as_str());
            });
            walk_stmts(&func.body, &mut |x| {
                if let ExprKind::Loop { vars, .. } = &x.kind {
                    locals.extend(vars.iter().map(String::as_str));
                }
            });
        }
        let mut names: Vec<String> = Vec::new();
        if let crate::facts::Stmt::Let(b) = seed {
            names.push(b.name.clone());
        }
        // Assigned to a field or local by assignment: `request = Request.Builder()...`.
        let mut scanned: HashSet<Span> = HashSet::default();
        let mut name_i = 0;
        for _round in 0..4 {
            for e in std::mem::take(&mut exprs) {
                if !scanned.insert(e.span) {
                    continue;
                }
                if self.expr_has_key(at, e) {
                    return true;
                }
                walk_expr(e, &mut |x| match &x.kind {
                    ExprKind::Name(n) if !has(&names, n) => names.push(n.to_string()),
                    ExprKind::Assign { target, .. } => {
                        if let Some(t) = target.path_text()
                            && !names.contains(&t)
                        {
                            names.push(t);
                        }
                    }
                    _ => {}
                });
            }
            if name_i >= names.len() || names.len() > 24 {
                break;
            }
            // Statements that use the new names: locals and parameters of this function only
            // (a shared `client` field or a `BASE` constant would join unrelated requests).
            let new_names: Vec<String> = names[name_i..]
                .iter()
                .filter(|n| locals.contains(n.as_str()))
                .cloned()
                .collect();
            name_i = names.len();
            for g in &fns {
                let body = &self.p.func(*g).body;
                let mut hits: Vec<Span> = Vec::new();
                walk_stmts(body, &mut |x| match &x.kind {
                    ExprKind::Name(n) if has(&new_names, n) => hits.push(x.span),
                    // `for (k, v) in headers { req = req.header(k, v) }`: what the loop
                    // variables come from.
                    ExprKind::Loop {
                        kind: crate::facts::LoopKind::ForEach,
                        vars,
                        header,
                        ..
                    } if vars.iter().any(|v| has(&new_names, v)) => exprs.extend(header.iter()),
                    _ => {}
                });
                crate::flow::walk_lets(body, &mut |b| {
                    if new_names.contains(&b.name)
                        && let Some(i) = &b.init
                    {
                        exprs.push(i);
                    }
                });
                for h in hits {
                    if let Some(s) = innermost_stmt(body, h) {
                        exprs.extend(stmt_exprs(s));
                    }
                }
            }
        }
        false
    }

    /// Does `e` (with the lambdas in it, and project helpers it calls) name an idempotency key?
    fn expr_has_key(&self, at: FnRef, e: &'p Expr) -> bool {
        let unit = at.unit;
        let mut found = false;
        let mut lambdas: Vec<usize> = Vec::new();
        let mut calls: Vec<(&'p Expr, &'p str, &'p [crate::facts::Arg])> = Vec::new();
        walk_expr(e, &mut |x| {
            if found {
                return;
            }
            if self.is_key_marker_expr(x) {
                found = true;
            }
            match &x.kind {
                ExprKind::Lambda(id) => lambdas.push(*id),
                ExprKind::Call { name, args, .. } => calls.push((x, name, args)),
                _ => {}
            }
        });
        if found {
            return true;
        }
        for id in lambdas {
            let lf = FnRef { unit, f: id };
            for s in &self.p.func(lf).body {
                for x in stmt_exprs(s) {
                    if self.expr_has_key(lf, x) {
                        return true;
                    }
                }
            }
        }
        // Project helpers called here that set a key (`withStripeHeaders(builder)`).
        for (call, name, args) in calls {
            let receiver = match &call.kind {
                ExprKind::Call { receiver, .. } => receiver.as_deref(),
                _ => None,
            };
            for f in self.flow.call_targets(at, receiver, name, args) {
                if self.p.func(f).has_body
                    && self.body_sets_key(f)
                    && !self.key_left_out(f, receiver, args)
                {
                    return true;
                }
            }
        }
        false
    }

    /// Does this call of helper `f` leave out its key parameter, whose default is `null`
    /// (`stripeOptions(connectedAccount = acct)` for
    /// `fun stripeOptions(idempotencyKey: String? = null, connectedAccount: String? = null)`),
    /// or pass `null` for it?
    fn key_left_out(&self, f: FnRef, receiver: Option<&Expr>, args: &[crate::facts::Arg]) -> bool {
        let params = &self.p.func(f).params;
        let Some(i) = params
            .iter()
            .position(|p| self.cat.is_key_variable(&p.name))
        else {
            return false;
        };
        let param = &params[i];
        if let Some(a) = args
            .iter()
            .find(|a| a.name.as_deref() == Some(param.name.as_str()))
        {
            return is_null(&a.value);
        }
        let positional: Vec<&crate::facts::Arg> =
            args.iter().filter(|a| a.name.is_none()).collect();
        // A Rust method's `self` is the receiver, not an argument.
        let Some(j) = super::syntax::param_to_arg(self.p, f, receiver, i) else {
            return false;
        };
        match positional.get(j) {
            Some(a) => is_null(&a.value),
            None => param.default.as_ref().is_some_and(is_null),
        }
    }

    /// Does the body of `f` (or its lambdas) mention an idempotency key by name?
    fn body_sets_key(&self, f: FnRef) -> bool {
        if let Some(v) = self.key_fns.borrow().get(&f) {
            return *v;
        }
        self.key_fns.borrow_mut().insert(f, false);
        let mut yes = false;
        for g in self.p.with_nested(f) {
            walk_stmts(&self.p.func(g).body, &mut |x| {
                if !yes && self.is_key_marker_expr(x) {
                    yes = true;
                }
            });
        }
        self.key_fns.borrow_mut().insert(f, yes);
        yes
    }

    fn is_key_marker_expr(&self, x: &Expr) -> bool {
        is_key_marker(self.p, self.cat, x)
    }
}

/// Does this expression name an idempotency key: a header/attribute name literal, a constant
/// holding one, a variable or type named like one, a key setter?
pub fn is_key_marker(p: &Project, cat: &Catalog, x: &Expr) -> bool {
    // A variable, type or setter named like a key (`idempotencyKey`, `IdempotencyKey.class`,
    // `setIdempotencyKey`), not anything mentioning idempotency (`idempotencyStore`).
    let named = |n: &str| cat.is_key_variable(n) || cat.is_key_name(n);
    match &x.kind {
        ExprKind::Str(s) => {
            cat.is_key_name(s)
                || s.split_once(':')
                    .is_some_and(|(h, _)| cat.is_key_name(h.trim()))
        }
        ExprKind::Name(n) => named(n) || p.const_str(x, cat).is_some_and(|v| cat.is_key_name(&v)),
        ExprKind::Field { name, .. } => {
            named(name) || p.const_str(x, cat).is_some_and(|v| cat.is_key_name(&v))
        }
        // `setIdempotencyKey(null)`, `.idempotency_key(None)` set no key.
        ExprKind::Call { name, args, .. } => {
            (cat.is_key_setter(name) || named(name))
                && !(args.last().is_some_and(|a| is_null(&a.value)))
        }
        ExprKind::MethodRef { name, .. } => named(name),
        ExprKind::New { ty, .. } => named(simple_name(ty)),
        _ => false,
    }
}

/// `POST`, `"POST"`, `HttpMethod.POST`, `Method::POST`, `HttpMethod.Post`.
fn is_post_word(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Str(s) => s.eq_ignore_ascii_case("post"),
        ExprKind::Name(n) | ExprKind::Field { name: n, .. } => n == "POST" || n == "Post",
        _ => false,
    }
}

/// The calls of a builder chain, outermost first: `client.post(url).header(..).send()` ->
/// send, header, post.
fn chain_of(top: &Expr) -> Vec<&Expr> {
    let mut out = vec![top];
    let mut cur = top;
    while let ExprKind::Call {
        receiver: Some(r), ..
    } = &cur.kind
    {
        let r = peel(r);
        match &r.kind {
            ExprKind::Call { .. } | ExprKind::New { .. } => {
                out.push(r);
                cur = r;
            }
            _ => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> Piece {
        Piece::Lit {
            text: s.into(),
            unit: 0,
            span: Span::default(),
        }
    }

    #[test]
    fn call_texts_elide_arguments() {
        assert_eq!(
            call_text("client.v1()\n    .paymentIntents()\n    .create"),
            "client.v1().paymentIntents().create"
        );
        assert_eq!(call_text("PaymentIntent.create"), "PaymentIntent.create");
        assert_eq!(
            call_text(
                "CreatePaymentIntent::new(amount, Currency::USD).customer(id).payment_method(pm).confirm(true).send"
            ),
            "CreatePaymentIntent::new(..)...send"
        );
    }

    #[test]
    fn endpoint_shapes() {
        let cat = Catalog::builtin();
        let m = |p: &[Piece]| match_endpoint(cat, p).map(|(e, _, _)| e);
        assert_eq!(
            m(&[lit("https://api.stripe.com/v1/charges")]).as_deref(),
            Some("/v1/charges")
        );
        assert_eq!(
            m(&[Piece::Hole, lit("/v1/refunds")]).as_deref(),
            Some("/v1/refunds")
        );
        assert_eq!(
            m(&[Piece::Hole, lit("v1/refunds")]).as_deref(),
            Some("/v1/refunds")
        );
        assert_eq!(m(&[lit("v1/charges")]).as_deref(), Some("/v1/charges"));
        assert_eq!(
            m(&[lit("/v1/payment_intents/"), Piece::Hole, lit("/confirm")]).as_deref(),
            Some("/v1/payment_intents/*/confirm")
        );
        assert_eq!(
            m(&[lit("/v1/invoices/"), Piece::Hole, lit("/pay?expand=x")]).as_deref(),
            Some("/v1/invoices/*/pay")
        );
        assert_eq!(
            m(&[lit("/v1/charges?limit=10")]).as_deref(),
            Some("/v1/charges")
        );
        assert_eq!(m(&[lit("/v1/payment_intents/"), Piece::Hole]), None);
        assert_eq!(m(&[lit("/v1/customers")]), None);
        assert_eq!(m(&[lit("/xv1/charges")]), None);
        assert_eq!(m(&[lit("/v1/charges/"), Piece::Hole]), None);
        assert_eq!(m(&[Piece::Hole]), None);
        // A literal URL of another server whose own path ends like Stripe's.
        assert_eq!(
            m(&[lit("https://ledger.internal/ledger-service/api/v1/refunds")]),
            None
        );
        // A computed base URL before the path still matches; so does a host-only literal.
        assert_eq!(
            m(&[lit("https://"), Piece::Hole, lit("/v1/refunds")]).as_deref(),
            Some("/v1/refunds")
        );
        assert_eq!(
            m(&[lit("https://api.stripe.com/v1/refunds")]).as_deref(),
            Some("/v1/refunds")
        );
        // A provider-host path keeps its version prefix (`/v71/payments` at Adyen).
        assert_eq!(
            m(&[lit("https://checkout-test.adyen.com/v71/payments")]).as_deref(),
            Some("/payments")
        );
    }
}
