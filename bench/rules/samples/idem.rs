// Lines marked "expect: CODE" must be reported by the bench rules for CODE; nothing else may be.
use std::time::Duration;
use uuid::Uuid;

pub struct IdempotencyKeyMiddleware;

#[async_trait::async_trait]
impl Middleware for IdempotencyKeyMiddleware {
    async fn handle(
        &self,
        mut req: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> Result<Response> {
        let key = format!("pay-{}", Uuid::new_v4()); // expect: IDEM001
        req.headers_mut()
            .insert("Idempotency-Key", key.parse().expect("ascii header value"));
        next.run(req, extensions).await
    }
}

pub struct TracingMiddleware;

#[async_trait::async_trait]
impl Middleware for TracingMiddleware {
    async fn handle(
        &self,
        mut req: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> Result<Response> {
        req.headers_mut().insert("x-request-id", Uuid::new_v4().to_string().parse().unwrap());
        next.run(req, extensions).await
    }
}

pub async fn charge(client: &Client, cents: u64) -> Result<String, Error> {
    let strategy = ExponentialBackoff::from_millis(10).take(3);
    Retry::spawn(strategy, || async {
        let key = Uuid::new_v4().to_string(); // expect: IDEM002
        client.charge(cents, &key).await
    })
    .await
}

pub async fn charge_once(client: &Client, cents: u64) -> Result<String, Error> {
    let strategy = ExponentialBackoff::from_millis(10).take(3);
    let key = Uuid::new_v4().to_string();
    Retry::spawn(strategy, || client.charge(cents, &key)).await
}

pub fn start_billing(payments: Arc<Payments>) {
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(Duration::from_secs(3600));
        loop {
            interval.tick().await;
            payments.charge_due_invoices().await; // expect: IDEM004
        }
    });
}

pub fn start_metrics(metrics: Arc<Metrics>) {
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(Duration::from_secs(60));
        loop {
            interval.tick().await;
            metrics.flush().await;
        }
    });
}
