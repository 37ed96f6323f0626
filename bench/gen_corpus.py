#!/usr/bin/env python3
"""Generate an offline benchmark corpus of realistic Java, Kotlin and Rust sources.

    python3 bench/gen_corpus.py --out DIR [--files N] [--seed S]

Used by bench/corpus.sh when none of the real repositories can be had. The mix follows the
real six-repository corpus: about 75% Java, 17% Kotlin and 8% Rust files of ~160 lines
(~5.7 KB) each on average: packages and imports, classes with fields, constructors, getters,
generics, lambdas and streams, control flow, string building, javadoc; Kotlin data classes,
extension functions, coroutines, `when`; Rust structs, impls, traits, matches, iterators,
async fns and tests. About 1.5% of the files also hold the patterns idemlint and the bench
rules look for (OkHttp / Apache HttpClient 5 interceptors, resilience4j / RetryTemplate /
tokio-retry lambdas, @Scheduled / scheduleAtFixedRate / tokio interval jobs), some of them
wrong (a key minted per attempt) and some correct. Deterministic for a given seed.
Standard library only.
"""
import argparse
import os
import random

WORDS = (
    "account order invoice payment customer ledger balance refund payout charge session token "
    "request response client server handler factory builder registry cache buffer stream "
    "channel frame codec header route policy config context resource entity record event "
    "message queue worker task job batch window metric counter timer lease claim snapshot "
    "catalog product price tax discount coupon address region tenant user profile audit"
).split()
TYPES_J = ["String", "int", "long", "boolean", "double", "List<String>", "Map<String, Object>",
           "Optional<String>", "BigDecimal", "Instant", "Duration", "byte[]"]
TYPES_K = ["String", "Int", "Long", "Boolean", "Double", "List<String>", "Map<String, Any>",
           "String?", "BigDecimal", "Instant", "Duration", "ByteArray"]
TYPES_R = ["String", "u32", "u64", "i64", "bool", "f64", "Vec<String>", "HashMap<String, u64>",
           "Option<String>", "Duration", "Vec<u8>", "&'static str"]


def cap(s):
    return s[:1].upper() + s[1:]


class G:
    def __init__(self, rng):
        self.r = rng

    def w(self):
        return self.r.choice(WORDS)

    def ident(self, n=2):
        ws = [self.w() for _ in range(self.r.randint(1, n))]
        return ws[0] + "".join(cap(x) for x in ws[1:])

    def cls(self):
        return cap(self.ident(3))

    def sentence(self):
        n = self.r.randint(6, 16)
        return cap(" ".join(self.w() for _ in range(n))) + "."


# ----------------------------------------------------------------------------------- Java

def java_method(g, lines, fields):
    r = g.r
    name = g.ident(3)
    ret = r.choice(TYPES_J + ["void"] * 3)
    params = ", ".join(f"{r.choice(TYPES_J)} {g.ident()}{i}" for i in range(r.randint(0, 3)))
    lines.append("    /**")
    for _ in range(r.randint(1, 3)):
        lines.append(f"     * {g.sentence()}")
    lines.append("     */")
    if r.random() < 0.3:
        lines.append("    @Override")
    lines.append(f"    public {ret} {name}({params}) {{")
    for _ in range(r.randint(2, 7)):
        k = r.random()
        v = g.ident()
        if k < 0.2:
            lines.append(f"        String {v} = \"{g.w()}-\" + {r.choice(fields)} + \":\" + {r.randint(0, 999)};")
        elif k < 0.35:
            lines.append(f"        if ({r.choice(fields)} == null || {r.choice(fields)}.isEmpty()) {{")
            lines.append(f"            throw new IllegalStateException(\"{g.sentence()}\");")
            lines.append("        }")
        elif k < 0.5:
            lines.append(f"        for (int i = 0; i < {r.randint(2, 64)}; i++) {{")
            lines.append(f"            {r.choice(fields)}.add(String.valueOf(i * {r.randint(2, 9)}));")
            lines.append("        }")
        elif k < 0.65:
            lines.append(f"        List<String> {v} = {r.choice(fields)}.stream()")
            lines.append(f"                .filter(x -> x.startsWith(\"{g.w()}\"))")
            lines.append("                .map(String::trim)")
            lines.append("                .collect(Collectors.toList());")
        elif k < 0.75:
            lines.append("        try {")
            lines.append(f"            {g.ident()}.{g.ident()}({r.choice(fields)});")
            lines.append("        } catch (RuntimeException ex) {")
            lines.append(f"            logger.warn(\"{g.sentence()}\", ex);")
            lines.append("        }")
        elif k < 0.87:
            lines.append(f"        switch ({r.choice(fields)}.size()) {{")
            for c in range(r.randint(1, 3)):
                lines.append(f"            case {c}:")
                lines.append(f"                {g.ident()}({c});")
                lines.append("                break;")
            lines.append("            default:")
            lines.append("                break;")
            lines.append("        }")
        else:
            lines.append(f"        Map<String, Object> {v} = new HashMap<>();")
            lines.append(f"        {v}.put(\"{g.w()}\", {r.choice(fields)});")
    if ret == "void":
        pass
    elif ret in ("int", "long", "double"):
        lines.append(f"        return {r.randint(0, 100)};")
    elif ret == "boolean":
        lines.append(f"        return {r.choice(fields)} != null;")
    else:
        lines.append("        return null;")
    lines.append("    }")
    lines.append("")


