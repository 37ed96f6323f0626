//! Framework knowledge as data: nondeterministic sources, key sinks and interceptor
//! boundaries, loaded from `rules/catalog/*.toml` (embedded at build time).

use crate::facts::Lang;
use crate::hash::HashSet;
use serde::Deserialize;
use std::sync::OnceLock;

const SOURCES: &str = include_str!("../rules/catalog/sources.toml");
const SINKS: &str = include_str!("../rules/catalog/sinks.toml");
const INTERCEPTORS: &str = include_str!("../rules/catalog/interceptors.toml");
const RETRY: &str = include_str!("../rules/catalog/retry.toml");
const COORDINATION: &str = include_str!("../rules/catalog/coordination.toml");
const SDKS: &str = include_str!("../rules/catalog/sdks.toml");

/// `sdks.toml`: payment SDKs, their money-moving calls and where they take a key.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SdksFile {
    sdk: Vec<Sdk>,
}

/// One payment SDK (`stripe-java`, `async-stripe`, ...).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sdk {
    pub id: String,
    pub name: String,
    pub provider: String,
    pub langs: Vec<String>,
    /// Java/Kotlin package prefixes (`com.stripe`).
    #[serde(default)]
    pub packages: Vec<String>,
    /// Rust crate names (`stripe`).
    #[serde(default)]
    pub crates: Vec<String>,
    /// Where the SDK takes an idempotency key, for messages.
    pub key_takes: String,
    /// What the SDK does when it is given none, for messages.
    pub no_key: String,
    /// Types of the values that carry the key to a call (`RequestOptions`, a Rust `Client`):
    /// such a value handed in as a parameter is decided by the callers.
    #[serde(default)]
    pub key_carriers: Vec<String>,
    /// Calls and constructors that take the key as a positional argument, with its index:
    /// `["CreatePaymentRequest.Builder", 1]` (`new CreatePaymentRequest.Builder(source, key)`),
    /// `["requestPayment", 1]`.
    #[serde(default)]
    pub key_args: Vec<(String, usize)>,
    /// The SDK cannot send a money call without a key (Square's request builders take one).
    #[serde(default)]
    pub key_required: bool,
    pub call: Vec<SdkCall>,
}

/// How a money call of an SDK is written (`sdks.toml` explains each).
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SdkStyle {
    Static,
    Instance,
    Service,
    Api,
    Request,
    Chain,
}

/// One shape of money call of an SDK.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SdkCall {
    pub style: SdkStyle,
    #[serde(default)]
    pub types: Vec<String>,
    #[serde(default)]
    pub services: Vec<String>,
    pub methods: Vec<String>,
    /// `chain`: the call below the reported one (`create` in GoCardless
    /// `client.payments().create()...execute()`).
    #[serde(default)]
    pub via: Option<String>,
    /// Fewer arguments than this is not the call that sends (Mollie's builder form
    /// `sdk.payments().create()...call()` against `sdk.payments().create(request, options)`).
    #[serde(default)]
    pub min_args: usize,
    /// The provider accepts the call once per object (a capture or confirm of one payment
    /// intent, paying one invoice, capturing one PayPal order): a repeat fails instead of
    /// paying twice, so a missing key is not reported (it is still money for IDEM004/IDEM005).
    #[serde(default)]
    pub once_per_object: bool,
    /// The call takes the key as an argument when it has at least this many.
    #[serde(default)]
    pub key_arity: Option<usize>,
    /// What the provider does with a second, keyless call (for messages): "creates a second
    /// payment intent, ..."; by default it charges, refunds or pays out twice.
    #[serde(default)]
    pub repeat: Option<String>,
    /// The call moves money only when its params (an argument built from one of
    /// `unless_params` types in the calling function) set one of `moves_money_with`
    /// (`confirm`): a Stripe PaymentIntent created without `confirm` waits for a confirm call
    /// of its own, and a second one is never charged. Params the code does not show (built by
    /// a project helper, handed in) still count as money.
    #[serde(default)]
    pub moves_money_with: Vec<String>,
    #[serde(default)]
    pub unless_params: Vec<String>,
    /// The call moves no money, or a repeat of it fails, when every way its params are built
    /// sets a field so (`payment_behavior` default_incomplete, a zero amount, a single-use
    /// token as the source).
    #[serde(default)]
    pub unless_set: Vec<ParamCondition>,
}

