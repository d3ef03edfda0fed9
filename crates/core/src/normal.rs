//! The standard normal distribution: its quantile (for intervals' `z`) and the
//! complementary error function it is refined with.

/// The normal quantile `z` with `P(|Z| ≤ z) = level`.
pub fn z(level: f64) -> f64 {
    quantile(0.5 + level / 2.0)
}

/// The standard normal quantile (Acklam's rational approximation, refined by one step of
/// Halley's method on `erfc`: accurate to about 1e-15).
pub fn quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let low = 0.02425;
    let x = if p < low {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - low {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    // One Halley step: e = Φ(x) − p.
    let e = 0.5 * erfc(-x / std::f64::consts::SQRT_2) - p;
    let u = e * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
    x - u / (1.0 + x * u / 2.0)
}

/// The complementary error function: erf's Taylor series below 0.5, Lentz's continued
/// fraction above (to about 1e-15).
pub fn erfc(x: f64) -> f64 {
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 0.5 {
        return 1.0 - erf_series(x);
    }
    erfc_continued_fraction(x)
}

/// erf by its Taylor series (fast and exact to rounding for |x| < 0.5).
fn erf_series(x: f64) -> f64 {
    let mut term = x;
    let mut sum = x;
    let x2 = x * x;
    for n in 1..60 {
        term *= -x2 / n as f64;
        let add = term / (2 * n + 1) as f64;
        sum += add;
        if add.abs() < 1e-17 * sum.abs() {
            break;
        }
    }
    sum * 2.0 / std::f64::consts::PI.sqrt()
}

/// erfc by Lentz's continued fraction (x ≥ 0.5).
fn erfc_continued_fraction(x: f64) -> f64 {
    // erfc(x) = exp(-x²)/sqrt(π) · 1/(x + 1/2/(x + 1/(x + 3/2/(x + …)))).
    let tiny = 1e-300;
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    for n in 1..500 {
        let a = n as f64 / 2.0;
        d = x + a * d;
        d = if d.abs() < tiny { tiny } else { d };
        c = x + a / c;
        c = if c.abs() < tiny { tiny } else { c };
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() / std::f64::consts::PI.sqrt() / f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_normal_quantile_is_exact() {
        // scipy.stats.norm.ppf
        assert!((z(0.95) - 1.959_963_984_540_054).abs() < 1e-12);
        assert!((quantile(0.001) + 3.090_232_306_167_813).abs() < 1e-12);
        assert!((quantile(0.8) - 0.841_621_233_572_914_3).abs() < 1e-12);
        assert!((quantile(0.2) + 0.841_621_233_572_914_3).abs() < 1e-12);
        // scipy.special.erfc, on both sides of where the two methods meet.
        for (x, want) in [
            (1.3, 0.065_992_055_059_347_58),
            (0.5, 0.479_500_122_186_953_5),
            (0.51, 0.470_756_380_158_829_6),
            (3.0, 2.209_049_699_858_544_5e-5),
        ] {
            assert!(
                (erfc(x) - want).abs() < 1e-15 * want.max(1e-3) * 1e3,
                "erfc({x}) = {}",
                erfc(x)
            );
        }
    }
}