JAVA_PATTERNS = [
    # OkHttp interceptor, wrong
    """    static final class {C}Interceptor implements Interceptor {{
        @Override
        public Response intercept(Chain chain) throws IOException {{
            Request original = chain.request();
            String key = UUID.randomUUID().toString();
            return chain.proceed(original.newBuilder().header("Idempotency-Key", key).build());
        }}
    }}
""",
    # OkHttp interceptor, trace id only (correct)
    """    static final class {C}TracingInterceptor implements Interceptor {{
        @Override
        public Response intercept(Chain chain) throws IOException {{
            Request traced = chain.request().newBuilder()
                    .header("X-Request-Id", UUID.randomUUID().toString())
                    .build();
            return chain.proceed(traced);
        }}
    }}
""",
    # Apache HttpClient 5 interceptor, wrong
    """    static final class {C}KeyInterceptor implements HttpRequestInterceptor {{
        @Override
        public void process(HttpRequest request, EntityDetails entity, HttpContext context) {{
            if (!request.containsHeader("Idempotency-Key")) {{
                request.setHeader("Idempotency-Key", "k-" + System.currentTimeMillis());
            }}
        }}
    }}
""",
    # resilience4j, wrong
    """    public String {m}(Retry retry, PaymentApi api, long cents) {{
        Supplier<String> call = Retry.decorateSupplier(retry, () -> {{
            String key = UUID.randomUUID().toString();
            return api.charge(cents, key);
        }});
        return call.get();
    }}
""",
    # RetryTemplate, correct (key made once, outside)
    """    public String {m}(RetryTemplate retryTemplate, PaymentApi api, long cents) {{
        String key = UUID.randomUUID().toString();
        return retryTemplate.execute(ctx -> api.charge(cents, key));
    }}
""",
    # RetryTemplate, wrong
    """    public String {m}(RetryTemplate retryTemplate, PaymentApi api, long cents) {{
        return retryTemplate.execute(ctx -> api.charge(cents, UUID.randomUUID().toString()));
    }}
""",
    # @Scheduled charging job, wrong
    """    @Scheduled(cron = "0 0 3 * * *")
    public void {m}() {{
        for (Invoice invoice : invoices.findDue()) {{
            billing.chargeInvoice(invoice.getId(), invoice.getAmount());
        }}
    }}
""",
    # scheduleAtFixedRate charging job, wrong
    """    public void start{C}(ScheduledExecutorService executor) {{
        executor.scheduleAtFixedRate(() -> {{
            for (Subscription s : subscriptions.due()) {{
                payments.capturePayment(s.getId());
            }}
        }}, 0, 1, TimeUnit.HOURS);
    }}
""",
    # @Scheduled cleanup job, correct
    """    @Scheduled(fixedDelay = 60000)
    public void {m}() {{
        sessions.deleteExpired(Instant.now());
    }}
""",
]


