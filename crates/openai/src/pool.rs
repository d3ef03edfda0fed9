//! The endpoints that serve one remote judge. Each attempt of a call goes to the
//! least-loaded endpoint that is in service; one that fails is taken out of service for a
//! while (a circuit breaker) and then let one call through to see if it is back.
//!
//! A judge with one endpoint has a pool of one: it is always chosen, whatever its breaker
//! says, and its calls back off and retry exactly as they would without a pool.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Consecutive failed attempts that take an endpoint out of service. A refused connection
/// takes it out at once: nothing is listening there.
const TRIP_AFTER: u32 = 2;
/// How long the first time out lasts; each further one (its trial call failed too) twice as
/// long, up to `MAX_OUT`.
const FIRST_OUT: Duration = Duration::from_secs(2);
const MAX_OUT: Duration = Duration::from_secs(60);

pub(crate) struct Pool {
    members: Vec<Member>,
    /// Breaks ties between equally loaded endpoints in turn.
    turn: AtomicUsize,
}

struct Member {
    base_url: String,
    in_flight: AtomicUsize,
    health: Mutex<Health>,
}

#[derive(Default)]
struct Health {
    /// Failed attempts since the last success.
    failures: u32,
    /// Times taken out of service since the last success.
    trips: u32,
    /// Out of service until then.
    out_until: Option<Instant>,
    /// A trial call is in flight after a time out: no other call goes there until it ends.
    probing: bool,
}

/// How an attempt at an endpoint ended, for its breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Attempt {
    Answered,
    Failed,
    /// Could not connect at all.
    Refused,
}

/// An attempt's endpoint, held for as long as the attempt runs.
pub(crate) struct Lease<'a> {
    pool: &'a Pool,
    idx: usize,
}

impl Lease<'_> {
    pub fn base_url(&self) -> &str {
        &self.pool.members[self.idx].base_url
    }

    /// Tells the endpoint's breaker how the attempt ended.
    pub fn finish(self, attempt: Attempt) {
        let member = &self.pool.members[self.idx];
        let mut h = member.health.lock().expect("never poisoned");
        h.probing = false;
        match attempt {
            Attempt::Answered => *h = Health::default(),
            Attempt::Failed | Attempt::Refused => {
                h.failures += 1;
                // A failure on probation (its trial call, or any call before the next
                // answer) takes it out again at once, for twice as long.
                if attempt == Attempt::Refused || h.failures >= TRIP_AFTER || h.trips > 0 {
                    h.trips += 1;
                    let out = FIRST_OUT
                        .saturating_mul(1 << (h.trips - 1).min(10))
                        .min(MAX_OUT);
                    h.out_until = Some(Instant::now() + out);
                    h.failures = 0;
                }
            }
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        self.pool.members[self.idx]
            .in_flight
            .fetch_sub(1, Ordering::SeqCst);
    }
}

impl Pool {
    pub fn new(base_urls: impl IntoIterator<Item = String>) -> Pool {
        Pool {
            members: base_urls
                .into_iter()
                .map(|base_url| Member {
                    base_url,
                    in_flight: AtomicUsize::new(0),
                    health: Mutex::default(),
                })
                .collect(),
            turn: AtomicUsize::new(0),
        }
    }

