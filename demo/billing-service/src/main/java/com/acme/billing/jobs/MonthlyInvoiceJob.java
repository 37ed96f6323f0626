package com.acme.billing.jobs;

import com.stripe.model.PaymentIntent;
import com.stripe.net.RequestOptions;
import com.stripe.param.PaymentIntentCreateParams;
import java.net.InetAddress;
import java.util.concurrent.TimeUnit;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

@Component
public class MonthlyInvoiceJob {

    private final InvoiceRepository invoices;
    private final RedissonClient redisson;

    public MonthlyInvoiceJob(InvoiceRepository invoices, RedissonClient redisson) {
        this.invoices = invoices;
        this.redisson = redisson;
    }

    // Every replica runs this at 02:00 on the 1st and charges every open invoice.
    @Scheduled(cron = "0 0 2 1 * *")
    public void chargeOpenInvoices() throws Exception {
        for (Invoice invoice : invoices.findOpen()) {
            // Every replica reads "not paid" before any of them writes "paid".
            if (invoices.isPaid(invoice.id())) {
                continue;
            }
            PaymentIntent.create(
                    PaymentIntentCreateParams.builder()
                            .setCustomer(invoice.customerId())
                            .setAmount(invoice.amountCents())
                            .setCurrency("usd")
                            .setConfirm(true)
                            .build(),
                    RequestOptions.builder().setIdempotencyKey("invoice-" + invoice.id()).build());
            invoices.markPaid(invoice.id());
        }
    }

    // Locked, but every pod names its own lock, so every pod gets one.
    @Scheduled(cron = "0 0 3 * * *")
    public void retryFailedInvoices() throws Exception {
        RLock lock = redisson.getLock("invoice-retry-" + InetAddress.getLocalHost().getHostName());
        if (!lock.tryLock(0, 10, TimeUnit.MINUTES)) {
            return;
        }
        try {
            for (Invoice invoice : invoices.findFailed()) {
                PaymentIntent.create(
                        PaymentIntentCreateParams.builder()
                                .setCustomer(invoice.customerId())
                                .setAmount(invoice.amountCents())
                                .setCurrency("usd")
                                .setConfirm(true)
                                .build(),
                        RequestOptions.builder().setIdempotencyKey("invoice-retry-" + invoice.id()).build());
            }
        } finally {
            lock.unlock();
        }
    }

    // Cleanup moves no money: per-process scheduling is fine here.
    @Scheduled(fixedDelay = 3_600_000)
    public void purgeDrafts() {
        invoices.deleteDraftsOlderThanDays(30);
    }
}
