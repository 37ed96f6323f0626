//! A payments client on reqwest-middleware.

use http::Extensions;
use reqwest::{Request, Response};
use reqwest_middleware::{ClientBuilder, ClientWithMiddleware, Middleware, Next, Result};
use reqwest_retry::{policies::ExponentialBackoff, RetryTransientMiddleware};
use uuid::Uuid;

/// Stamps an idempotency key on every request. Attached after the retry middleware, so it runs
/// on every attempt: each retry carries a new key.
pub struct IdempotencyKeyMiddleware;

#[async_trait::async_trait]
impl Middleware for IdempotencyKeyMiddleware {
    async fn handle(
        &self,
        mut req: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> Result<Response> {
        let key = format!("pay-{}", Uuid::new_v4());
        req.headers_mut()
            .insert("Idempotency-Key", key.parse().expect("ascii header value"));
        next.run(req, extensions).await
    }
}

pub fn client() -> ClientWithMiddleware {
    let policy = ExponentialBackoff::builder().build_with_max_retries(3);
    ClientBuilder::new(reqwest::Client::new())
        .with(RetryTransientMiddleware::new_with_policy(policy))
        .with(IdempotencyKeyMiddleware)
        .build()
}

/// Correct: the key comes from the payout's identity and is set once, before the retries.
pub async fn pay_out(client: &ClientWithMiddleware, payout_id: &str, cents: u64) -> Result<Response> {
    let key = Uuid::new_v5(&Uuid::NAMESPACE_OID, payout_id.as_bytes()).to_string();
    client
        .post("https://api.stripe.com/v1/payouts")
        .header("Idempotency-Key", key)
        .form(&[("amount", cents.to_string())])
        .send()
        .await
}
