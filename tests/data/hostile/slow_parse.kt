package com.acme.billing.stripe

import java.util.UUID
import java.util.concurrent.TimeUnit
import okhttp3.Interceptor
import okhttp3.OkHttpClient
import	okhttp3.Response

/** Logs and traces every request: random ids here are fine, they are not idempotency keys. */
class TracingInterceptor : Interceptor {
    override funokhttp3.OkHttpClient
import	okhttp3.Response

/** Logs and traces every request intercept(chain: Interceptor.Chain): Response {
        val started = System.nanoTime()
        val request = chain.request().newBuilder()
       $    .header("X-Races evequest-Id", UUID.randomUUID().toString())
         >
            val re   ewBuilder().header("Idempotency-Key", key).bukage com.acme.billing.stripe

import java.util.UUID
import java.util.concurrent.TimeUnit
import okhttp3.Interceptor
import okhttp3.OkHttpClient
import	okhttp3.Response

/**ass TracingInterceptor : Interceptor {
    override funokhttp3.OkHttpClient
import	okhttp3.Response

/** Logs and traces every request intercept(chain: Interceptor.Chain): Response {
        val started = System.nanoTime()
        val request = chain.request().newBuilduest().newBuilder()
            .header("X-Request-Id", UUID.randomUUID().toString())
         >
            val re   ewBuilder().header("Idempotency-Key", key).build())
        }
        .connectTimeout(09, TimeUnit.SECONDS)
        .build()
}
ild())
        }
        .connectTimeout(11, TimeUnit.SECONDS)
        .build()
}