/// A field of an SDK call's params, set to a value that changes what the call does with money.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamCondition {
    /// The field, in the provider's spelling (`payment_behavior`): setters, builder methods,
    /// map keys, assignments and named arguments of any spelling match (`setPaymentBehavior`).
    pub set: String,
    /// A word of what the field is set on (`amount`: `Amount().value(0L)`), when the field's
    /// name alone is too common.
    #[serde(default)]
    pub on: Option<String>,
    /// Words the value has, all of them (`default`, `incomplete`:
    /// `PaymentBehavior.DEFAULT_INCOMPLETE`, `"default_incomplete"`).
    #[serde(default)]
    pub to: Vec<String>,
    /// The value is zero (`0`, `0L`, `"0"`, `BigDecimal.ZERO`).
    #[serde(default)]
    pub zero: bool,
    /// With it set, a repeat of the call fails instead of moving money again (a single-use
    /// token): money still moves once, so it is money for the coordination rules, but a
    /// missing key is not reported. Without it, the call moves no money.
    #[serde(default)]
    pub once: bool,
}

/// `coordination.toml`: schedulers, money-moving calls and endpoints, locks and claims.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Coordination {
    pub schedulers: Schedulers,
    pub money: Money,
    pub endpoint: Vec<Endpoint>,
    pub locks: Locks,
    pub guards: Guards,
    pub config: ConfigRefs,
}

/// What an "already done?" guard (IDEM005) is not.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Guards {
    /// A call on a value of these types reads a number or text already at hand, not stored
    /// state (`if (amount.doubleValue() > total.doubleValue()) throw ..`): a validation.
    pub value_types: Vec<String>,
    /// Words of a write that marks the work started (`markInProgress`, `set_processing`): made
    /// before the money moves on the same id, it is a claim whatever the read's words.
    #[serde(default)]
    pub in_progress_words: Vec<String>,
}

