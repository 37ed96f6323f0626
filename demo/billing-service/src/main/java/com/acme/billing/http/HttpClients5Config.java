package com.acme.billing.http;

import java.util.UUID;

import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.core5.http.EntityDetails;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.HttpRequestInterceptor;
import org.apache.hc.core5.http.protocol.HttpContext;

public class HttpClients5Config {

    static final String KEY_ATTRIBUTE = "stripe.idempotency_key";

    /** Copies the caller's key from the context: correct, the key survives RetryExec. */
    static final class ContextKeyInterceptor implements HttpRequestInterceptor {
        @Override
        public void process(HttpRequest request, EntityDetails entity, HttpContext context) {
            Object key = context.getAttribute(KEY_ATTRIBUTE);
            if (key == null) {
                throw new IllegalStateException("set " + KEY_ATTRIBUTE + " before execute()");
            }
            request.setHeader("Idempotency-Key", key.toString());
            request.setHeader("X-Request-Id", UUID.randomUUID().toString());
        }
    }

    public CloseableHttpClient stripeClient() {
        return HttpClients.custom()
                .addRequestInterceptorFirst(new ContextKeyInterceptor())
                // "Just in case" fallback: a different key on every retry and redirect.
                .addRequestInterceptorLast((request, entity, context) -> {
                    if (!request.containsHeader("Idempotency-Key")) {
                        request.setHeader("Idempotency-Key", "fallback-" + System.currentTimeMillis());
                    }
                })
                .build();
    }
}
