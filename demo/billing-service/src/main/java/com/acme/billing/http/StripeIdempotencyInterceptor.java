package com.acme.billing.http;

import java.io.IOException;
import java.util.UUID;

import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;

/** Adds the Stripe idempotency key to every POST. (Wrong: a new key per call execution.) */
public final class StripeIdempotencyInterceptor implements Interceptor {

    @Override
    public Response intercept(Chain chain) throws IOException {
        Request original = chain.request();
        if (!"POST".equals(original.method())) {
            return chain.proceed(original);
        }
        String idempotencyKey = UUID.randomUUID().toString();
        Request keyed = original.newBuilder()
                .header("Idempotency-Key", idempotencyKey)
                .build();
        return chain.proceed(keyed);
    }
}
