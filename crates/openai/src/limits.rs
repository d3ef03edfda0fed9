//! Rate limits of an endpoint: requests and tokens per minute, as token buckets that a call
//! waits on before it is sent. (Concurrency is how many calls `judge_batch` keeps in flight.)

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// A bucket that holds up to a minute's allowance and refills continuously.
#[derive(Debug)]
pub struct Bucket {
    state: Mutex<(f64, Instant)>,
    per_minute: f64,
}

impl Bucket {
    pub fn per_minute(n: u32) -> Bucket {
        Bucket {
            state: Mutex::new((f64::from(n), Instant::now())),
            per_minute: f64::from(n),
        }
    }

    /// Waits until `amount` is available, then takes it. An amount larger than a whole
    /// minute's allowance waits for a full bucket, so that it is not refused forever.
    pub async fn take(&self, amount: f64) {
        let amount = amount.min(self.per_minute);
        loop {
            let wait = {
                let mut state = self
                    .state
                    .lock()
                    .expect("the bucket lock is never poisoned");
                let now = Instant::now();
                let refill = now.duration_since(state.1).as_secs_f64() * self.per_minute / 60.0;
                state.0 = (state.0 + refill).min(self.per_minute);
                state.1 = now;
                if state.0 >= amount {
                    state.0 -= amount;
                    return;
                }
                (amount - state.0) * 60.0 / self.per_minute
            };
            tokio::time::sleep(Duration::from_secs_f64(wait.max(0.001))).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_bucket_spaces_requests_once_empty() {
        let bucket = Bucket::per_minute(60);
        let start = tokio::time::Instant::now();
        for _ in 0..60 {
            bucket.take(1.0).await;
        }
        // The first minute's allowance is there at once; the next request waits a second.
        bucket.take(1.0).await;
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(900), "{waited:?}");
    }
}
