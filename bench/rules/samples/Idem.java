package bench.samples;

import java.io.IOException;
import java.util.UUID;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

// Lines marked "expect: CODE" must be reported by the bench rules for CODE; nothing else may be.
public class Idem {

    static final class KeyInterceptor implements Interceptor {
        @Override
        public Response intercept(Chain chain) throws IOException {
            Request original = chain.request();
            if (!"POST".equals(original.method())) {
                return chain.proceed(original);
            }
            String key = UUID.randomUUID().toString(); // expect: IDEM001
            return chain.proceed(original.newBuilder().header("Idempotency-Key", key).build());
        }
    }

    static final class TracingInterceptor implements Interceptor {
        @Override
        public Response intercept(Chain chain) throws IOException {
            long started = System.nanoTime();
            Request traced = chain.request().newBuilder()
                    .header("X-Request-Id", UUID.randomUUID().toString())
                    .build();
            return chain.proceed(traced);
        }
    }

    static final class FallbackKeyInterceptor implements HttpRequestInterceptor {
        @Override
        public void process(HttpRequest request, EntityDetails entity, HttpContext context) {
            if (!request.containsHeader("Idempotency-Key")) {
                request.setHeader("Idempotency-Key", "k-" + System.currentTimeMillis()); // expect: IDEM001
            }
        }
    }

    String chargeWithRetry(Retry retry, PaymentApi api, long cents) {
        Supplier<String> call = Retry.decorateSupplier(retry, () -> {
            String key = UUID.randomUUID().toString(); // expect: IDEM002
            return api.charge(cents, key);
        });
        return call.get();
    }

    String chargeWithTemplate(RetryTemplate retryTemplate, PaymentApi api, long cents) {
        return retryTemplate.execute(ctx -> api.charge(cents, UUID.randomUUID().toString())); // expect: IDEM002
    }

    String chargeWithTemplateOk(RetryTemplate retryTemplate, PaymentApi api, long cents) {
        String key = UUID.randomUUID().toString();
        return retryTemplate.execute(ctx -> api.charge(cents, key));
    }

    @Scheduled(cron = "0 0 3 * * *")
    public void chargeDueInvoices() {
        for (Invoice invoice : invoices.findDue()) {
            billing.chargeInvoice(invoice.getId(), invoice.getAmount()); // expect: IDEM004
        }
    }

    @Scheduled(fixedDelay = 60000)
    public void cleanUp() {
        sessions.deleteExpired();
    }

    void start(ScheduledExecutorService executor) {
        executor.scheduleAtFixedRate(() -> {
            for (Subscription s : subscriptions.due()) {
                payments.capturePayment(s.getId()); // expect: IDEM004
            }
        }, 0, 1, TimeUnit.HOURS);
        executor.scheduleAtFixedRate(() -> metrics.flush(), 0, 1, TimeUnit.MINUTES);
    }
}
