package bench.samples

import java.util.UUID
import java.util.concurrent.ScheduledExecutorService
import java.util.concurrent.TimeUnit

// Lines marked "expect: CODE" must be reported by the bench rules for CODE; nothing else may be.
class KeyInterceptor : Interceptor {
    override fun intercept(chain: Interceptor.Chain): Response {
        val request = chain.request()
        val key = request.header("Idempotency-Key") ?: UUID.randomUUID().toString() // expect: IDEM001
        return chain.proceed(request.newBuilder().header("Idempotency-Key", key).build())
    }
}

class TracingInterceptor : Interceptor {
    override fun intercept(chain: Interceptor.Chain): Response {
        val started = System.nanoTime()
        val request = chain.request().newBuilder()
            .header("X-Request-Id", UUID.randomUUID().toString())
            .build()
        return chain.proceed(request)
    }
}

class Billing(private val api: PaymentApi) {
    fun chargeWithRetry(retry: Retry, cents: Long): String {
        val call = Retry.decorateSupplier(retry) {
            api.charge(cents, UUID.randomUUID().toString()) // expect: IDEM002
        }
        return call.get()
    }

    fun chargeWithTemplate(retryTemplate: RetryTemplate, cents: Long): String =
        retryTemplate.execute<String, Exception> { api.charge(cents, UUID.randomUUID().toString()) } // expect: IDEM002

    fun chargeOnce(retryTemplate: RetryTemplate, cents: Long): String {
        val key = UUID.randomUUID().toString()
        return retryTemplate.execute<String, Exception> { api.charge(cents, key) }
    }

    @Scheduled(cron = "0 0 4 * * *")
    fun chargeDue() {
        invoices.findDue().forEach { billing.chargeInvoice(it.id, it.amount) } // expect: IDEM004
    }

    @Scheduled(fixedDelay = 60000)
    fun cleanUp() {
        sessions.deleteExpired()
    }

    fun start(executor: ScheduledExecutorService) {
        executor.scheduleAtFixedRate({
            payouts.due().forEach { payments.sendPayout(it) } // expect: IDEM004
        }, 0, 1, TimeUnit.HOURS)
    }
}
