//! Per-process schedulers: code that runs on a timer, at start-up, or in a sleep loop, in every
//! replica of the service.

use crate::coord::Coord;
use crate::coord::syntax::{named_fn, peel};
use crate::facts::{Expr, ExprKind, FnKind, LoopKind, Span, simple_name};
use crate::project::{FnRef, TypeRef, walk_expr, walk_stmts};
use rayon::prelude::*;

/// A job that every process runs.
pub struct Job<'p> {
    /// Where it is reported: the scheduling call, the annotation, or the method name.
    pub report: (usize, Span),
    /// The function the report location belongs to.
    pub at: FnRef,
    /// What schedules it, for the message (`scheduleAtFixedRate`, `@Scheduled`).
    pub how: String,
    /// Why it runs in every replica.
    pub why: &'static str,
    /// The code the job runs.
    pub entries: Vec<(FnRef, &'p Expr)>,
    /// Functions the job runs as a whole.
    pub entry_fns: Vec<FnRef>,
    /// Set when the job is inferred (a timer loop started from `main` through calls that are
    /// not in the catalogue): what was inferred and why.
    pub inferred: Option<String>,
}

const TIMER_WHY: &str = "the timer lives in this process, so every replica of the service starts its own and each one runs the job";
const ANNOTATION_WHY: &str =
    "the scheduler that runs it is per process, so every replica runs the job at the same time";
const STARTUP_WHY: &str =
    "it runs when each process starts, so every replica (and every restart or deploy) runs it";
const LOOP_WHY: &str =
    "the loop runs in this process, so every replica runs its own copy on the same schedule";
const QUARTZ_WHY: &str =
    "Quartz with an in-memory (non-clustered) job store fires the job in every replica";

/// Where a job entry's walk starts.
enum EntryStart {
    /// The `run` of a `Runnable` (or the like) it builds or holds: through a call.
    Runs(Vec<FnRef>),
    /// A lambda held in a local or field: its body, walked where the job starts.
    Lambda(FnRef),
    /// The entry's own code, in the job's function.
    Code,
}

