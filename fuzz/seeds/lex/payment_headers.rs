//! Fixture: several IDEM001 findings interleaved with safe lines in one reqwest-middleware
//! handler that routes by provider host. Findings: a `Uuid::new_v4()` fallback via
//! `unwrap_or_else`, a `SystemTime` key, a `Ulid` key in `format!`, and a key from a private
//! helper method of the same type (reported inside the helper). Safe: request id, correlation id
//! copied from extensions, key copied from the caller's header, latency.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use http::Extensions;
use reqwest::header::HeaderValue;
use reqwest::{Request, Response};
use reqwest_middleware::{Middleware, Next, Result};
use ulid::Ulid;
use uuid::Uuid;

#[derive(Clone)]
pub struct CorrelationId(pub String);

pub struct ProviderHeaders {
    pub region: &'static str,
}

impl ProviderHeaders {
    fn adyen_key(&self) -> String {
        format!("{}-{}", self.region, Uuid::new_v4().simple()) // expect: IDEM001
    }
}

#[async_trait::async_trait]
impl Middleware for ProviderHeaders {
    async fn handle(&self, mut req: Request, extensions: &mut Extensions, next: Next<'_>) -> Result<Response> {
        let host = req.url().host_str().unwrap_or_default().to_owned();
        let request_id = Uuid::new_v4().to_string(); // ok: request id
        let existing = req.headers().get("idempotency-key").and_then(|v| v.to_str().ok()).map(str::to_owned); // ok: caller's key
        let headers = req.headers_mut();
        headers.insert("x-request-id", HeaderValue::from_str(&request_id).unwrap());
        if let Some(CorrelationId(id)) = extensions.get::<CorrelationId>() {
            headers.insert("x-correlation-id", HeaderValue::from_str(id).unwrap()); // ok: correlation id from extensions
        }

        if host.ends_with("stripe.com") {
            let key = existing.unwrap_or_else(|| Uuid::new_v4().to_string()); // expect: IDEM001
            headers.insert("idempotency-key", HeaderValue::from_str(&key).unwrap());
        } else if host.ends_with("paypal.com") {
            let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0); // expect: IDEM001
            headers.insert("paypal-request-id", HeaderValue::from_str(&format!("pp-{secs}")).unwrap());
        } else if host.ends_with("adyen.com") {
            let key = self.adyen_key();
            headers.insert("idempotency-key", HeaderValue::from_str(&key).unwrap());
        } else if host.ends_with("gocardless.com") {
            if let Some(key) = existing {
                headers.insert("idempotency-key", HeaderValue::from_str(&key).unwrap()); // ok: caller's key passed through
            }
        } else {
            headers.insert("x-idempotency-key", HeaderValue::from_str(&format!("{}:{}", self.region, Ulid::new())).unwrap()); // expect: IDEM001
        }

        let started = Instant::now(); // ok: latency timing
        let result = next.run(req, extensions).await;
        tracing::debug!(host = %host, elapsed_ms = started.elapsed().as_millis() as u64, "provider call");
        result
    }
}
