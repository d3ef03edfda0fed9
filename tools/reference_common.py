"""What the reference scripts share: SplitMix64 draws as crates/core/src/rng.rs makes them,
the bootstrap's resamples and percentile interval as crates/core/src/metrics/bootstrap.rs
draws them, and JSON numbers."""

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
