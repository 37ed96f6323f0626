package com.acme.billing.stripe

import java.util.UUID
import okhttp3.FormBody
import okhttp3.Request

class ChargeClient(private val apiKey: String) {

    /** A key per call: survives OkHttp's own retries, not a restarted billing run (IDEM008). */
    fun charge(customerId: String, amountCents: Long): String {
        val request = Request.Builder()
            .url("https://api.stripe.com/v1/charges")
            .header("Authorization", "Bearer $apiKey")
            .header("Idempotency-Key", UUID.randomUUID().toString())
            .post(FormBody.Builder().add("customer", customerId).add("amount", amountCents.toString()).build())
            .build()
        StripeHttp.client.newCall(request).execute().use { return it.body!!.string() }
    }
}