impl<'p> Coord<'p> {
    /// Every per-process job in the project that may move money: jobs whose walk cannot
    /// reach money ([`Self::job_may_move_money`]) may be left out, and are where finding them
    /// costs (a sleep loop, a timer loop, an annotation).
    pub fn jobs(&self) -> Vec<Job<'p>> {
        let mut out = Vec::new();
        // Whether Quartz runs clustered: looked up (a scan of every file) only once a Quartz
        // job needs the answer.
        let clustered = std::cell::OnceCell::new();
        let clustered = || *clustered.get_or_init(|| self.quartz_clustered());
        let scheduling = self.scheduling_call_names();
        let may_call = self.p.units_naming_any(|n| scheduling.contains(&n));
        // A file can hold a job that may move money only where a function may reach money
        // (an annotated job, or any job whose entry is code of the file), where a scheduling
        // call is named or `main` is declared (a call job, an inferred one from `main`) and
        // the file names what an entry may reach money through (`units_naming_money`), or
        // where a type extends a start-up or Quartz type (a type job): the others are not
        // read.
        let s = &self.cat.coord.schedulers;
        let job_types: Vec<&str> = s
            .startup_types
            .iter()
            .chain(&s.quartz_types)
            .map(|(t, _)| t.as_str())
            .collect();
        let gate = self.money_gate();
        let names_money = self.units_naming_money();
        let may_hold: Vec<bool> = (0..self.p.units.len())
            .into_par_iter()
            .map(|u| {
                let decls = self.p.units[u].decls();
                gate.may_reach_in(u)
                    || ((may_call[u] || decls.functions.iter().any(|f| f.name == "main"))
                        && names_money[u])
                    || (0..decls.types.len()).any(|t| {
                        self.p
                            .all_supertypes(TypeRef { unit: u, t })
                            .iter()
                            .any(|x| job_types.contains(&x.as_str()))
                    })
            })
            .collect();
        self.p.prefetch(
            may_hold
                .iter()
                .enumerate()
                .filter(|(_, m)| **m)
                .map(|(u, _)| u),
        );
        for (u, unit) in self.p.units.iter().enumerate() {
            if !may_hold[u] {
                continue;
            }
            for (f, func) in unit.facts().functions.iter().enumerate() {
                let at = FnRef { unit: u, f };
                self.annotated_job(at, &mut out);
                // `main` is looked at for tasks it starts through unlisted calls (inference).
                if !may_call[u] && func.name.as_deref() != Some("main") {
                    continue;
                }
                let mut calls: Vec<&'p Expr> = Vec::new();
                walk_stmts(&func.body, &mut |e| {
                    if matches!(e.kind, ExprKind::Call { .. } | ExprKind::New { .. }) {
                        calls.push(e);
                    }
                });
                for c in calls {
                    if let ExprKind::New { ty, args, .. } = &c.kind {
                        self.spawned_loop(at, c, simple_name(ty), args, &mut out);
                    } else {
                        let before = out.len();
                        self.call_job(at, c, &mut out);
                        if out.len() == before {
                            self.boot_task_job(at, c, &mut out);
                        }
                    }
                }
            }
            for (t, ty) in unit.facts().types.iter().enumerate() {
                self.type_job(TypeRef { unit: u, t }, ty, &clustered, &mut out);
            }
        }
        out
    }

    /// Per unit: may a job started there reach money written elsewhere? A job's entry
    /// ([`Self::entry_start`]) is code of the file it is started in (a lambda, the job's own
    /// function, a `Runnable` declared there: `MoneyGate::may_reach_in`), a function it
    /// references or calls, or the `run` of a type it names ([`Self::runnable_run`]:
    /// `new BillingTask()`, a local or field of that type): so only a file that may call a
    /// function that may reach money (its name, where the resolution could run it from:
    /// `Project::may_call_from`), or names a type such a function is the `run` of.
    fn units_naming_money(&self) -> Vec<bool> {
        let gate = self.money_gate();
        if gate.is_open() {
            return vec![true; self.p.units.len()];
        }
        let mut out = vec![false; self.p.units.len()];
        for f in gate.members() {
            if let Some(name) = self.p.func(f).name.as_deref() {
                let from = self.p.may_call_from(f);
                for u in self.p.units_naming(name) {
                    out[u] = out[u] || from.may_call(self.p, u);
                }
            }
            if let Some(t) = self.p.enclosing_type(f)
                && let Some(n) = self.p.units[f.unit].facts().types[t].name.as_deref()
                && self.runnable_run(simple_name(n)).contains(&f)
            {
                for u in self.p.units_naming(simple_name(n)) {
                    out[u] = true;
                }
            }
        }
        out
    }

    /// The names [`Self::call_job`] looks for, each of which it compares whole with a call's
    /// name, a type built or a receiver's: a file whose code writes none of them schedules
    /// nothing by a call. (A cron job is `Job::new(..)`: its receiver's name is the word.)
    fn scheduling_call_names(&self) -> Vec<&str> {
        let s = &self.cat.coord.schedulers;
        self.cat
            .scheduler_apis
            .iter()
            .map(|api| api.rsplit_once('.').map_or(api.as_str(), |(_, m)| m))
            .chain(s.periodic_calls.iter().map(String::as_str))
            .chain(s.hinted_calls.iter().map(String::as_str))
            .chain(s.cron_receivers.iter().map(String::as_str))
            .chain(s.chain_jobs.iter().map(|(_, mark)| mark.as_str()))
            .chain(s.spawners.iter().map(String::as_str))
            .chain(s.startup_types.iter().map(|(t, _)| t.as_str()))
            .collect()
    }

    fn annotated_job(&self, at: FnRef, out: &mut Vec<Job<'p>>) {
        // Every job found here starts at `at`: one that cannot reach money is not reported.
        if !self.money_gate().may_reach(at) {
            return;
        }
        let func = self.p.func(at);
        let s = &self.cat.coord.schedulers;
        if let Some(a) = func
            .annotations
            .iter()
            .find(|a| s.annotations.contains(&a.name))
        {
            out.push(Job {
                report: (at.unit, a.span),
                at,
                how: format!("@{}", a.name),
                why: ANNOTATION_WHY,
                entries: Vec::new(),
                entry_fns: vec![at],
                inferred: None,
            });
            return;
        }
        // `@EventListener(ApplicationReadyEvent.class)`, `void onStart(@Observes StartupEvent e)`.
        let is_startup_event = |t: &str| s.startup_events.iter().any(|e| e == simple_name(t));
        let listener = func
            .annotations
            .iter()
            .find(|a| s.startup_annotations.contains(&a.name));
        let by_arg = listener.is_some_and(|a| {
            a.args.iter().any(|x| {
                let mut yes = false;
                walk_expr(&x.value, &mut |y| {
                    if let Some(p) = y.path_text()
                        && p.split('.').any(is_startup_event)
                    {
                        yes = true;
                    }
                });
                yes
            })
        });
        let by_param = func.params.iter().any(|p| {
            p.ty.as_deref().is_some_and(is_startup_event)
                && (listener.is_some()
                    || p.annotations
                        .iter()
                        .any(|a| s.startup_annotations.contains(&a.name)))
        });
        if by_arg || by_param {
            out.push(Job {
                report: (at.unit, func.name_span),
                at,
                how: "a start-up event listener".into(),
                why: STARTUP_WHY,
                entries: Vec::new(),
                entry_fns: vec![at],
                inferred: None,
            });
        }
        // `@Bean CommandLineRunner billing(..) { return args -> ..; }`.
        if let Some(rt) = &func.return_type
            && s.startup_types.iter().any(|(t, _)| t == simple_name(rt))
            && func.kind != FnKind::Lambda
        {
            out.push(Job {
                report: (at.unit, func.name_span),
                at,
                how: format!("a `{}` bean", simple_name(rt)),
                why: STARTUP_WHY,
                entries: Vec::new(),
                entry_fns: vec![at],
                inferred: None,
            });
        }
    }

    fn type_job(
        &self,
        r: TypeRef,
        ty: &'p crate::facts::TypeDecl,
        clustered: &dyn Fn() -> bool,
        out: &mut Vec<Job<'p>>,
    ) {
        let s = &self.cat.coord.schedulers;
        let supers = self.p.all_supertypes(r);
        let facts = &self.p.units[r.unit].facts();
        for (sup, method) in &s.startup_types {
            if !supers.iter().any(|x| x == sup) {
                continue;
            }
            for &m in &ty.methods {
                let func = &facts.functions[m];
                if func.name.as_deref() != Some(method.as_str()) {
                    continue;
                }
                // `ApplicationListener<X>`, `ApplicationEventListener<X>`: only start-up events.
                if s.event_listener_types.contains(sup)
                    && !func.params.iter().any(|p| {
                        p.ty.as_deref()
                            .is_some_and(|t| s.startup_events.iter().any(|e| e == simple_name(t)))
                    })
                {
                    continue;
                }
                let at = FnRef { unit: r.unit, f: m };
                out.push(Job {
                    report: (r.unit, func.name_span),
                    at,
                    how: format!("`{sup}.{method}`"),
                    why: STARTUP_WHY,
                    entries: Vec::new(),
                    entry_fns: vec![at],
                    inferred: None,
                });
            }
        }
        let quartz = facts
            .imports
            .iter()
            .any(|i| i.starts_with(&s.quartz_import))
            || ty
                .supertypes
                .iter()
                .any(|t| t.starts_with(&s.quartz_import));
        if !quartz || clustered() {
            return;
        }
        for (sup, method) in &s.quartz_types {
            if !supers.iter().any(|x| x == sup) {
                continue;
            }
            for &m in &ty.methods {
                let func = &facts.functions[m];
                if func.name.as_deref() != Some(method.as_str()) || !func.has_body {
                    continue;
                }
                let at = FnRef { unit: r.unit, f: m };
                out.push(Job {
                    report: (r.unit, func.name_span),
                    at,
                    how: format!("Quartz `{sup}.{method}`"),
                    why: QUARTZ_WHY,
                    entries: Vec::new(),
                    entry_fns: vec![at],
                    inferred: None,
                });
            }
        }
    }

    /// A call that schedules or spawns a job.
    fn call_job(&self, at: FnRef, c: &'p Expr, out: &mut Vec<Job<'p>>) {
        let ExprKind::Call {
            receiver,
            name,
            args,
        } = &c.kind
        else {
            return;
        };
        let s = &self.cat.coord.schedulers;
        let recv = receiver.as_deref();
        // The receiver's text, lower case (only a few calls need it: built on demand).
        let recv_text = || {
            recv.map(|r| self.p.units[at.unit].src.slice(r.span).to_ascii_lowercase())
                .unwrap_or_default()
        };
        let configured = self
            .cat
            .scheduler_apis
            .iter()
            .any(|api| match api.rsplit_once('.') {
                Some((r, m)) => {
                    m == name
                        && recv.is_some_and(|x| {
                            x.path_text()
                                .is_some_and(|p| simple_name(&p) == simple_name(r))
                                || self
                                    .flow
                                    .type_in(at, x)
                                    .is_some_and(|t| t == simple_name(r))
                        })
                }
                None => api == name,
            });
        let periodic = configured
            || (s.periodic_calls.iter().any(|p| p == name)
                && (!matches!(name.as_str(), "timer" | "fixedRateTimer")
                    || recv.is_none()
                    || recv_text().ends_with("concurrent"))
                // A project function of that name is not the library's.
                && !self
                    .flow
                    .call_targets(at, recv, name, args)
                    .iter()
                    .any(|t| self.p.func(*t).has_body));
        // In a file that uses a job store (JobRunr), a receiver named like a scheduler is the
        // store's unless its type is a per-process one.
        let job_store = self.p.imports_any(at.unit, &s.job_store_imports);
        let is_hinted = |name: &str, recv: Option<&'p Expr>| {
            s.hinted_calls.iter().any(|p| p == name)
                && recv.is_some_and(|r| {
                    (!job_store && {
                        let text = self.p.units[at.unit].src.slice(r.span).to_ascii_lowercase();
                        s.receiver_hints.iter().any(|h| text.contains(h.as_str()))
                    }) || self
                        .flow
                        .type_in(at, r)
                        .is_some_and(|t| s.types.contains(&t))
                })
        };
        // clokwerk `scheduler.every(1.day()).at("01:30").run(task)`: the task is handed to a
        // call further down the chain the hinted call starts.
        let mut chain = recv;
        let mut hinted = is_hinted(name, recv);
        while !hinted
            && let Some(ExprKind::Call {
                receiver: r,
                name: n,
                ..
            }) = chain.map(|c| &c.kind)
        {
            hinted = is_hinted(n, r.as_deref());
            chain = r.as_deref();
        }
        let timer_job = |how: String, out: &mut Vec<Job<'p>>| {
            let entries = self.task_args(at, args);
            if !entries.is_empty() {
                out.push(Job {
                    report: (at.unit, c.span),
                    at,
                    how,
                    why: TIMER_WHY,
                    entries,
                    entry_fns: Vec::new(),
                    inferred: None,
                });
            }
        };
        if periodic || hinted {
            timer_job(format!("`{name}`"), out);
            return;
        }
        // apalis `..backend(CronStream::new(s)).build_fn(job)`: the task is handed to the call
        // that ends a builder chain naming a per-process timer source.
        if let Some((_, mark)) = s.chain_jobs.iter().find(|(c, _)| c == name)
            && recv.is_some_and(|r| {
                let mut hit = false;
                walk_expr(r, &mut |x| {
                    if let ExprKind::Call { name: n, .. } | ExprKind::Name(n) = &x.kind
                        && (n == mark
                            || x.path_text()
                                .is_some_and(|p| simple_name(&p) == mark.as_str()))
                    {
                        hit = true;
                    }
                });
                hit
            })
        {
            // The task: a closure, or a function named by its name (`build_fn(charge_due)`).
            let entry_fns: Vec<FnRef> = args
                .iter()
                .filter_map(|a| match &peel(&a.value).kind {
                    ExprKind::Name(n) => self.p.declared_for(at.unit, n),
                    _ => None,
                })
                .collect();
            let entries = self.task_args(at, args);
            if !entries.is_empty() || !entry_fns.is_empty() {
                out.push(Job {
                    // On the call's name: the chain starts lines above it.
                    report: (
                        at.unit,
                        crate::coord::sdk::name_span(self.p, at.unit, c, name, args),
                    ),
                    at,
                    how: format!("`{name}` of a `{mark}` worker"),
                    why: TIMER_WHY,
                    entries,
                    entry_fns,
                    inferred: None,
                });
            }
            return;
        }
        // tokio-cron-scheduler: `Job::new_async("0 0 * * * *", |id, l| Box::pin(async move { .. }))`.
        if s.cron_calls.iter().any(|x| x == name)
            && recv
                .and_then(|r| r.path_text())
                .is_some_and(|p| s.cron_receivers.iter().any(|x| x == simple_name(&p)))
            && args
                .iter()
                .any(|a| matches!(a.value.kind, ExprKind::Str(_)))
        {
            timer_job(format!("`Job::{name}`"), out);
            return;
        }
        // `launch { while (..) { ..; delay(..) } }`, `tokio::spawn(async move { loop { tick } })`.
        self.spawned_loop(at, c, name, args, out);
        // Kotlin `CommandLineRunner { .. }` SAM in a function: reported on that function.
        if recv.is_none()
            && s.startup_types.iter().any(|(t, _)| t == name)
            && let Some(last) = args.last()
            && matches!(last.value.kind, ExprKind::Lambda(_))
        {
            let owner = named_fn(self.p, at);
            let already = self
                .p
                .func(owner)
                .return_type
                .as_deref()
                .is_some_and(|rt| simple_name(rt) == name);
            if !already {
                out.push(Job {
                    report: (at.unit, self.p.func(owner).name_span),
                    at: owner,
                    how: format!("a `{name}`"),
                    why: STARTUP_WHY,
                    entries: vec![(at, &last.value)],
                    entry_fns: Vec::new(),
                    inferred: None,
                });
            }
        }
    }

    /// `launch { while (..) { ..; delay(..) } }`, `tokio::spawn(async move { loop { tick } })`,
    /// `new Thread(() -> { while (true) { ..; Thread.sleep(..) } })`: a spawned sleep loop.
    fn spawned_loop(
        &self,
        at: FnRef,
        c: &'p Expr,
        name: &str,
        args: &'p [crate::facts::Arg],
        out: &mut Vec<Job<'p>>,
    ) {
        if !self.cat.coord.schedulers.spawners.iter().any(|x| x == name) {
            return;
        }
        let entries = self.task_args(at, args);
        // (A job that cannot reach money is not reported: the sleep loop is not looked for.)
        if !entries.is_empty()
            && entries
                .iter()
                .any(|(f, e)| self.entry_may_move_money(*f, e))
            && entries.iter().any(|(f, e)| self.sleeps_in_loop(*f, e, 0))
        {
            out.push(Job {
                report: (at.unit, c.span),
                at,
                how: format!("`{name}` of a sleep loop"),
                why: LOOP_WHY,
                entries,
                entry_fns: Vec::new(),
                inferred: None,
            });
        }
    }

    /// Inference: does a call named `name`, not a project function, wait for a timer, a tick
    /// or a cron time by its words (`next_tick`, `upcoming`, `awaitNextFire`)?
    fn is_inferred_wait(&self, name: &str) -> bool {
        let s = &self.cat.coord.schedulers;
        crate::coord::words::words(name)
            .iter()
            .any(|w| s.inferred_waits.iter().any(|x| x == w))
            && !self
                .p
                .fns_named(name)
                .iter()
                .any(|f| self.p.func(*f).has_body)
    }

    /// Inference: a task that `main` starts through a call idemlint does not list
    /// (`acme_rt::spawn_task(billing_loop(client))`, `Workers.start(() -> ..)`) and that loops
    /// forever waiting on a timer, tick or cron stream is a per-process scheduler.
    fn boot_task_job(&self, at: FnRef, c: &'p Expr, out: &mut Vec<Job<'p>>) {
        let ExprKind::Call { name, args, .. } = &c.kind else {
            return;
        };
        let s = &self.cat.coord.schedulers;
        if s.spawners.iter().any(|x| x == name) || self.p.func(at).name.as_deref() != Some("main") {
            return;
        }
        // A project function called from main is the task itself only when it is handed on;
        // one called directly is code main runs (its own loop is found below).
        let entries = self.task_args(at, args);
        if !entries
            .iter()
            .any(|(f, e)| self.entry_may_move_money(*f, e))
            || !entries.iter().any(|(f, e)| self.task_loops_on_timer(*f, e))
        {
            return;
        }
        out.push(Job {
            report: (at.unit, c.span),
            at,
            how: format!("`{name}` from `main`, of a timer loop (inferred)"),
            why: LOOP_WHY,
            entries,
            entry_fns: Vec::new(),
            inferred: Some(format!(
                "`{name}` is not a scheduler or spawner idemlint knows; it is called from `main` with a task that loops forever waiting on a timer, so it is taken to run that loop in every process"
            )),
        });
    }

    /// Inference: is the task `e` (a lambda, a block, or a call of a project function that
    /// is the task) itself an endless loop that waits on a timer? Loops further down, in what
    /// the task calls, are not looked for: a known scheduler there is reported where it is.
    fn task_loops_on_timer(&self, at: FnRef, e: &'p Expr) -> bool {
        let timer_loop = |f: FnRef, x: &'p Expr| {
            let mut found = false;
            walk_expr(x, &mut |y| {
                if let ExprKind::Loop {
                    kind, body, header, ..
                } = &y.kind
                    && unbounded(*kind, header)
                    && (self.has_sleep(f, body, true)
                        || header.iter().any(|h| self.has_sleep(f, h, true)))
                {
                    found = true;
                }
            });
            found
        };
        let bodies: Vec<FnRef> = match &e.kind {
            ExprKind::Block(_) => return timer_loop(at, e),
            ExprKind::Lambda(id) => vec![FnRef {
                unit: at.unit,
                f: *id,
            }],
            ExprKind::Call {
                receiver,
                name,
                args,
            } => self.flow.call_targets(at, receiver.as_deref(), name, args),
            _ => return false,
        };
        bodies.into_iter().any(|g| {
            self.p.func(g).body.iter().any(|st| {
                crate::coord::syntax::stmt_exprs(st)
                    .into_iter()
                    .any(|x| timer_loop(g, x))
            })
        })
    }

    /// The task arguments of a scheduling call: lambdas, method references, `Runnable`
    /// objects, locals holding a lambda, calls of project functions (`tokio::spawn(run(..))`).
    fn task_args(&self, at: FnRef, args: &'p [crate::facts::Arg]) -> Vec<(FnRef, &'p Expr)> {
        let mut out = Vec::new();
        for a in args {
            let v = peel(&a.value);
            match &v.kind {
                // Rust `async { .. }` blocks are lowered as blocks.
                ExprKind::Lambda(_)
                | ExprKind::MethodRef { .. }
                | ExprKind::Object(_)
                | ExprKind::Block(_) => out.push((at, v)),
                ExprKind::New { body: Some(_), .. } => out.push((at, v)),
                // `new BillingTask(..)` of a project Runnable/TimerTask: its `run`.
                ExprKind::New { ty, .. } if !self.runnable_run(simple_name(ty)).is_empty() => {
                    out.push((at, v));
                }
                ExprKind::Call { name, receiver, .. } => {
                    if name.starts_with(|c: char| c.is_uppercase()) && receiver.is_none() {
                        if !self.runnable_run(name).is_empty() {
                            out.push((at, v));
                        }
                    } else if !self
                        .flow
                        .call_targets(at, receiver.as_deref(), name, &[])
                        .is_empty()
                        || self.p.count_named(name) > 0
                        || matches!(name.as_str(), "pin")
                    {
                        out.push((at, v));
                    }
                }
                ExprKind::Name(_) | ExprKind::Field { .. } => {
                    let lambda = match &v.kind {
                        ExprKind::Name(n) => self.p.lambda_bound_to(at.unit, Some(at), n, true),
                        _ => None,
                    };
                    if lambda.is_some() || !self.typed_runnable(at, v).is_empty() {
                        out.push((at, v));
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// May the job's walk ([`Self::job_reach`]) find money? Asks the money gate
    /// (`Coord::money_gate`) about each function the walk starts in, as `job_reach` starts.
    pub fn job_may_move_money(&self, job: &Job<'p>) -> bool {
        let gate = self.money_gate();
        job.entry_fns.iter().any(|f| gate.may_reach(*f))
            || job
                .entries
                .iter()
                .any(|(at, e)| self.entry_may_move_money(*at, e))
    }

    /// Where the walk of an entry `e` written in `at` starts (shared by [`Self::job_reach`] and
    /// [`Self::entry_may_move_money`], so the gate asks about what the walk walks).
    fn entry_start(&self, at: FnRef, e: &Expr) -> EntryStart {
        match &e.kind {
            ExprKind::New { ty, body: None, .. } => {
                EntryStart::Runs(self.runnable_run(simple_name(ty)))
            }
            ExprKind::Call {
                name,
                receiver: None,
                ..
            } if name.starts_with(|c: char| c.is_uppercase()) => {
                EntryStart::Runs(self.runnable_run(name))
            }
            ExprKind::Name(_) | ExprKind::Field { .. } => {
                let lambda = match &e.kind {
                    ExprKind::Name(n) => self.p.lambda_bound_to(at.unit, Some(at), n, true),
                    _ => None,
                };
                match lambda {
                    Some(id) => EntryStart::Lambda(FnRef {
                        unit: at.unit,
                        f: id,
                    }),
                    None => EntryStart::Runs(self.typed_runnable(at, e)),
                }
            }
            _ => EntryStart::Code,
        }
    }

    /// May [`Self::job_reach`] find money from the entry `e` written in `at`?
    fn entry_may_move_money(&self, at: FnRef, e: &Expr) -> bool {
        let gate = self.money_gate();
        match self.entry_start(at, e) {
            EntryStart::Runs(fs) => fs.iter().any(|f| gate.may_reach(*f)),
            EntryStart::Lambda(lf) => gate.may_reach(lf),
            // Code written in the job's function (lambdas in it included).
            EntryStart::Code => gate.may_reach(at),
        }
    }

    /// The first guard or money event of a job.
    pub fn job_reach(&self, job: &Job<'p>) -> crate::coord::Reach {
        use crate::coord::reach::Reach;
        for f in &job.entry_fns {
            match self.reach_fn(*f) {
                Reach::Nothing => {}
                r => return r,
            }
        }
        for (at, e) in &job.entries {
            let r = match self.entry_start(*at, e) {
                EntryStart::Runs(fs) => self.through(*at, e.span, &fs).unwrap_or(Reach::Nothing),
                EntryStart::Lambda(lf) => self.reach_stmts(lf, &self.p.func(lf).body, None),
                EntryStart::Code => self.reach_exprs(vec![(*at, *e)], None),
            };
            if !matches!(r, Reach::Nothing) {
                return r;
            }
        }
        Reach::Nothing
    }

    /// A field or local holding a project `Runnable` (`private final SettlementTask task;`):
    /// its `run`.
    fn typed_runnable(&self, at: FnRef, e: &Expr) -> Vec<FnRef> {
        self.flow
            .type_in(at, e)
            .map(|t| self.runnable_run(&t))
            .unwrap_or_default()
    }

    /// The `run` methods of a project type implementing `Runnable`/`TimerTask`/`Callable`.
    pub fn runnable_run(&self, ty: &str) -> Vec<FnRef> {
        let mut out = Vec::new();
        for r in self.p.types_named(ty) {
            let supers = self.p.all_supertypes(*r);
            if !supers
                .iter()
                .any(|s| matches!(s.as_str(), "Runnable" | "TimerTask" | "Callable" | "Job"))
            {
                continue;
            }
            let decl = &self.p.units[r.unit].facts().types[r.t];
            for &m in &decl.methods {
                if matches!(
                    self.p.units[r.unit].facts().functions[m].name.as_deref(),
                    Some("run" | "call")
                ) {
                    out.push(FnRef { unit: r.unit, f: m });
                }
            }
        }
        out
    }

    /// Does this task loop with a sleep (`while (..) { ..; delay(..) }`, `loop { tick().await }`),
    /// directly or in a project function it calls?
    fn sleeps_in_loop(&self, at: FnRef, e: &'p Expr, depth: u32) -> bool {
        if depth > 3 {
            return false;
        }
        let s = &self.cat.coord.schedulers;
        let mut fns: Vec<FnRef> = Vec::new();
        let mut exprs: Vec<(FnRef, &'p Expr)> = vec![(at, e)];
        let mut found = false;
        while let Some((f, x)) = exprs.pop() {
            walk_expr(x, &mut |y| match &y.kind {
                // `while (running)`, `while (true)`, `loop { }`: not a bounded retry loop
                // (`while (attempt < max)`).
                ExprKind::Loop {
                    kind, body, header, ..
                } if (unbounded(*kind, header) && self.has_sleep(f, body, false))
                    || self.takes_ticks(f, header) =>
                {
                    found = true;
                }
                // Kotlin `repeat(Int.MAX_VALUE) { ..; delay(..) }`.
                ExprKind::Call { name, args, .. } if name == "repeat" => {
                    let small = matches!(
                        args.first().map(|a| &a.value.kind),
                        Some(ExprKind::Lit(n)) if n.parse::<u64>().is_ok_and(|n| n < 1000)
                    );
                    if !small
                        && let Some(last) = args.last()
                        && let ExprKind::Lambda(id) = last.value.kind
                    {
                        let lf = FnRef {
                            unit: f.unit,
                            f: id,
                        };
                        if self.p.func(lf).body.iter().any(|st| {
                            crate::coord::syntax::stmt_exprs(st)
                                .into_iter()
                                .any(|z| self.has_sleep(lf, z, false))
                        }) {
                            found = true;
                        }
                    }
                }
                ExprKind::Lambda(id) => {
                    let lf = FnRef {
                        unit: f.unit,
                        f: *id,
                    };
                    for st in &self.p.func(lf).body {
                        for z in crate::coord::syntax::stmt_exprs(st) {
                            exprs.push((lf, z));
                        }
                    }
                }
                ExprKind::Call {
                    receiver,
                    name,
                    args,
                } if !s.sleeps.iter().any(|x| x == name) => {
                    fns.extend(self.flow.call_targets(f, receiver.as_deref(), name, args));
                }
                ExprKind::MethodRef { name, .. } => {
                    fns.extend(self.p.fns_named(name).iter().copied())
                }
                _ => {}
            });
            if found {
                return true;
            }
        }
        fns.sort();
        fns.dedup();
        fns.into_iter().take(8).any(|g| {
            self.p.func(g).has_body
                && self.p.func(g).body.iter().any(|st| {
                    crate::coord::syntax::stmt_exprs(st)
                        .into_iter()
                        .any(|x| self.sleeps_in_loop(g, x, depth + 1))
                })
        })
    }

    /// Does a loop header take the next item of a timer's tick stream
    /// (`while let Some(_) = ticks.next().await` with `ticks = stream::interval(..)`,
    /// `for (t in ticker(60_000))`)? The stream is made in the header or by a local of `at`.
    fn takes_ticks(&self, at: FnRef, header: &[Expr]) -> bool {
        let s = &self.cat.coord.schedulers;
        if s.tick_streams.is_empty() {
            return false;
        }
        let makes_ticks = |e: &Expr| {
            let mut yes = false;
            walk_expr(e, &mut |x| {
                if let ExprKind::Call { name, .. } = &x.kind
                    && s.tick_streams.iter().any(|t| t == name)
                {
                    yes = true;
                }
            });
            yes
        };
        let bound_to_ticks = |name: &str, pos: usize| {
            crate::coord::syntax::local_binding(self.p, at, name, pos)
                .and_then(|b| b.init.as_ref())
                .is_some_and(makes_ticks)
        };
        header.iter().any(|h| {
            let mut yes = false;
            walk_expr(h, &mut |x| match &x.kind {
                ExprKind::Call { .. } if makes_ticks(x) => yes = true,
                ExprKind::Name(n) if bound_to_ticks(n, x.span.start) => yes = true,
                _ => {}
            });
            yes
        })
    }

    /// Does `e` (a loop body) sleep on every pass, at its top level? A sleep inside a `catch`,
    /// an `if` or a `match` arm is a retry backoff, not a period.
    fn has_sleep(&self, at: FnRef, e: &'p Expr, infer: bool) -> bool {
        let s = &self.cat.coord.schedulers;
        let mut stack: Vec<(FnRef, &'p Expr)> = vec![(at, e)];
        let mut inlined: Vec<FnRef> = Vec::new();
        let mut steps = 0;
        while let Some((f, x)) = stack.pop() {
            steps += 1;
            if steps > 10_000 {
                return false;
            }
            match &x.kind {
                ExprKind::Call { name, .. } if s.sleeps.iter().any(|y| y == name) => return true,
                ExprKind::Call { name, .. } if infer && self.is_inferred_wait(name) => return true,
                // A project helper that sleeps (`sleepQuietly(60_000)`), looked into in place:
                // a few of them, each once.
                ExprKind::Call {
                    receiver,
                    name,
                    args,
                } if inlined.len() < 4 => {
                    for g in self.flow.call_targets(f, receiver.as_deref(), name, args) {
                        if self.p.func(g).has_body && !inlined.contains(&g) {
                            inlined.push(g);
                            for st in &self.p.func(g).body {
                                for z in crate::coord::syntax::stmt_exprs(st) {
                                    stack.push((g, z));
                                }
                            }
                        }
                    }
                    x.for_each_child(|c| stack.push((f, c)));
                }
                ExprKind::If { .. } | ExprKind::Match { .. } | ExprKind::Loop { .. } => {}
                ExprKind::Try { body, .. } => stack.push((f, body)),
                // `runCatching { ..; delay(..) }`, `select!` arms: run in place.
                ExprKind::Lambda(id) => {
                    let lf = FnRef {
                        unit: f.unit,
                        f: *id,
                    };
                    for st in &self.p.func(lf).body {
                        for z in crate::coord::syntax::stmt_exprs(st) {
                            stack.push((lf, z));
                        }
                    }
                }
                _ => x.for_each_child(|c| stack.push((f, c))),
            }
        }
        false
    }

    /// Does the project configure Quartz with a clustered job store
    /// (`org.quartz.jobStore.isClustered = true`)?
    fn quartz_clustered(&self) -> bool {
        let prop = &self.cat.coord.schedulers.quartz_clustered_property;
        // What is looked for below is written in the file: the property in a string literal,
        // `Clustered` in a call's name.
        let in_strings = crate::needles::Needles::new([prop.as_str()]);
        let naming = self.p.units_naming_any(|n| n.contains("Clustered"));
        for (u, unit) in self.p.units.iter().enumerate() {
            if !(naming[u] || self.p.units_with_strings_holding_one(u, &in_strings)) {
                continue;
            }
            for func in unit.facts().functions.iter() {
                let mut yes = false;
                walk_stmts(&func.body, &mut |e| {
                    if let ExprKind::Call { args, name, .. } = &e.kind {
                        let has_prop = args
                            .iter()
                            .any(|a| matches!(&a.value.kind, ExprKind::Str(s) if s.contains(prop.as_str())))
                            || name.contains("Clustered");
                        let has_true = args.iter().any(|a| match &a.value.kind {
                            ExprKind::Str(s) => s == "true",
                            ExprKind::Lit(l) => l == "true",
                            _ => false,
                        });
                        if has_prop && has_true {
                            yes = true;
                        }
                    }
                });
                if yes {
                    return true;
                }
            }
        }
        self.p.config_texts.iter().any(|t| {
            t.lines().any(|l| {
                let l = l.trim();
                let low = l.to_ascii_lowercase();
                (low.contains(&prop.to_ascii_lowercase()) || low.contains("is-clustered"))
                    && low.contains("true")
            })
        })
    }
}

/// Does a loop header compare (`attempt < maxAttempts`)?
/// `while (running)`, `while (true)`, `loop { }`: a loop that is not over a collection and not
/// bounded by a comparison (`while (attempt < max)` is a retry).
fn unbounded(kind: LoopKind, header: &[Expr]) -> bool {
    kind != LoopKind::ForEach && kind != LoopKind::For && !header.iter().any(compares)
}

fn compares(e: &Expr) -> bool {
    let mut yes = false;
    walk_expr(e, &mut |x| {
        if let ExprKind::Binary { op, .. } = &x.kind
            && matches!(op.as_str(), "<" | "<=" | ">" | ">=")
        {
            yes = true;
        }
    });
    yes
}

#[cfg(test)]
mod tests {
    use crate::catalog::Catalog;
    use crate::coord::{Coord, Shared};
    use std::sync::Arc;

    /// A job's entry reaches money through what its file names: a `Runnable` built for the
    /// executor runs a charging task declared elsewhere, so its file is read and the job found;
    /// a file scheduling only code that names nothing which may reach money (a `Runnable` is
    /// the charging task's supertype, not the task) is not read, nor a `main` starting such
    /// code through a call idemlint does not know, nor a job running another type's `run`.
    #[test]
    fn jobs_come_from_files_naming_money() {
        let p = crate::project::parsed(&[
            (
                "BillingTask.java",
                "class BillingTask implements Runnable {\n\
                 public void run() { stripe.charges().create(params()); }\n}",
            ),
            (
                "Boot.java",
                "class Boot {\n\
                 void start(ScheduledExecutorService s) {\n\
                 s.scheduleAtFixedRate(new BillingTask(), 0, 1, TimeUnit.HOURS);\n}\n}",
            ),
            (
                "Main.java",
                "class Main {\n\
                 public static void main(String[] args) {\n\
                 Workers.start(() -> { while (true) { flush(); Thread.sleep(1000); } });\n}\n}",
            ),
            (
                "Mailer.java",
                "class Mailer { void run() { send(); } }\nclass Cleaner { void run() { purge(); } }",
            ),
            (
                "Mail.java",
                "class Mail {\n\
                 void start(ScheduledExecutorService s, Mailer m) {\n\
                 s.scheduleAtFixedRate(m::run, 0, 1, TimeUnit.HOURS);\n}\n}",
            ),
            (
                "Metrics.java",
                "class Metrics {\n\
                 void start(ScheduledExecutorService s) {\n\
                 Runnable flush = () -> flush();\n\
                 s.scheduleAtFixedRate(flush, 0, 1, TimeUnit.MINUTES);\n}\n}",
            ),
        ]);
        let cat = Catalog::builtin();
        let flows = crate::flow::Caches::default();
        let co = Coord::new(&p, cat, &flows, Arc::new(Shared::default()));
        let jobs = co.jobs();
        assert!(
            jobs.iter()
                .any(|j| j.at.unit == 1 && co.job_may_move_money(j)),
            "the job in Boot.java"
        );
        for (u, name) in [(2, "Main.java"), (4, "Mail.java"), (5, "Metrics.java")] {
            assert!(
                p.units[u].parse_if_done().is_none(),
                "{name} was parsed for jobs"
            );
        }
    }
}
