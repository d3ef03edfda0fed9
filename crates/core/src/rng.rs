//! A tiny seeded generator (SplitMix64) so that splits and seeds never change with a
//! dependency upgrade: the same experiment seed picks the same items forever.

/// SplitMix64: fast, well distributed, and specified in a dozen lines.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The generator as it is after `k` more draws: each draw adds one constant to the
    /// state.
    pub fn skip(&mut self, k: u64) {
        self.0 = self.0.wrapping_add(k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    }

    /// Uniform in [0, 1), with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `0..n` (n > 0), by rejection so that there is no modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        Below::new(n).draw(self)
    }

    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            xs.swap(i, j);
        }
    }
}

impl SplitMix64 {
    /// A draw from Binomial(`n`, `p`): Devroye's geometric method below a mean of 10,
    /// Hörmann's BTRS above it ("The generation of binomial random variates", 1993), as
    /// CPython's `random.binomialvariate` draws them, with [`Self::uniform`] for its
    /// uniforms and [`ln_factorial`] for its log-gamma, so that `tools/reference_common.py`
    /// draws the same numbers.
    pub fn binomial(&mut self, n: u64, p: f64) -> u64 {
        if n == 0 || p <= 0.0 {
            return 0;
        }
        if p >= 1.0 {
            return n;
        }
        if p > 0.5 {
            return n - self.binomial(n, 1.0 - p);
        }
        let nf = n as f64;
        if nf * p < 10.0 {
            // The gaps between successes are geometric.
            let c = (1.0 - p).log2();
            if c == 0.0 {
                return 0;
            }
            let (mut x, mut y) = (0u64, 0f64);
            loop {
                let u = self.uniform();
                if u == 0.0 {
                    return x;
                }
                y += ((u.log2() / c).floor()) + 1.0;
                if y > nf {
                    return x;
                }
                x += 1;
            }
        }
        let spq = (nf * p * (1.0 - p)).sqrt();
        let b = 1.15 + 2.53 * spq;
        let a = -0.0873 + 0.0248 * b + 0.01 * p;
        let c = nf * p + 0.5;
        let vr = 0.92 - 4.2 / b;
        let alpha = (2.83 + 5.1 / b) * spq;
        let lpq = (p / (1.0 - p)).ln();
        let m = ((nf + 1.0) * p).floor();
        let h = ln_factorial(m) + ln_factorial(nf - m);
        loop {
            let u = self.uniform() - 0.5;
            let us = 0.5 - u.abs();
            let k = ((2.0 * a / us + b) * u + c).floor();
            if k < 0.0 || k > nf {
                continue;
            }
            let v = self.uniform();
            if us >= 0.07 && v <= vr {
                return k as u64;
            }
            let v = v * alpha / (a / (us * us) + b);
            if v.ln() <= h - ln_factorial(k) - ln_factorial(nf - k) + (k - m) * lpq {
                return k as u64;
            }
        }
    }
}

/// ln(k!) for a whole number `k` ≥ 0: summed below 64, Stirling's series above (its error
/// there is under 1e-16 of the value).
pub fn ln_factorial(k: f64) -> f64 {
    if k < 64.0 {
        let mut sum = 0.0;
        let mut i = 2.0;
        while i <= k {
            sum += f64::ln(i);
            i += 1.0;
        }
        return sum;
    }
    let k2 = k * k;
    k * k.ln() - k + 0.5 * (2.0 * std::f64::consts::PI * k).ln() + 1.0 / (12.0 * k)
        - 1.0 / (360.0 * k * k2)
        + 1.0 / (1260.0 * k * k2 * k2)
}

/// Draws uniform in `0..n`, as [`SplitMix64::below`] does, with what depends on `n` alone
/// computed once: a bootstrap draws millions of indices below one `n`, and two 64-bit
/// divisions a draw were most of its time.
#[derive(Debug, Clone, Copy)]
pub struct Below {
    n: u64,
    /// Draws at or above it are rejected (no modulo bias).
    zone: u64,
    /// ceil(2^128 / n), for the remainder by multiplication (Lemire, Kaser and Kurz,
    /// "Faster remainder by direct computation", 2019: exact for every 64-bit x, since
    /// 128 >= 64 + log2(n)); 0 for n = 1, whose remainder is always 0.
    c: u128,
}

impl Below {
    pub fn new(n: u64) -> Below {
        assert!(n > 0, "below(0) has no values");
        let c = if n == 1 {
            0
        } else {
            u128::MAX / u128::from(n) + 1
        };
        Below {
            n,
            zone: u64::MAX - (u64::MAX % n),
            c,
        }
    }

    /// `x` mapped into `0..n` by [`Self::draw`]'s rule: `None` where it rejects it.
    pub fn accept(&self, x: u64) -> Option<u64> {
        (x < self.zone).then(|| self.remainder(x))
    }

    pub fn draw(&self, rng: &mut SplitMix64) -> u64 {
        loop {
            let x = rng.next_u64();
            if x < self.zone {
                return self.remainder(x);
            }
        }
    }