def gen_java(g, pkg, name):
    r = g.r
    L = [f"/*", f" * Copyright 2002-2024 the original author or authors.", f" *",
         " * Licensed under the Apache License, Version 2.0 (the \"License\");",
         " * you may not use this file except in compliance with the License.", " */", "",
         f"package {pkg};", ""]
    imports = ["java.io.IOException", "java.math.BigDecimal", "java.time.Duration",
               "java.time.Instant", "java.util.HashMap", "java.util.List", "java.util.Map",
               "java.util.Optional", "java.util.UUID", "java.util.function.Supplier",
               "java.util.stream.Collectors", "org.slf4j.Logger", "org.slf4j.LoggerFactory"]
    for i in sorted(r.sample(imports, r.randint(5, len(imports)))):
        L.append(f"import {i};")
    L += ["", "/**", f" * {g.sentence()}", f" * {g.sentence()}", " *", " * @author generated",
          " */"]
    generic = "<T extends Comparable<T>>" if r.random() < 0.15 else ""
    L.append(f"public class {name}{generic} {{")
    L.append("")
    L.append(f"    private static final Logger logger = LoggerFactory.getLogger({name}.class);")
    fields = []
    for _ in range(r.randint(2, 6)):
        f = g.ident()
        fields.append(f)
        L.append(f"    private final List<String> {f} = new java.util.ArrayList<>();")
    L.append("")
    L.append(f"    public {name}() {{")
    L.append(f"        logger.debug(\"created {name}\");")
    L.append("    }")
    L.append("")
    for _ in range(r.randint(2, 9)):
        java_method(g, L, fields)
    return L


# --------------------------------------------------------------------------------- Kotlin

def kotlin_fun(g, L, props):
    r = g.r
    name = g.ident(3)
    ret = r.choice(TYPES_K + ["Unit"] * 3)
    params = ", ".join(f"{g.ident()}{i}: {r.choice(TYPES_K)}" for i in range(r.randint(0, 3)))
    L.append(f"    /** {g.sentence()} */")
    susp = "suspend " if r.random() < 0.25 else ""
    L.append(f"    {susp}fun {name}({params}): {ret} {{")
    for _ in range(r.randint(2, 6)):
        k = r.random()
        v = g.ident()
        if k < 0.25:
            L.append(f"        val {v} = \"${{{r.choice(props)}.size}}-{g.w()}\"")
        elif k < 0.45:
            L.append(f"        when ({r.choice(props)}.size) {{")
            L.append(f"            0 -> println(\"{g.sentence()}\")")
            L.append(f"            in 1..{r.randint(2, 9)} -> {r.choice(props)}.add(\"{g.w()}\")")
            L.append("            else -> Unit")
            L.append("        }")
        elif k < 0.65:
            L.append(f"        val {v} = {r.choice(props)}")
            L.append(f"            .filter {{ it.startsWith(\"{g.w()}\") }}")
            L.append("            .map { it.trim() }")
            L.append("            .toList()")
        elif k < 0.8:
            L.append(f"        for (i in 0 until {r.randint(2, 64)}) {{")
            L.append(f"            {r.choice(props)}.add(i.toString())")
            L.append("        }")
        else:
            L.append(f"        require({r.choice(props)}.isNotEmpty()) {{ \"{g.sentence()}\" }}")
    if ret == "Unit":
        pass
    elif ret.endswith("?"):
        L.append("        return null")
    elif ret in ("Int", "Long"):
        L.append(f"        return {r.randint(0, 99)}")
    elif ret == "Boolean":
        L.append("        return true")
    elif ret == "String":
        L.append(f"        return \"{g.w()}\"")
    else:
        L.append("        TODO()")
    L.append("    }")
    L.append("")


KOTLIN_PATTERNS = [
    """    class {C}Interceptor : Interceptor {{
        override fun intercept(chain: Interceptor.Chain): Response {{
            val request = chain.request()
            val key = request.header("Idempotency-Key") ?: UUID.randomUUID().toString()
            return chain.proceed(request.newBuilder().header("Idempotency-Key", key).build())
        }}
    }}
""",
    """    fun {m}(retry: Retry, api: PaymentApi, cents: Long): String {{
        val call = Retry.decorateSupplier(retry) {{
            api.charge(cents, UUID.randomUUID().toString())
        }}
        return call.get()
    }}
""",
    """    @Scheduled(cron = "0 0 4 * * *")
    fun {m}() {{
        invoices.findDue().forEach {{ billing.chargeInvoice(it.id, it.amount) }}
    }}
""",
    """    fun start{C}(executor: ScheduledExecutorService) {{
        executor.scheduleAtFixedRate({{
            payouts.due().forEach {{ payments.sendPayout(it) }}
        }}, 0, 1, TimeUnit.HOURS)
    }}
""",
]


