"""What the reference scripts share: SplitMix64 draws as crates/core/src/rng.rs makes them
(binomial draws included), the bootstrap's resamples (of units, or of kinds of units) and
percentile interval as crates/core/src/metrics/bootstrap.rs draws them, and JSON numbers."""

import math

import numpy as np

MASK = 2**64 - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next_u64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n):
        zone = MASK - (MASK % n)
        while True:
            x = self.next_u64()
            if x < zone:
                return x % n


    def uniform(self):
        return (self.next_u64() >> 11) / float(1 << 53)

    def binomial(self, n, p):
        """As SplitMix64::binomial: CPython's binomialvariate, with these uniforms and
        ln_factorial for its log-gamma, step for step."""
        if n == 0 or p <= 0.0:
            return 0
        if p >= 1.0:
            return n
        if p > 0.5:
            return n - self.binomial(n, 1.0 - p)
        nf = float(n)
        if nf * p < 10.0:
            c = math.log2(1.0 - p)
            if c == 0.0:
                return 0
            x, y = 0, 0.0
            while True:
                u = self.uniform()
                if u == 0.0:
                    return x
                y += float(math.floor(math.log2(u) / c)) + 1.0
                if y > nf:
                    return x
                x += 1
        spq = math.sqrt(nf * p * (1.0 - p))
        b = 1.15 + 2.53 * spq
        a = -0.0873 + 0.0248 * b + 0.01 * p
        c = nf * p + 0.5
        vr = 0.92 - 4.2 / b
        alpha = (2.83 + 5.1 / b) * spq
        lpq = math.log(p / (1.0 - p))
        m = float(math.floor((nf + 1.0) * p))
        h = ln_factorial(m) + ln_factorial(nf - m)
        while True:
            u = self.uniform() - 0.5
            us = 0.5 - abs(u)
            k = float(math.floor((2.0 * a / us + b) * u + c))
            if k < 0.0 or k > nf:
                continue
            v = self.uniform()
            if us >= 0.07 and v <= vr:
                return int(k)
            v = v * alpha / (a / (us * us) + b)
            if math.log(v) <= h - ln_factorial(k) - ln_factorial(nf - k) + (k - m) * lpq:
                return int(k)


def ln_factorial(k):
    """As rng::ln_factorial: summed below 64, Stirling's series above."""
    if k < 64.0:
        total, i = 0.0, 2.0
        while i <= k:
            total += math.log(i)
            i += 1.0
        return total
    k2 = k * k
    return (k * math.log(k) - k + 0.5 * math.log(2.0 * math.pi * k) + 1.0 / (12.0 * k)
            - 1.0 / (360.0 * k * k2) + 1.0 / (1260.0 * k * k2 * k2))


def kind_resamples(keys, count, seed):
    """As BootstrapSpec::for_each_count over Kinds::new(keys): units with equal keys are of
    one kind (kinds in order of first appearance); each resample draws how many units of
    each kind it takes, returned as unit indices (each kind's first unit, that many times)."""
    first, sizes, index = [], [], {}
    for unit, key in enumerate(keys):
        if key not in index:
            index[key] = len(sizes)
            sizes.append(0)
            first.append(unit)
        sizes[index[key]] += 1
    n = sum(sizes)
    if n == 0:
        return []
    rng = SplitMix64(seed)
    out = []
    for _ in range(count):
        draws_left, units_left, idx = n, n, []
        for size, unit in zip(sizes, first):
            if size == units_left:
                d = draws_left
            else:
                d = rng.binomial(draws_left, size / units_left)
            draws_left -= d
            units_left -= size
            idx.extend([unit] * d)
        out.append(idx)
    return out


def resamples(n, count, seed):
    rng = SplitMix64(seed)
    return [[rng.below(n) for _ in range(n)] for _ in range(count)]


def num(x):
    """A float for JSON, None for NaN (the Rust side's "undefined")."""
    x = float(x)
    return None if math.isnan(x) else x


def ci(values, level=0.95):
    values = [v for v in values if v is not None and not math.isnan(v)]
    if not values:
        return None
    tail = (1 - level) / 2 * 100
    return [float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))]
