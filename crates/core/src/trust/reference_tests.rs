//! Calibration, selective judging and the estimates on unlabelled data against scikit-learn,
//! scipy, ppi_py and judgy on the same fixed data
//! (`testdata/reference.json`, written by `tools/reference_trust.py`), bootstrap intervals
//! included: the script draws the same resamples.

use serde_json::Value;

use crate::metrics::BootstrapSpec;
use crate::trust::calibration::{self, reliability};
use crate::trust::selective::{accepted, binomial_cdf, threshold};
use crate::trust::{ConfidenceKind, Judged, Target};

const REFERENCE: &str = include_str!("testdata/reference.json");

use crate::reference::{close, floats};

#[test]
fn calibration_and_thresholds_match_the_reference() {
    let reference: Value = serde_json::from_str(REFERENCE).unwrap();
    for case in reference["calibration"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let right: Vec<bool> = case["right"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_bool().unwrap())
            .collect();
        let confidence = floats(&case["confidence"]);
        let verdicts: Vec<Judged> = right
            .iter()
            .zip(&confidence)
            .enumerate()
            .map(|(unit, (&correct, &c))| Judged {
                repeat: 0,
                unit,
                parsed: true,
                correct,
                confidence: Some(c),
            })
            .collect();
        let points: Vec<(f64, bool)> = confidence.iter().copied().zip(right.clone()).collect();
        // The reliability curve, bin for bin.
        let bins = reliability(&points);
        let counts: Vec<usize> = bins.iter().map(|b| b.n).collect();
        let want_counts: Vec<usize> = floats(&case["counts"])
            .iter()
            .map(|&c| c as usize)
            .collect();
        assert_eq!(counts, want_counts, "{name}: bin counts");
        for (b, (t, p)) in bins.iter().zip(
            floats(&case["prob_true"])
                .into_iter()
                .zip(floats(&case["prob_pred"])),
        ) {
            assert!(
                (b.accuracy - t).abs() < 1e-9,
                "{name}: prob_true {} != {t}",
                b.accuracy
            );
            assert!(
                (b.confidence - p).abs() < 1e-9,
                "{name}: prob_pred {} != {p}",
                b.confidence
            );
        }
        let spec = BootstrapSpec {
            resamples: 200,
            ..BootstrapSpec::default()
        };
        let c = calibration::calibration(ConfidenceKind::Exact, &verdicts, &spec).unwrap();
        close(&format!("{name}: ece"), c.ece, &case["ece"]);
        close(&format!("{name}: brier"), c.brier, &case["brier"]);
        for (key, got) in [("ece_ci", c.ece_ci), ("brier_ci", c.brier_ci)] {
            let got = got.unwrap();
            close(&format!("{name}: {key}"), Some(got[0]), &case[key][0]);
            close(&format!("{name}: {key}"), Some(got[1]), &case[key][1]);
        }
        // The threshold fixed-sequence testing chooses, and what it accepts.
        let target = Target {
            agreement: case["agreement"].as_f64().unwrap(),
            risk: case["risk"].as_f64().unwrap(),
        };
        let t = threshold(&verdicts, target);
        close(&format!("{name}: threshold"), t, &case["threshold"]);
        if let Some(t) = t {
            let a = accepted(&verdicts, t);
            close(
                &format!("{name}: coverage"),
                Some(a.coverage),
                &case["coverage"],
            );
            close(
                &format!("{name}: agreement"),
                a.agreement,
                &case["accepted_agreement"],
            );
        }
    }
    for b in reference["binomial"].as_array().unwrap() {
        let (k, n, p) = (
            b["k"].as_u64().unwrap() as usize,
            b["n"].as_u64().unwrap() as usize,
            b["p"].as_f64().unwrap(),
        );
        let got = binomial_cdf(k, n, p);
        let want = b["cdf"].as_f64().unwrap();
        // Relative, for the far tail.
        assert!(
            (got - want).abs() <= 1e-9 * want.max(1e-300) || (got - want).abs() < 1e-12,
            "binomial cdf({k}; {n}, {p}) = {got}, want {want}"
        );
    }
}

fn bools(v: &Value) -> Vec<bool> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_bool().unwrap())
        .collect()
}

#[test]
fn estimates_match_ppi_py_and_judgy() {
    use crate::trust::estimate::{ppi_mean, rogan_gladen};
    let reference: Value = serde_json::from_str(REFERENCE).unwrap();
    let estimates = &reference["estimates"];
    for (i, case) in estimates["ppi"].as_array().unwrap().iter().enumerate() {
        let (y, f, fu) = (
            floats(&case["y"]),
            floats(&case["f"]),
            floats(&case["f_unlabelled"]),
        );
        let c = ppi_mean(&y, &f, &fu, case["level"].as_f64().unwrap()).unwrap();
        close(&format!("ppi {i}: lambda"), c.lambda, &case["lambda"]);
        close(&format!("ppi {i}: value"), Some(c.value), &case["value"]);
        close(&format!("ppi {i}: low"), Some(c.ci[0]), &case["ci"][0]);
        close(&format!("ppi {i}: high"), Some(c.ci[1]), &case["ci"][1]);
        close(&format!("ppi {i}: naive"), Some(c.naive), &case["naive"]);
        close(
            &format!("ppi {i}: naive low"),
            Some(c.naive_ci[0]),
            &case["naive_ci"][0],
        );
        close(
            &format!("ppi {i}: naive high"),
            Some(c.naive_ci[1]),
            &case["naive_ci"][1],
        );
    }
    for (i, case) in estimates["rogan_gladen"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let c = rogan_gladen(
            &bools(&case["labels"]),
            &bools(&case["preds"]),
            &bools(&case["unlabelled"]),
            case["level"].as_f64().unwrap(),
        )
        .unwrap();
        close(&format!("rg {i}: value"), Some(c.value), &case["value"]);
        close(&format!("rg {i}: low"), Some(c.ci[0]), &case["ci"][0]);
        close(&format!("rg {i}: high"), Some(c.ci[1]), &case["ci"][1]);
        close(&format!("rg {i}: tpr"), c.tpr, &case["tpr"]);
        close(&format!("rg {i}: tnr"), c.tnr, &case["tnr"]);
        close(&format!("rg {i}: naive"), Some(c.naive), &case["naive"]);
    }
}