def gen_kotlin(g, pkg, name):
    r = g.r
    L = ["/*", " * Copyright 2016-2024 the original author or authors.", " */", "",
         f"package {pkg}", ""]
    imports = ["java.math.BigDecimal", "java.time.Duration", "java.time.Instant", "java.util.UUID",
               "kotlinx.coroutines.delay", "kotlinx.coroutines.flow.Flow",
               "kotlinx.coroutines.flow.flow", "okhttp3.Interceptor", "okhttp3.Response"]
    for i in sorted(r.sample(imports, r.randint(3, len(imports)))):
        L.append(f"import {i}")
    L.append("")
    for _ in range(r.randint(0, 2)):
        L.append(f"data class {g.cls()}(val {g.ident()}: String, val {g.ident()}: Long = 0L)")
        L.append("")
    L.append(f"/** {g.sentence()} */")
    L.append(f"class {name}(private val {g.ident()}: String) {{")
    props = []
    for _ in range(r.randint(2, 5)):
        p = g.ident()
        props.append(p)
        L.append(f"    private val {p} = mutableListOf<String>()")
    L.append("")
    for _ in range(r.randint(2, 8)):
        kotlin_fun(g, L, props)
    return L


# ----------------------------------------------------------------------------------- Rust

def rust_fn(g, L, fields):
    r = g.r
    name = "_".join(g.w() for _ in range(r.randint(1, 3)))
    ret = r.choice(TYPES_R[:-1] + ["()"] * 3)
    params = ", ".join(f"{g.w()}{i}: {r.choice(TYPES_R)}" for i in range(r.randint(0, 3)))
    L.append(f"    /// {g.sentence()}")
    asy = "async " if r.random() < 0.2 else ""
    L.append(f"    pub {asy}fn {name}(&mut self{', ' if params else ''}{params}) -> {ret} {{")
    for _ in range(r.randint(2, 6)):
        k = r.random()
        v = g.w() + "_" + g.w()
        if k < 0.25:
            L.append(f"        let {v} = format!(\"{{}}-{g.w()}\", self.{r.choice(fields)}.len());")
        elif k < 0.45:
            L.append(f"        match self.{r.choice(fields)}.len() {{")
            L.append(f"            0 => return Default::default(),")
            L.append(f"            n if n > {r.randint(2, 99)} => self.{r.choice(fields)}.truncate(n / 2),")
            L.append("            _ => {}")
            L.append("        }")
        elif k < 0.65:
            L.append(f"        let {v}: Vec<String> = self")
            L.append(f"            .{r.choice(fields)}")
            L.append("            .iter()")
            L.append(f"            .filter(|s| s.starts_with(\"{g.w()}\"))")
            L.append("            .cloned()")
            L.append("            .collect();")
        elif k < 0.8:
            L.append(f"        for i in 0..{r.randint(2, 64)} {{")
            L.append(f"            self.{r.choice(fields)}.push(i.to_string());")
            L.append("        }")
        else:
            L.append(f"        if let Some(first) = self.{r.choice(fields)}.first() {{")
            L.append("            tracing::debug!(%first, \"" + g.sentence() + "\");")
            L.append("        }")
    L.append("        Default::default()" if ret != "()" else "")
    L.append("    }")
    L.append("")