/// Annotations that give a field the value of a configuration key (`@Value("${psp.url}")`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigRefs {
    pub annotations: Vec<String>,
    /// Annotations that bind a type's properties under a prefix (`@ConfigurationProperties(prefix
    /// = "payment.toss") record TossProperties(String approveUrl)`): `props.approveUrl()` is the
    /// value of `payment.toss.approve-url`.
    #[serde(default)]
    pub properties_annotations: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedulers {
    pub periodic_calls: Vec<String>,
    pub hinted_calls: Vec<String>,
    pub receiver_hints: Vec<String>,
    pub types: Vec<String>,
    pub annotations: Vec<String>,
    /// Files importing one of these use a job store that runs each job on one server
    /// (JobRunr): there a receiver named like a scheduler is not a per-process one.
    pub job_store_imports: Vec<String>,
    pub startup_types: Vec<(String, String)>,
    /// Start-up types whose method runs for the event its parameter names: a start-up job only
    /// when that event is one of `startup_events` (`ApplicationListener<ApplicationReadyEvent>`).
    pub event_listener_types: Vec<String>,
    pub startup_events: Vec<String>,
    pub startup_annotations: Vec<String>,
    pub quartz_types: Vec<(String, String)>,
    pub quartz_import: String,
    pub quartz_clustered_property: String,
    pub spawners: Vec<String>,
    pub sleeps: Vec<String>,
    /// Calls that make an endless stream of timer ticks: a loop that takes its next item
    /// (`while let Some(_) = ticks.next().await`, Kotlin `for (t in ticker(..))`) waits.
    #[serde(default)]
    pub tick_streams: Vec<String>,
    /// Inference: words of calls that wait for a timer in a loop `main` starts.
    pub inferred_waits: Vec<String>,
    pub cron_receivers: Vec<String>,
    pub cron_calls: Vec<String>,
    /// (call, mark): a call that takes the task, on a builder chain that names a per-process
    /// timer source (apalis `WorkerBuilder::new(..).backend(CronStream::new(s)).build_fn(job)`).
    #[serde(default)]
    pub chain_jobs: Vec<(String, String)>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Money {
    pub verbs: Vec<String>,
    pub actions: Vec<String>,
    pub objects: Vec<String>,
    pub never_with: Vec<String>,
    /// Words that say which items (`pending`, `due`): they end money by name unless a money
    /// verb comes first and a word follows them (`chargeDueInvoices`, not `refundPending`).
    #[serde(default)]
    pub qualifiers: Vec<String>,
    pub first_verbs: Vec<String>,
    pub first_verb_objects: Vec<String>,
    pub not_first: Vec<String>,
    pub sdk_types: Vec<String>,
    pub sdk_services: Vec<String>,
    pub sdk_methods: Vec<String>,
    /// A project interface named as a payment port (`BillingGateway`, `PaymentProcessor`):
    /// one of these words in its name, none of `port_never`.
    pub port_words: Vec<String>,
    pub port_never: Vec<String>,
    /// A call on a receiver whose name holds one of these words (any case) moves no money.
    #[serde(default)]
    pub not_receiver_words: Vec<String>,
    /// A call on a receiver whose declared or constructed type (simple name) is one of these
    /// moves no money.
    #[serde(default)]
    pub not_receiver_types: Vec<String>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Endpoint {
    pub provider: String,
    #[serde(default)]
    pub paths: Vec<String>,
    /// The provider's API hosts (lower case): `host_paths` move money only on these.
    #[serde(default)]
    pub hosts: Vec<String>,
    #[serde(default)]
    pub host_paths: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Locks {
    pub words: Vec<String>,
    pub checked_calls: Vec<String>,
    pub local_lock_types: Vec<String>,
    pub local_lock_constructors: Vec<String>,
    pub annotations: Vec<String>,
    pub sql_locks: Vec<String>,
    pub sql_claims: Vec<String>,
    pub host_env_vars: Vec<String>,
    pub env_calls: Vec<String>,
    pub key_calls: Vec<(String, usize)>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct RetryApi {
    pub id: String,
    pub framework: String,
    pub langs: Vec<String>,
    pub calls: Vec<String>,
    #[serde(default)]
    pub receivers: Option<Vec<String>>,
    #[serde(default)]
    pub receiver_contains: Vec<String>,
    #[serde(default)]
    pub chain_contains: Vec<String>,
    #[serde(default)]
    pub requires_later: Vec<String>,
    #[serde(default)]
    pub arg: Option<usize>,
    /// The receiver is the retried function (backon's `charge.retry(builder)`), not an
    /// argument; the call matches only when the receiver is a function.
    #[serde(default)]
    pub receiver_is_body: bool,
    /// The function argument is stored as the one method call it makes, its arguments
    /// evaluated once (JobRunr's `enqueue(() -> billing.charge(id, key))`): the method called
    /// is the retried body, not the lambda.
    #[serde(default)]
    pub stored_call: bool,
    /// The call counts only in a file that imports one of these prefixes (`org.jobrunr`).
    #[serde(default)]
    pub imports: Vec<String>,
    pub why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Publishers {
    pub factories: Vec<String>,
    pub retry_operators: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryMethod {
    pub id: String,
    pub framework: String,
    pub langs: Vec<String>,
    /// The implemented type (simple name) and the methods of it that re-run.
    pub supertypes: Vec<String>,
    pub methods: Vec<String>,
    /// The file must import one of these (any prefix match): `Policy` alone is a common name.
    pub imports: Vec<String>,
    pub why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryAnnotations {
    pub names: Vec<String>,
    pub why: String,
    /// Annotations that retry only in files importing their framework (JobRunr `@Job`).
    #[serde(default)]
    pub scoped: Vec<ScopedRetryAnnotation>,
    /// (argument, value) pairs that turn the retry off (`maxAttempts = 1`, `retries = 0`).
    #[serde(default)]
    pub off_when: Vec<(String, String)>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopedRetryAnnotation {
    pub names: Vec<String>,
    pub imports: Vec<String>,
    pub why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Callbacks {
    pub types: Vec<(String, String)>,
    pub resend_calls: Vec<String>,
    pub handlers: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryFile {
    pub api: Vec<RetryApi>,
    /// Trait / interface methods a retry mechanism calls again on every attempt (tower's
    /// `Policy::clone_request`).
    #[serde(default)]
    pub method: Vec<RetryMethod>,
    pub publishers: Publishers,
    pub annotations: RetryAnnotations,
    pub callbacks: Callbacks,
    pub inferred: InferredRetry,
}

/// Words that make an unlisted library call a retry scope (inference, `[inferred]`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InferredRetry {
    pub words: Vec<String>,
    pub not_words: Vec<String>,
    pub data_words: Vec<String>,
    pub scope_calls: Vec<String>,
    pub why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceEntry {
    pub langs: Vec<String>,
    pub receivers: Vec<String>,
    pub calls: Vec<String>,
    pub kind: SourceKind,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    Random,
    Time,
    /// The same in one process, different in every other: host name, pod name, pid. Not a
    /// nondeterministic key source (the key rules ignore it); an unstable lock key (IDEM006).
    Process,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomObjects {
    pub types: Vec<String>,
    pub names: Vec<String>,
    pub methods_jvm: Vec<String>,
    pub methods_rust: Vec<String>,
    pub rust_distributions: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Macros {
    pub random: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Period {
    pub conversions: Vec<String>,
    pub constructors: Vec<String>,
    pub formatters: Vec<String>,
    pub date_constants: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Constructors {
    pub time: Vec<String>,
    pub random: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clocks {
    pub types: Vec<String>,
    pub methods: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SourcesFile {
    source: Vec<SourceEntry>,
    constructors: Constructors,
    clocks: Clocks,
    random_objects: RandomObjects,
    macros: Macros,
    period: Period,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sinks {
    pub key_names: Vec<String>,
    pub key_variables: Vec<String>,
    pub key_variable_suffixes: Vec<String>,
    pub setter_prefixes: Vec<String>,
    pub key_wrappers: Vec<String>,
    pub header_name_constructors: Vec<String>,
    pub memoizers: Vec<String>,
    pub local_uses: LocalUses,
}

/// Uses that keep a value inside the service (`crate::outbound`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalUses {
    /// Suffixes of a receiver's declared type (`OutboxRepository`, `JdbcTemplate`).
    pub receiver_types: Vec<String>,
    /// Calls, by name, whose arguments stay local (`save`, `equals`, `publishEvent`).
    pub methods: Vec<String>,
    pub method_prefixes: Vec<String>,
    /// Rust logging macros.
    pub macros: Vec<String>,
    /// Calls and macros that only build a value from their arguments (`Map.of`, `format!`).
    pub value_calls: Vec<String>,
    /// First words of a SQL statement: a call given one as a string literal, or a chain
    /// started by one (`db.execute("INSERT ..", &[&key])`, `sqlx::query("UPDATE ..").bind(key)`),
    /// talks to our own database.
    pub sql_statements: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterceptorEntry {
    pub id: String,
    pub framework: String,
    pub kind: String,
    pub langs: Vec<String>,
    pub supertypes: Vec<String>,
    pub methods: Vec<String>,
    pub registrations: Vec<String>,
    #[serde(default)]
    pub receiver_hints: Vec<String>,
    #[serde(default)]
    pub chain_hints: Vec<String>,
    /// Annotation-declared filters: a class annotated with one of `class_annotations` whose
    /// methods annotated with one of `method_annotations` are the body.
    #[serde(default)]
    pub class_annotations: Vec<String>,
    #[serde(default)]
    pub method_annotations: Vec<String>,
    #[serde(default)]
    pub lambda_params: Option<usize>,
    /// Calls whose lambda defines the interceptor as a value that is installed later (Ktor's
    /// `createClientPlugin("Keys") { onRequest { .. } }`, then `install(Keys)`): its
    /// registrations are where that value is handed on.
    #[serde(default)]
    pub defined_in: Vec<String>,
    #[serde(default)]
    pub sam: Vec<String>,
    pub imports: Vec<String>,
    /// The entry does not apply in a file importing one of these (a server's filters share
    /// the client's types: http4k `Filter`, tower-http layers).
    #[serde(default)]
    pub not_imports: Vec<String>,
    /// The registered function returns the per-request handler and is itself called once, when
    /// the stack is built (http4k `Filter { next -> { request -> .. } }`): the body is the
    /// handler it returns.
    #[serde(default)]
    pub returns_handler: bool,
    pub why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InterceptorsFile {
    interceptor: Vec<InterceptorEntry>,
    inferred: InferredInterceptor,
    clients: Clients,
}

/// How a request reaches the client that sends it, for telling which client's interceptors
/// run for it (`[clients]` in interceptors.toml).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clients {
    /// Calls on a client that send a request built apart from it (`client.newCall(request)`).
    pub send_calls: Vec<String>,
    /// Calls that gather interceptors into a collection handed to a registration
    /// (`listOf(keys, logging)`, `List.of(..)`, `vec![..]`).
    pub collection_calls: Vec<String>,
    /// Calls whose lambda runs with the receiver as `this` (Kotlin `apply`): a field assigned
    /// in it is the receiver's.
    pub scope_calls: Vec<String>,
    /// Dependency injection: annotations that name the bean a field or parameter gets
    /// (`@Qualifier("stripe")`, `@Named`), mark a method as making a bean (`@Bean`,
    /// `@Produces`), or pick one bean among several of a type (`@Primary`).
    pub qualifiers: Vec<String>,
    pub bean_annotations: Vec<String>,
    pub primary_annotations: Vec<String>,
}

/// Inference: an override of a library callback that gets a request and sets headers on it
/// is an interceptor body (`[inferred]` in interceptors.toml).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InferredInterceptor {
    /// A parameter is a request when a word of its type's simple name is one of these.
    pub request_words: Vec<String>,
    /// ..or ends with one of these after a request word (`RequestBuilder`).
    pub request_suffixes: Vec<String>,
    /// Calls on the request (or on a call chained from it) that set a header.
    pub header_calls: Vec<String>,
    /// Annotations that mark an override (Kotlin's `override` modifier and Rust trait
    /// implementations count too).
    pub override_annotations: Vec<String>,
    /// Library callbacks that run once per request built, not per attempt.
    pub not_supertypes: Vec<String>,
    /// Import prefixes of server frameworks: their callbacks handle incoming requests.
    pub server_imports: Vec<String>,
    /// What the findings say about it.
    pub entry: InterceptorEntry,
}

/// The whole catalogue.
#[derive(Debug)]
pub struct Catalog {
    pub sources: Vec<SourceEntry>,
    pub constructors: Constructors,
    pub clocks: Clocks,
    pub random_objects: RandomObjects,
    pub macros: Macros,
    pub period: Period,
    pub sinks: Sinks,
    pub interceptors: Vec<InterceptorEntry>,
    pub inferred_interceptor: InferredInterceptor,
    pub clients: Clients,
    pub retry: RetryFile,
    pub coord: Coordination,
    pub sdks: Vec<Sdk>,
    /// Every call name some catalogue entry mentions (sources, random/clock methods,
    /// constructors, memoisers, period conversions and formatters): a call with any other
    /// name needs none of those checks.
    special_calls: HashSet<String>,
    /// Lower-case fragments one of which every key name contains (cheap rejection).
    key_name_fragments: Vec<String>,
    /// The words one of which a money-moving name has (`coord.money`: verbs, first verbs,
    /// objects) and those of lock names (`coord.locks.words`), matched ignoring ASCII case:
    /// an ASCII name containing none of them has none of them among its words (cheap
    /// rejection for `coord::words`).
    pub(crate) money_stems: aho_corasick::AhoCorasick,
    pub(crate) lock_stems: aho_corasick::AhoCorasick,
    /// From the configuration, for the retry and scheduler rules.
    pub retry_helpers: Vec<String>,
    pub scheduler_apis: Vec<String>,
    pub money_calls: Vec<String>,
    pub lock_apis: Vec<String>,
}

impl Catalog {
    /// The index of the argument that is an idempotency key in a call or construction of
    /// `name` (`requestPayment`, `CreatePaymentRequest.Builder`) with `owner` before it, when a
    /// payment SDK takes its key there.
    /// `owner` is asked for only when `name` is one of those calls (it may allocate).
    pub fn sdk_key_arg<S: AsRef<str>>(
        &self,
        name: &str,
        owner: impl FnOnce() -> Option<S>,
    ) -> Option<usize> {
        let mut owner = Some(owner);
        let mut owner_text: Option<Option<S>> = None;
        for (n, i) in self.sdks.iter().flat_map(|s| &s.key_args) {
            let (o, last) = match n.rsplit_once('.') {
                Some((o, l)) => (Some(o), l),
                None => (None, n.as_str()),
            };
            if last != name {
                continue;
            }
            let Some(o) = o else {
                return Some(*i);
            };
            let w = owner_text.get_or_insert_with(|| owner.take().and_then(|f| f()));
            if w.as_ref()
                .is_some_and(|w| crate::facts::simple_name(w.as_ref()) == o)
            {
                return Some(*i);
            }
        }
        None
    }

    /// The built-in catalogue. Parsed once; the embedded files are checked by a unit test.
    pub fn builtin() -> &'static Catalog {
        static CAT: OnceLock<Catalog> = OnceLock::new();
        CAT.get_or_init(|| Catalog::parse(SOURCES, SINKS, INTERCEPTORS).expect("builtin catalog"))
    }

    /// The built-in catalogue plus a configuration's extensions. The result lives for the
    /// rest of the process (one per run).
    pub fn extended(ext: &crate::catalog_ext::CatalogExtension) -> &'static Catalog {
        let empty = ext.idempotency_headers.is_empty()
            && ext.nondeterministic_sources.is_empty()
            && ext.interceptors.is_empty()
            && ext.retry_helpers.is_empty()
            && ext.scheduler_apis.is_empty()
            && ext.money_calls.is_empty()
            && ext.lock_apis.is_empty()
            && ext.money_endpoints.is_empty();
        if empty {
            return Catalog::builtin();
        }
        let mut c = Catalog::parse(SOURCES, SINKS, INTERCEPTORS).expect("builtin catalog");
        for h in &ext.idempotency_headers {
            let n = normalise(h);
            if !n.is_empty() {
                c.sinks.key_names.push(n.clone());
                c.sinks.key_variables.push(n);
            }
        }
        if !ext.idempotency_headers.is_empty() {
            // Configured names may be spelled with separators anywhere: no cheap rejection.
            c.key_name_fragments.clear();
        }
        const ALL_LANGS: [&str; 3] = ["java", "kotlin", "rust"];
        for src in &ext.nondeterministic_sources {
            let (recv, call) = match src.rsplit_once("::").or_else(|| src.rsplit_once('.')) {
                Some((r, m)) => (crate::facts::simple_name(r).to_string(), m.to_string()),
                None => (String::new(), src.clone()),
            };
            c.special_calls.insert(call.clone());
            c.sources.push(SourceEntry {
                langs: ALL_LANGS.map(String::from).to_vec(),
                receivers: vec![recv],
                calls: vec![call],
                kind: SourceKind::Random,
            });
        }
        for (i, it) in ext.interceptors.iter().enumerate() {
            let framework = it.framework.clone().unwrap_or_else(|| it.supertype.clone());
            c.interceptors.push(InterceptorEntry {
                id: format!("config-{i}"),
                framework,
                kind: "interceptor".into(),
                langs: ALL_LANGS.map(String::from).to_vec(),
                supertypes: vec![crate::facts::simple_name(&it.supertype).to_string()],
                methods: vec![it.method.clone()],
                registrations: Vec::new(),
                receiver_hints: Vec::new(),
                chain_hints: Vec::new(),
                class_annotations: Vec::new(),
                method_annotations: Vec::new(),
                lambda_params: None,
                defined_in: Vec::new(),
                sam: Vec::new(),
                imports: Vec::new(),
                not_imports: Vec::new(),
                returns_handler: false,
                why: format!(
                    "the configuration declares `{}.{}` as code that runs for every request, so every retry of the call runs it again and mints a new key",
                    it.supertype, it.method
                ),
            });
        }
        c.retry_helpers = ext.retry_helpers.clone();
        c.scheduler_apis = ext.scheduler_apis.clone();
        c.money_calls = ext.money_calls.clone();
        c.lock_apis = ext.lock_apis.clone();
        if !ext.money_endpoints.is_empty() {
            c.coord.endpoint.push(Endpoint {
                provider: "the provider".into(),
                paths: ext.money_endpoints.clone(),
                hosts: Vec::new(),
                host_paths: Vec::new(),
            });
        }
        Box::leak(Box::new(c))
    }

    fn parse(sources: &str, sinks: &str, interceptors: &str) -> Result<Catalog, String> {
        let s: SourcesFile = toml::from_str(sources).map_err(|e| format!("sources.toml: {e}"))?;
        let k: Sinks = toml::from_str(sinks).map_err(|e| format!("sinks.toml: {e}"))?;
        let i: InterceptorsFile =
            toml::from_str(interceptors).map_err(|e| format!("interceptors.toml: {e}"))?;
        let retry: RetryFile = toml::from_str(RETRY).map_err(|e| format!("retry.toml: {e}"))?;
        let coord: Coordination =
            toml::from_str(COORDINATION).map_err(|e| format!("coordination.toml: {e}"))?;
        let sdks: SdksFile = toml::from_str(SDKS).map_err(|e| format!("sdks.toml: {e}"))?;
        let mut special_calls: HashSet<String> = HashSet::default();
        for e in &s.source {
            special_calls.extend(e.calls.iter().cloned());
        }
        for list in [
            &s.constructors.time,
            &s.constructors.random,
            &s.clocks.methods,
            &s.random_objects.methods_jvm,
            &s.random_objects.methods_rust,
            &s.period.conversions,
            &s.period.constructors,
            &s.period.formatters,
            &k.memoizers,
        ] {
            special_calls.extend(list.iter().cloned());
        }
        special_calls.extend(["from", "of", "ofInstant", "parse"].map(String::from));
        special_calls.extend(coord.locks.env_calls.iter().cloned());
        let key_name_fragments = fragments(&k.key_names);
        let stems = |words: Vec<&String>| {
            aho_corasick::AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(words)
                .map_err(|e| format!("coordination.toml: {e}"))
        };
        let m = &coord.money;
        let money_stems = stems(
            m.verbs
                .iter()
                .chain(&m.first_verbs)
                .chain(&m.objects)
                .collect(),
        )?;
        let lock_stems = stems(coord.locks.words.iter().collect())?;
        Ok(Catalog {
            special_calls,
            key_name_fragments,
            money_stems,
            lock_stems,
            retry_helpers: Vec::new(),
            scheduler_apis: Vec::new(),
            money_calls: Vec::new(),
            lock_apis: Vec::new(),
            sources: s.source,
            constructors: s.constructors,
            clocks: s.clocks,
            random_objects: s.random_objects,
            macros: s.macros,
            period: s.period,
            sinks: k,
            interceptors: i.interceptor,
            inferred_interceptor: i.inferred,
            clients: i.clients,
            retry,
            coord,
            sdks: sdks.sdk,
        })
    }

    /// Does a call `receiver.name(..)` (receiver's last path segment, `None` for a bare call)
    /// name a nondeterministic source in `lang`?
    pub fn source_call(
        &self,
        lang: Lang,
        receiver: Option<&str>,
        name: &str,
    ) -> Option<SourceKind> {
        self.sources.iter().find_map(|e| {
            if !e.langs.iter().any(|l| l == lang.name()) || !e.calls.iter().any(|c| c == name) {
                return None;
            }
            let ok = e.receivers.iter().any(|r| match (r.as_str(), receiver) {
                ("*", _) => true,
                ("", None) => true,
                (r, Some(recv)) => recv == r || recv.ends_with(&format!(".{r}")),
                _ => false,
            }) || (e.receivers.is_empty() && receiver.is_none());
            ok.then_some(e.kind)
        })
    }

    /// Does any catalogue entry mention a call named `name`?
    pub fn is_special_call(&self, name: &str) -> bool {
        self.special_calls.contains(name)
    }

    /// Is `name` (a header, attribute, map key or JSON field name) an idempotency key name?
    /// A string literal that is a key's name: name-like (`"Idempotency-Key"`,
    /// `"stripe.idempotency_key"`), not a message that mentions one (`"missing
    /// Idempotency-Key for {}"`, `"open key {idempotency_key}"`).
    pub fn is_key_name_literal(&self, s: &str) -> bool {
        s.len() <= 64
            && s.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && self.is_key_name(s)
    }

    pub fn is_key_name(&self, name: &str) -> bool {
        // Cheap rejection before normalising.
        if !self.key_name_fragments.is_empty()
            && !self
                .key_name_fragments
                .iter()
                .any(|t| contains_ignore_ascii_case(name, t))
        {
            return false;
        }
        // The key token ends the name: `X-Idempotency-Key`, `stripe.idempotency_key`, not
        // `idempotency_key.elapsed_ns`.
        let n = normalise(name);
        self.sinks.key_names.iter().any(|k| n.ends_with(k.as_str()))
    }

    /// Is `name` (a variable, field or parameter) named like something holding a key?
    /// `idempotencyKey`, `stripeIdempotencyKey`, `idempotencyKeyValue`; not
    /// `IDEMPOTENCY_KEY_HEADER`, `idempotencyKeyExpiresAt`, `idempotencyKeyEnabled`.
    pub fn is_key_variable(&self, name: &str) -> bool {
        if !self.key_name_fragments.is_empty() && !contains_ignore_ascii_case(name, "idem") {
            return false;
        }
        let n = normalise(name);
        self.sinks.key_variables.iter().any(|k| {
            n.find(k.as_str()).is_some_and(|i| {
                let tail = &n[i + k.len()..];
                tail.is_empty() || self.sinks.key_variable_suffixes.iter().any(|s| tail == s)
            })
        })
    }

    /// Is a call named `name` a setter that takes a key (`setIdempotencyKey`, `idempotency_key`)?
    pub fn is_key_setter(&self, name: &str) -> bool {
        if self.sinks.key_wrappers.iter().any(|w| w == name) {
            return true;
        }
        let n = normalise(name);
        self.sinks.setter_prefixes.iter().any(|p| {
            n.strip_prefix(p.as_str())
                .is_some_and(|rest| self.sinks.key_variables.iter().any(|k| rest == k))
        })
    }

    pub fn is_memoizer(&self, name: &str) -> bool {
        self.sinks.memoizers.iter().any(|m| m == name)
    }

    /// Every interceptor entry's supertypes (`Interceptor`, `ClientHttpRequestInterceptor`).
    pub fn interceptor_supertypes(&self) -> HashSet<&str> {
        self.interceptors
            .iter()
            .flat_map(|e| &e.supertypes)
            .map(String::as_str)
            .collect()
    }

    pub fn interceptors_for(&self, lang: Lang) -> impl Iterator<Item = &InterceptorEntry> {
        self.interceptors
            .iter()
            .filter(move |e| e.langs.iter().any(|l| l == lang.name()))
    }
}

/// The first three letters of each built-in key name (`idem`, `paypal`, `opc`): one of them
/// occurs, unbroken, in every spelling of those names.
fn fragments(key_names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in key_names {
        let f: String = k.chars().take(3).collect();
        if !f.is_empty() && !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

/// ASCII case-insensitive substring test without allocating.
pub fn contains_ignore_ascii_case(hay: &str, needle: &str) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

/// Lower case, letters and digits only.
pub fn normalise(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(|c| c.to_lowercase())
        .collect()
}

/// Does a date/time format pattern print only a calendar period (no time of day)?
/// Java patterns: `yyyy-MM`, `yyyyMMdd`, `uuuu-MM`; strftime: `%Y-%m`, `%Y%m%d`, `%F`.
pub fn is_period_pattern(p: &str) -> bool {
    if p.contains('%') {
        // strftime: any time-of-day or epoch specifier makes it a timestamp.
        let mut chars = p.chars();
        let mut saw_date = false;
        while let Some(c) = chars.next() {
            if c == '%' {
                let mut spec = chars.next();
                while matches!(
                    spec,
                    Some('-' | '_' | '0' | '^' | '#' | '.' | '3' | '6' | '9')
                ) {
                    spec = chars.next();
                }
                match spec {
                    Some(
                        'Y' | 'y' | 'm' | 'd' | 'e' | 'F' | 'B' | 'b' | 'h' | 'G' | 'g' | 'V' | 'U'
                        | 'W' | 'j' | 'C' | 'D' | 'x' | 'u' | 'w' | 'a' | 'A',
                    ) => saw_date = true,
                    Some('%' | 'n' | 't') => {}
                    _ => return false,
                }
            }
        }
        return saw_date;
    }
    // Java DateTimeFormatter / SimpleDateFormat letters; quoted text is literal.
    let mut in_quote = false;
    let mut saw_date = false;
    for c in p.chars() {
        if c == '\'' {
            in_quote = !in_quote;
            continue;
        }
        if in_quote || !c.is_ascii_alphabetic() {
            continue;
        }
        match c {
            'y' | 'u' | 'M' | 'L' | 'd' | 'D' | 'Q' | 'q' | 'Y' | 'w' | 'W' | 'E' | 'e' | 'c'
            | 'F' | 'G' => saw_date = true,
            _ => return false,
        }
    }
    saw_date
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_catalog_parses() {
        let c = Catalog::parse(SOURCES, SINKS, INTERCEPTORS).unwrap();
        assert!(c.sources.len() > 10);
        assert!(c.interceptors.iter().any(|i| i.id == "okhttp"));
    }

    #[test]
    fn key_names() {
        let c = Catalog::builtin();
        for n in [
            "Idempotency-Key",
            "idempotency_key",
            "X-Idempotency-Key",
            "IDEMPOTENCY-KEY",
            "PayPal-Request-Id",
            "opc-retry-token",
            "stripe.idempotency_key",
        ] {
            assert!(c.is_key_name(n), "{n}");
        }
        for n in [
            "X-Request-Id",
            "X-Correlation-Id",
            "Authorization",
            "traceparent",
            "",
        ] {
            assert!(!c.is_key_name(n), "{n}");
        }
    }

    #[test]
    fn key_name_literals_are_names_not_messages() {
        let c = Catalog::builtin();
        for n in [
            "Idempotency-Key",
            "stripe.idempotency_key",
            "X-Idempotency-Key",
        ] {
            assert!(c.is_key_name_literal(n), "{n}");
        }
        for n in [
            "opened tab {tab_id} (open key {idempotency_key})",
            "missing Idempotency-Key",
            "retrying with idempotency_key",
        ] {
            assert!(c.is_key_name(n), "{n} ends with a key name");
            assert!(!c.is_key_name_literal(n), "{n} is a message");
        }
    }

    #[test]
    fn key_variables() {
        let c = Catalog::builtin();
        for n in [
            "idempotencyKey",
            "idempotency_key",
            "stripeIdempotencyKey",
            "idemKey",
        ] {
            assert!(c.is_key_variable(n), "{n}");
        }
        for n in [
            "IDEMPOTENCY_KEY_HEADER",
            "idempotencyKeyHeaderName",
            "requestId",
            "key",
            "idempotencyKeyEnabled",
        ] {
            assert!(!c.is_key_variable(n), "{n}");
        }
    }

    #[test]
    fn setters() {
        let c = Catalog::builtin();
        for n in [
            "setIdempotencyKey",
            "idempotencyKey",
            "with_idempotency_key",
            "idempotency_key",
            "Idempotent",
        ] {
            assert!(c.is_key_setter(n), "{n}");
        }
        for n in ["setRequestId", "header", "idempotencyKeyHeader"] {
            assert!(!c.is_key_setter(n), "{n}");
        }
    }

    #[test]
    fn sources() {
        let c = Catalog::builtin();
        assert_eq!(
            c.source_call(Lang::Java, Some("UUID"), "randomUUID"),
            Some(SourceKind::Random)
        );
        assert_eq!(
            c.source_call(Lang::Java, Some("java.util.UUID"), "randomUUID"),
            Some(SourceKind::Random)
        );
        assert_eq!(
            c.source_call(Lang::Rust, Some("Uuid"), "new_v4"),
            Some(SourceKind::Random)
        );
        assert_eq!(
            c.source_call(Lang::Rust, None, "thread_rng"),
            Some(SourceKind::Random)
        );
        assert_eq!(
            c.source_call(Lang::Rust, Some("rand"), "random"),
            Some(SourceKind::Random)
        );
        assert_eq!(c.source_call(Lang::Java, Some("YearMonth"), "now"), None);
        assert_eq!(c.source_call(Lang::Java, Some("LocalDate"), "now"), None);
        assert_eq!(
            c.source_call(Lang::Java, Some("UUID"), "nameUUIDFromBytes"),
            None
        );
        assert_eq!(c.source_call(Lang::Rust, Some("Uuid"), "new_v5"), None);
    }

    #[test]
    fn period_patterns() {
        for p in [
            "yyyy-MM",
            "yyyyMMdd",
            "uuuu-MM",
            "%Y-%m",
            "%Y%m%d",
            "%F",
            "yyyy-'W'ww",
        ] {
            assert!(is_period_pattern(p), "{p}");
        }
        for p in [
            "yyyy-MM-dd'T'HH:mm:ss",
            "HHmmss",
            "%Y-%m-%dT%H:%M:%S",
            "%s",
            "yyyyMMddHHmmssSSS",
            "",
            "abc",
        ] {
            assert!(!is_period_pattern(p), "{p}");
        }
    }
}
