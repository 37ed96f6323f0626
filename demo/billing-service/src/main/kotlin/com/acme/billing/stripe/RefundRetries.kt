package com.acme.billing.stripe

import java.io.IOException
import java.util.UUID
import okhttp3.FormBody
import okhttp3.Request

/** Calls [block] until it succeeds, at most [attempts] times. */
fun <T> withBackoff(attempts: Int = 3, block: () -> T): T {
    var last: IOException? = null
    for (attempt in 1..attempts) {
        try {
            return block()
        } catch (e: IOException) {
            last = e
            Thread.sleep(200L * attempt)
        }
    }
    throw last ?: IOException("no attempts")
}

class RefundRetries(private val apiKey: String) {

    /** Wrong: every attempt of withBackoff sends a new key, so a retried refund is a second refund. */
    fun refund(chargeId: String, amountCents: Long): String = withBackoff {
        val request = Request.Builder()
            .url("https://api.stripe.com/v1/refunds")
            .header("Authorization", "Bearer $apiKey")
            .header("Idempotency-Key", "refund-${UUID.randomUUID()}")
            .post(FormBody.Builder().add("charge", chargeId).add("amount", amountCents.toString()).build())
            .build()
        StripeHttp.client.newCall(request).execute().use { it.body!!.string() }
    }
}