    /// The endpoint for the next attempt: the least-loaded one in service, or one whose
    /// time out has passed (as its trial call). When every endpoint is out, the one back
    /// soonest: a call is never refused for want of an endpoint, it fails at the server.
    pub fn lease(&self) -> Lease<'_> {
        let now = Instant::now();
        let n = self.members.len();
        let turn = self.turn.fetch_add(1, Ordering::Relaxed);
        let mut best: Option<(usize, usize)> = None;
        let mut soonest: Option<(Instant, usize)> = None;
        for k in 0..n {
            let idx = (turn + k) % n;
            let member = &self.members[idx];
            let mut h = member.health.lock().expect("never poisoned");
            let available = match h.out_until {
                None => true,
                Some(until) if until <= now && !h.probing => {
                    // Its time out is over: this call is its trial.
                    if best.is_none() {
                        h.probing = true;
                        h.out_until = None;
                        best = Some((idx, 0));
                        continue;
                    }
                    false
                }
                Some(until) => {
                    if soonest.is_none_or(|(t, _)| until < t) {
                        soonest = Some((until, idx));
                    }
                    false
                }
            };
            let load = member.in_flight.load(Ordering::SeqCst);
            if available && !h.probing && best.is_none_or(|(_, l)| load < l) {
                best = Some((idx, load));
            }
        }
        let idx = best
            .map(|(idx, _)| idx)
            .or(soonest.map(|(_, idx)| idx))
            .unwrap_or(turn % n);
        self.members[idx].in_flight.fetch_add(1, Ordering::SeqCst);
        Lease { pool: self, idx }
    }

    /// Whether an endpoint other than `base_url` is in service now: a call whose attempt
    /// failed there is retried at once rather than after a backoff.
    pub fn another_in_service(&self, base_url: &str) -> bool {
        let now = Instant::now();
        self.members.iter().any(|m| {
            m.base_url != base_url && {
                let h = m.health.lock().expect("never poisoned");
                h.out_until.is_none_or(|until| until <= now) && !h.probing
            }
        })
    }

    /// Whether the endpoint at `base_url` is out of service now.
    pub fn is_out(&self, base_url: &str) -> bool {
        let now = Instant::now();
        self.members.iter().any(|m| {
            m.base_url == base_url
                && m.health
                    .lock()
                    .expect("never poisoned")
                    .out_until
                    .is_some_and(|until| until > now)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(n: usize) -> Pool {
        Pool::new((0..n).map(|i| format!("http://{i}")))
    }

    #[test]
    fn calls_spread_over_the_least_loaded() {
        let p = pool(3);
        let leases: Vec<_> = (0..6).map(|_| p.lease()).collect();
        let mut per: Vec<usize> = (0..3)
            .map(|i| {
                leases
                    .iter()
                    .filter(|l| l.base_url() == format!("http://{i}"))
                    .count()
            })
            .collect();
        per.sort();
        assert_eq!(per, [2, 2, 2]);
    }

    #[test]
    fn a_refused_endpoint_is_out_until_its_trial_call_answers() {
        let p = pool(2);
        let first = p.lease();
        let down = first.base_url().to_string();
        first.finish(Attempt::Refused);
        assert!(p.is_out(&down));
        assert!(p.another_in_service(&down));
        for _ in 0..10 {
            let l = p.lease();
            assert_ne!(l.base_url(), down);
            l.finish(Attempt::Answered);
        }
        // Once its time out has passed, one call tries it; an answer puts it back.
        p.members
            .iter()
            .find(|m| m.base_url == down)
            .unwrap()
            .health
            .lock()
            .unwrap()
            .out_until = Some(Instant::now());
        let leases: Vec<_> = (0..3).map(|_| p.lease()).collect();
        assert_eq!(leases.iter().filter(|l| l.base_url() == down).count(), 1);
        for l in leases {
            l.finish(Attempt::Answered);
        }
        assert!(!p.is_out(&down));
    }

    #[test]
    fn two_failures_in_a_row_take_an_endpoint_out_and_a_failed_trial_doubles_it() {
        let p = pool(1);
        let l = p.lease();
        l.finish(Attempt::Failed);
        assert!(!p.is_out("http://0"));
        p.lease().finish(Attempt::Failed);
        assert!(p.is_out("http://0"));
        let first_out = p.members[0].health.lock().unwrap().out_until.unwrap();
        // A pool of one still hands its only endpoint out.
        let l = p.lease();
        assert_eq!(l.base_url(), "http://0");
        l.finish(Attempt::Failed);
        let second_out = p.members[0].health.lock().unwrap().out_until.unwrap();
        assert!(second_out > first_out + FIRST_OUT / 2);
    }
}