    /// `x % n`, as the high 128 bits of ((c * x) mod 2^128) * n.
    fn remainder(&self, x: u64) -> u64 {
        let low = self.c.wrapping_mul(u128::from(x));
        let n = u128::from(self.n);
        let (lo, hi) = (low & u128::from(u64::MAX), low >> 64);
        ((hi * n + ((lo * n) >> 64)) >> 64) as u64
    }
}

/// Mixes several values into one seed (used for per-verdict seeds).
pub fn mix(parts: &[u64]) -> u64 {
    let mut rng = SplitMix64::new(0x6A75_6467_656C_6162); // "judgelab"
    let mut acc = rng.next_u64();
    for &p in parts {
        rng = SplitMix64::new(acc ^ p);
        acc = rng.next_u64();
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // Reference outputs of SplitMix64 seeded with 1234567 (from the published C code).
        let mut rng = SplitMix64::new(1234567);
        assert_eq!(rng.next_u64(), 6457827717110365317);
        assert_eq!(rng.next_u64(), 3203168211198807973);
    }

    #[test]
    fn the_remainder_by_multiplication_is_the_remainder() {
        let mut rng = SplitMix64::new(1);
        let fixed = [
            1,
            2,
            3,
            7,
            10,
            25_000,
            1 << 32,
            (1 << 32) + 1,
            u64::MAX / 3,
            u64::MAX - 1,
            u64::MAX,
        ];
        let random: Vec<u64> = (0..200)
            .map(|_| (rng.next_u64() >> (rng.next_u64() % 64)).max(1))
            .collect();
        for n in fixed.into_iter().chain(random) {
            let below = Below::new(n);
            let edges = [0, 1, n - 1, n, n.wrapping_add(1), u64::MAX, u64::MAX - 1];
            let draws: Vec<u64> = (0..200).map(|_| rng.next_u64()).collect();
            for x in edges.into_iter().chain(draws) {
                assert_eq!(below.remainder(x), x % n, "{x} % {n}");
            }
        }
    }

    #[test]
    fn skipping_is_drawing() {
        let (mut drawn, mut skipped) = (SplitMix64::new(5), SplitMix64::new(5));
        for _ in 0..1000 {
            drawn.next_u64();
        }
        skipped.skip(1000);
        assert_eq!(drawn.next_u64(), skipped.next_u64());
    }

    #[test]
    fn shuffle_is_a_permutation_and_deterministic() {
        let mut a: Vec<u32> = (0..50).collect();
        let mut b = a.clone();
        SplitMix64::new(7).shuffle(&mut a);
        SplitMix64::new(7).shuffle(&mut b);
        assert_eq!(a, b);
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        assert_ne!(a, sorted);
    }

    #[test]
    fn ln_factorial_is_the_log_of_the_factorial() {
        let mut exact = 0.0f64;
        for k in 1..200u32 {
            exact += f64::from(k).ln();
            let got = ln_factorial(f64::from(k));
            assert!(
                (got - exact).abs() <= 1e-12 * exact.max(1.0),
                "{k}: {got} {exact}"
            );
        }
        assert_eq!(ln_factorial(0.0), 0.0);
    }

    /// Each method's draws against the binomial's probabilities: a chi-square test over
    /// the values with an expected count of at least 5 (its 0.1% critical value).
    #[test]
    fn binomial_draws_follow_the_binomial() {
        let mut rng = SplitMix64::new(11);
        for (n, p) in [
            (10u64, 0.3),
            (40, 0.2),
            (1000, 0.004),
            (200, 0.35),
            (5000, 0.5),
            (250_000, 0.83),
        ] {
            let draws = 20_000;
            let mut counts = std::collections::BTreeMap::<u64, f64>::new();
            for _ in 0..draws {
                let k = rng.binomial(n, p);
                assert!(k <= n);
                *counts.entry(k).or_default() += 1.0;
            }
            let ln_pmf = |k: f64| {
                let nf = n as f64;
                ln_factorial(nf) - ln_factorial(k) - ln_factorial(nf - k)
                    + k * p.ln()
                    + (nf - k) * (1.0 - p).ln()
            };
            let (mut chi2, mut cells, mut rest_seen, mut rest_expected) = (0.0, 0, 0.0, 0.0);
            for k in 0..=n {
                let expected = draws as f64 * ln_pmf(k as f64).exp();
                let seen = counts.get(&k).copied().unwrap_or(0.0);
                if expected >= 5.0 {
                    chi2 += (seen - expected).powi(2) / expected;
                    cells += 1;
                } else {
                    rest_seen += seen;
                    rest_expected += expected;
                }
            }
            if rest_expected >= 5.0 {
                chi2 += (rest_seen - rest_expected).powi(2) / rest_expected;
                cells += 1;
            }
            // The 0.1% critical value of chi-square with `cells - 1` degrees of freedom,
            // by Wilson and Hilferty's approximation.
            let df = f64::from(cells - 1);
            let critical = df * (1.0 - 2.0 / (9.0 * df) + 3.09 * (2.0 / (9.0 * df)).sqrt()).powi(3);
            assert!(chi2 < critical, "Binomial({n}, {p}): chi-square {chi2:.1} over {cells} cells, critical {critical:.1}");
        }
        assert_eq!(rng.binomial(0, 0.5), 0);
        assert_eq!(rng.binomial(7, 0.0), 0);
        assert_eq!(rng.binomial(7, 1.0), 7);
    }
}