RUST_PATTERNS = [
    """pub struct {C}Middleware;

#[async_trait::async_trait]
impl Middleware for {C}Middleware {{
    async fn handle(
        &self,
        mut req: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> Result<Response> {{
        let key = Uuid::new_v4().to_string();
        req.headers_mut().insert("Idempotency-Key", key.parse().unwrap());
        next.run(req, extensions).await
    }}
}}
""",
    """pub async fn {m}(client: &Client, cents: u64) -> Result<String, Error> {{
    let strategy = ExponentialBackoff::from_millis(10).take(3);
    Retry::spawn(strategy, || async {{
        let key = Uuid::new_v4().to_string();
        client.charge(cents, &key).await
    }})
    .await
}}
""",
    """pub fn start_{m}(payments: Arc<Payments>) {{
    tokio::spawn(async move {{
        let mut interval = tokio::time::interval(Duration::from_secs(3600));
        loop {{
            interval.tick().await;
            payments.charge_due_invoices().await;
        }}
    }});
}}
""",
]


def gen_rust(g, name):
    r = g.r
    L = [f"//! {g.sentence()}", ""]
    uses = ["std::collections::HashMap", "std::sync::Arc", "std::time::Duration",
            "uuid::Uuid", "tokio::time::sleep", "crate::error::Error"]
    for u in sorted(r.sample(uses, r.randint(2, len(uses)))):
        L.append(f"use {u};")
    L.append("")
    sname = cap(g.ident(2))
    L.append("#[derive(Debug, Default, Clone)]")
    L.append(f"pub struct {sname} {{")
    fields = []
    for _ in range(r.randint(2, 5)):
        f = g.w() + "_" + g.w()
        if f in fields:
            continue
        fields.append(f)
        L.append(f"    {f}: Vec<String>,")
    L.append("}")
    L.append("")
    L.append(f"impl {sname} {{")
    L.append("    pub fn new() -> Self {")
    L.append("        Self::default()")
    L.append("    }")
    L.append("")
    for _ in range(r.randint(2, 8)):
        rust_fn(g, L, fields)
    L.append("}")
    L.append("")
    L.append("#[cfg(test)]")
    L.append("mod tests {")
    L.append("    use super::*;")
    L.append("")
    L.append("    #[test]")
    L.append(f"    fn {name}_works() {{")
    L.append(f"        let mut v = {sname}::new();")
    L.append(f"        assert!(v.{fields[0]}.is_empty());")
    L.append("    }")
    L.append("}")
    return L


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--files", type=int, default=13683)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    g = G(rng)
    counts = {"java": 0, "kt": 0, "rs": 0, "patterns": 0}
    for n in range(a.files):
        x = rng.random()
        module = f"module{n % 40:02d}"
        pkg_words = [g.w() for _ in range(2)]
        with_pattern = rng.random() < 0.015
        if x < 0.75:
            name = cap(g.ident(3)) + str(n)
            pkg = "com.example." + ".".join(pkg_words)
            lines = gen_java(g, pkg, name)
            if with_pattern:
                pat = rng.choice(JAVA_PATTERNS)
                lines.append(pat.format(C=cap(g.ident(2)), m=g.ident(3)).rstrip("\n"))
            lines.append("}")
            rel = os.path.join(module, "src/main/java/com/example", *pkg_words, name + ".java")
            counts["java"] += 1
        elif x < 0.92:
            name = cap(g.ident(3)) + str(n)
            pkg = "org.example." + ".".join(pkg_words)
            lines = gen_kotlin(g, pkg, name)
            if with_pattern:
                pat = rng.choice(KOTLIN_PATTERNS)
                lines.append(pat.format(C=cap(g.ident(2)), m=g.ident(3)).rstrip("\n"))
            lines.append("}")
            rel = os.path.join(module, "src/main/kotlin/org/example", *pkg_words, name + ".kt")
            counts["kt"] += 1
        else:
            name = "_".join(pkg_words) + f"_{n}"
            lines = gen_rust(g, name)
            if with_pattern:
                pat = rng.choice(RUST_PATTERNS)
                lines.append("")
                lines.append(pat.format(C=cap(g.ident(2)), m="_".join(g.w() for _ in range(2))).rstrip("\n"))
            rel = os.path.join(module, "src", name + ".rs")
            counts["rs"] += 1
        if with_pattern:
            counts["patterns"] += 1
        path = os.path.join(a.out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    print(f"gen_corpus: {a.files} files in {a.out} (java {counts['java']}, kotlin {counts['kt']}, "
          f"rust {counts['rs']}; {counts['patterns']} with interceptor/retry/scheduler patterns)")


if __name__ == "__main__":
    main()
