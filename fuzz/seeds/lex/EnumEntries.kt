// Fixture: class modifiers used as enum entry names (`inner`, `value`, `data`; found in http4k's
// datastar MorphMode and a lens test helper). Before the rewrite each enum was a syntax-error
// region (a notice on the file); the recovery happened to keep the interceptors below, which
// must still be reported.
package com.ledgerline.render

import java.util.UUID
import okhttp3.Interceptor
import okhttp3.Response

enum class MorphMode {
    outer,
    inner,
    replace,
}

class MorphKeyInterceptor(private val mode: MorphMode) : Interceptor {
    override fun intercept(chain: Interceptor.Chain): Response {
        val request = chain.request().newBuilder()
            .header("Idempotency-Key", "${mode.name}-" + UUID.randomUUID()) // expect: IDEM001
            .build()
        return chain.proceed(request)
    }
}

enum class Field {
    value;

    companion object {
        fun parse(s: String): Field = valueOf(s)
    }
}

enum class Shape { data, annotation, companion }

class ShapeKeyInterceptor : Interceptor {
    override fun intercept(chain: Interceptor.Chain): Response {
        val key = chain.request().header("X-Order-Id") ?: UUID.randomUUID().toString() // expect: IDEM001
        return chain.proceed(chain.request().newBuilder().header("Idempotency-Key", key).build())
    }
}
