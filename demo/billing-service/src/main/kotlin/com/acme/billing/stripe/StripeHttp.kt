package com.acme.billing.stripe

import java.util.UUID
import java.util.concurrent.TimeUnit
import okhttp3.Interceptor
import okhttp3.OkHttpClient
import okhttp3.Response

/** Logs and traces every request: random ids here are fine, they are not idempotency keys. */
class TracingInterceptor : Interceptor {
    override fun intercept(chain: Interceptor.Chain): Response {
        val started = System.nanoTime()
        val request = chain.request().newBuilder()
            .header("X-Request-Id", UUID.randomUUID().toString())
            .build()
        val response = chain.proceed(request)
        println("${request.method} ${request.url} took ${(System.nanoTime() - started) / 1_000_000} ms")
        return response
    }
}

object StripeHttp {
    val client: OkHttpClient = OkHttpClient.Builder()
        .addInterceptor(TracingInterceptor())
        .addNetworkInterceptor { chain ->
            val request = chain.request()
            val key = request.header("Idempotency-Key") ?: UUID.randomUUID().toString()
            chain.proceed(request.newBuilder().header("Idempotency-Key", key).build())
        }
        .connectTimeout(10, TimeUnit.SECONDS)
        .build()
}
