//! Chart rendering from fixtures built in code: formats, sizes, and degenerate inputs.

use judgelab_report::{
    png, render, svg, CdfChart, Chart, ChartError, ConfusionChart, Format, FrontStatus, LineChart,
    LinePoint, ParetoChart, ParetoPoint, Reference, Series,
};

const SIZES: [(u32, u32); 2] = [(800, 600), (1600, 1200)];

fn point(label: &str, x: f64, y: f64, half_ci: f64, status: FrontStatus) -> ParetoPoint {
    ParetoPoint {
        label: label.to_string(),
        x,
        y,
        y_ci: Some((y - half_ci, y + half_ci)),
        status,
    }
}

fn pareto() -> ParetoChart {
    use FrontStatus::*;
    ParetoChart {
        title: "Quality against cost of 11 trials".to_string(),
        x_label: "prompt + completion tokens per item".to_string(),
        y_label: "Cohen's kappa".to_string(),
        points: vec![
            point("#1 temp=0.0 few_shot=0", 152.0, 0.21, 0.09, Front),
            point("#2 temp=0.0 few_shot=1", 318.0, 0.43, 0.08, Front),
            point(
                "#3 temp=0.7 few_shot=1",
                335.0,
                0.38,
                0.10,
                Indistinguishable,
            ),
            point("#4 temp=0.0 few_shot=3", 611.0, 0.57, 0.07, Front),
            point(
                "#5 temp=0.7 few_shot=3",
                640.0,
                0.52,
                0.08,
                Indistinguishable,
            ),
            point("#6 temp=1.0 few_shot=0", 160.0, -0.08, 0.11, Dominated),
            point("#7 temp=0.7 few_shot=0", 171.0, 0.05, 0.10, Dominated),
            point("#8 temp=1.0 few_shot=1", 342.0, 0.18, 0.09, Dominated),
            point("#9 temp=1.0 few_shot=3", 655.0, 0.31, 0.09, Dominated),
            point(
                "#10 temp=0.0 few_shot=5 cot=on",
                884.0,
                0.55,
                0.08,
                Dominated,
            ),
            point(
                "#11 temp=0.7 few_shot=5 cot=on",
                897.0,
                0.41,
                0.10,
                Dominated,
            ),
        ],
        baselines: vec![
            Reference {
                name: "majority class 0.12".to_string(),
                value: 0.12,
            },
            Reference {
                name: "human agreement 0.71".to_string(),
                value: 0.71,
            },
        ],
    }
}

/// Forty trials of a wider sweep, many of them close together; statuses follow from the data.
fn crowded_pareto() -> ParetoChart {
    let raw: Vec<(f64, f64)> = (0..40u32)
        .map(|i| {
            let x = 140.0 + 19.0 * f64::from((i * 13) % 40);
            let y =
                -0.1 + 0.6 * (1.0 - (-(x - 120.0) / 250.0).exp()) - 0.012 * f64::from((i * 7) % 17);
            (x, y)
        })
        .collect();
    let best_up_to = |x: f64| {
        raw.iter()
            .filter(|q| q.0 <= x)
            .map(|q| q.1)
            .fold(f64::NEG_INFINITY, f64::max)
    };
    let points = raw
        .iter()
        .enumerate()
        .map(|(i, &(x, y))| {
            let dominated = raw.iter().any(|q| q.0 <= x && q.1 >= y && *q != (x, y));
            let status = match () {
                _ if !dominated => FrontStatus::Front,
                _ if y + 0.06 >= best_up_to(x) => FrontStatus::Indistinguishable,
                _ => FrontStatus::Dominated,
            };
            let label = format!(
                "#{} temp={:.2} few_shot={}",
                i + 1,
                (i % 5) as f64 * 0.25,
                i % 4
            );
            point(&label, x, y, 0.06, status)
        })
        .collect();
    ParetoChart {
        title: "Quality against cost of 40 trials".to_string(),
        points,
        ..pareto()
    }
}

fn lines() -> LineChart {
    let series = |name: &str, ys: [f64; 5]| Series {
        name: name.to_string(),
        points: ys
            .iter()
            .enumerate()
            .map(|(i, &y)| LinePoint {
                x: i as f64 * 0.25,
                y,
                ci: Some((y - 0.07, y + 0.08)),
            })
            .collect(),
    };
    LineChart {
        title: "Agreement against temperature".to_string(),
        x_label: "sampling temperature".to_string(),
        y_label: "Cohen's kappa".to_string(),
        x_ticks: None,
        series: vec![
            series("few_shot=0", [0.21, 0.19, 0.12, 0.05, -0.08]),
            series("few_shot=1", [0.43, 0.42, 0.38, 0.30, 0.18]),
            series("few_shot=3", [0.57, 0.56, 0.52, 0.44, 0.31]),
        ],
        baselines: vec![Reference {
            name: "majority class 0.12".to_string(),
            value: 0.12,
        }],
        reference_kind: "baseline".to_string(),
    }
}

fn categorical_lines() -> LineChart {
    let mut chart = lines();
    chart.title = "Agreement by template".to_string();
    chart.x_label = "prompt template".to_string();
    chart.x_ticks = Some(
        [
            "plain",
            "rubric",
            "rubric + examples",
            "chain of thought",
            "pairwise swap",
        ]
        .map(String::from)
        .to_vec(),
    );
    for s in &mut chart.series {
        for (i, p) in s.points.iter_mut().enumerate() {
            p.x = i as f64;
        }
    }
    chart
}

/// Deterministic, roughly log-normal latencies without a random number generator.
fn latencies(n: usize, median: f64, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            let v = (u - 0.5) * 2.2;
            median * (v + v * v * v * 0.4).exp()
        })
        .collect()
}

fn cdf(n_series: usize) -> CdfChart {
    CdfChart {
        title: "Latency per judge call".to_string(),
        x_label: "latency per call (ms)".to_string(),
        series: (0..n_series)
            .map(|i| {
                (
                    format!("trial #{} few_shot={}", i + 1, i % 4),
                    latencies(200, 300.0 + 180.0 * i as f64, i as u64 + 7),
                )
            })
            .collect(),
    }
}

fn confusion() -> ConfusionChart {
    ConfusionChart {
        title: "Judge verdicts against human labels (trial #4)".to_string(),
        rows: ["A", "B", "tie"].map(String::from).to_vec(),
        cols: ["A", "B", "tie", "parse failure"]
            .map(String::from)
            .to_vec(),
        counts: vec![
            vec![112, 9, 14, 3],
            vec![11, 98, 17, 5],
            vec![20, 16, 41, 2],
        ],
    }
}

/// Six graded labels with long names, where column names must wrap.
fn wide_confusion() -> ConfusionChart {
    let labels = [
        "highly relevant",
        "relevant",
        "partially relevant",
        "off topic",
        "not relevant at all",
        "spam",
    ];
    let counts = (0..6u64)
        .map(|i| {
            (0..7u64)
                .map(|j| match (i, j) {
                    (i, j) if i == j => 40 + 7 * i,
                    (_, 6) => i % 3,
                    (i, j) => (i * 5 + j * 3) % 11,
                })
                .collect()
        })
        .collect();
    ConfusionChart {
        title: "Judge verdicts against human labels (trial #12, graded relevance)".to_string(),
        rows: labels.map(String::from).to_vec(),
        cols: labels
            .iter()
            .map(|l| l.to_string())
            .chain(["parse failure".to_string()])
            .collect(),
        counts,
    }
}

fn fixtures() -> Vec<(&'static str, Chart)> {
    vec![
        ("pareto", Chart::Pareto(pareto())),
        ("pareto_crowded", Chart::Pareto(crowded_pareto())),
        ("lines", Chart::Lines(lines())),
        ("lines_categorical", Chart::Lines(categorical_lines())),
        ("cdf", Chart::Cdf(cdf(3))),
        ("cdf_many", Chart::Cdf(cdf(14))),
        ("confusion", Chart::Confusion(confusion())),
        ("confusion_wide", Chart::Confusion(wide_confusion())),
    ]
}

fn save(name: &str, bytes: &[u8]) {
    if let Ok(dir) = std::env::var("JUDGELAB_CHARTS_DIR") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(std::path::Path::new(&dir).join(name), bytes).unwrap();
    }
}

fn check_png(bytes: &[u8], width: u32, height: u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let img = image::load_from_memory_with_format(bytes, image::ImageFormat::Png).unwrap();
    assert_eq!((img.width(), img.height()), (width, height));
}

fn check_svg(text: &str, width: u32, height: u32) {
    assert!(text.starts_with("<svg"), "{}", &text[..text.len().min(80)]);
    assert!(text.contains(&format!("width=\"{width}\"")));
    assert!(text.contains(&format!("height=\"{height}\"")));
    assert!(text.trim_end().ends_with("</svg>"));
}

#[test]
fn every_chart_renders_in_both_formats_at_both_sizes() {
    for (name, chart) in fixtures() {
        for (w, h) in SIZES {
            let bytes = png(&chart, w, h).unwrap();
            check_png(&bytes, w, h);
            save(&format!("{name}_{w}x{h}.png"), &bytes);
            let text = svg(&chart, w, h).unwrap();
            check_svg(&text, w, h);
            save(&format!("{name}_{w}x{h}.svg"), text.as_bytes());
        }
    }
}

#[test]
fn render_dispatches_on_format() {
    let chart = Chart::Confusion(confusion());
    check_png(&render(&chart, Format::Png, 640, 480).unwrap(), 640, 480);
    let text = String::from_utf8(render(&chart, Format::Svg, 640, 480).unwrap()).unwrap();
    check_svg(&text, 640, 480);
}

#[test]
fn svg_text_carries_titles_labels_and_units() {
    let text = svg(&Chart::Pareto(pareto()), 800, 600).unwrap();
    for needle in [
        "Quality against cost of 11 trials",
        "prompt + completion tokens per item",
        "Cohen&apos;s kappa",
        "Pareto front",
        "majority class 0.12",
        "#2 temp=0.0 few_shot=1",
    ] {
        assert!(text.contains(needle), "missing {needle}");
    }
}

fn empty_charts() -> Vec<Chart> {
    let mut nan_pareto = pareto();
    for p in &mut nan_pareto.points {
        p.y = f64::NAN;
    }
    vec![
        Chart::Pareto(ParetoChart {
            points: vec![],
            ..pareto()
        }),
        Chart::Pareto(nan_pareto),
        Chart::Lines(LineChart {
            series: vec![],
            ..lines()
        }),
        Chart::Lines(LineChart {
            series: vec![Series {
                name: "only NaN".to_string(),
                points: vec![LinePoint {
                    x: f64::NAN,
                    y: 1.0,
                    ci: None,
                }],
            }],
            ..lines()
        }),
        Chart::Cdf(CdfChart {
            series: vec![
                ("empty".to_string(), vec![]),
                ("inf".to_string(), vec![f64::INFINITY]),
            ],
            ..cdf(0)
        }),
        Chart::Confusion(ConfusionChart {
            rows: vec![],
            cols: vec![],
            counts: vec![],
            ..confusion()
        }),
    ]
}

#[test]
fn empty_inputs_render_a_no_data_chart() {
    for (i, chart) in empty_charts().into_iter().enumerate() {
        let text = svg(&chart, 800, 600).unwrap();
        assert!(text.contains("no data"), "{chart:?}");
        let bytes = png(&chart, 800, 600).unwrap();
        check_png(&bytes, 800, 600);
        save(&format!("empty_{i}_800x600.png"), &bytes);
    }
}

#[test]
fn degenerate_values_do_not_panic() {
    use FrontStatus::*;
    let single = ParetoChart {
        points: vec![point("#1 only", 500.0, 1.0, 0.0, Front)],
        baselines: vec![],
        ..pareto()
    };
    let same_x = ParetoChart {
        points: vec![
            point("#1 a", 300.0, 0.0, 0.1, Front),
            point("#2 b", 300.0, 0.0, 0.1, Dominated),
            point("#3 c", 300.0, 1.0, 0.0, Indistinguishable),
        ],
        baselines: vec![Reference {
            name: "nan".to_string(),
            value: f64::NAN,
        }],
        ..pareto()
    };
    let mut infinite = pareto();
    infinite.points[0].x = f64::INFINITY;
    infinite.points[1].y_ci = Some((f64::NEG_INFINITY, 0.5));
    let constant_cdf = CdfChart {
        series: vec![("constant".to_string(), vec![250.0; 10])],
        ..cdf(0)
    };
    let zero_confusion = ConfusionChart {
        counts: vec![vec![0; 4]; 3],
        ..confusion()
    };
    let long_title = ParetoChart {
        title: "a very long title ".repeat(20),
        x_label: "an x axis label that goes on and on ".repeat(8),
        ..pareto()
    };
    for (i, chart) in [
        Chart::Pareto(single),
        Chart::Pareto(same_x),
        Chart::Pareto(infinite),
        Chart::Pareto(long_title),
        Chart::Cdf(constant_cdf),
        Chart::Confusion(zero_confusion),
    ]
    .into_iter()
    .enumerate()
    {
        for (w, h) in [(200, 200), (800, 600), (2400, 600)] {
            let bytes = png(&chart, w, h).unwrap();
            check_png(&bytes, w, h);
            save(&format!("degenerate_{i}_{w}x{h}.png"), &bytes);
            check_svg(&svg(&chart, w, h).unwrap(), w, h);
        }
    }
}

#[test]
fn bad_sizes_and_shapes_are_errors() {
    let chart = Chart::Pareto(pareto());
    assert!(matches!(
        png(&chart, 0, 600),
        Err(ChartError::InvalidSize { .. })
    ));
    assert!(matches!(
        svg(&chart, 800, 100_000),
        Err(ChartError::InvalidSize { .. })
    ));
    let ragged = ConfusionChart {
        counts: vec![vec![1, 2], vec![3, 4, 5, 6], vec![7, 8, 9, 10]],
        ..confusion()
    };
    let err = png(&Chart::Confusion(ragged), 800, 600).unwrap_err();
    assert!(matches!(err, ChartError::InvalidData(_)));
    assert_eq!(
        err.to_string(),
        "invalid chart data: confusion matrix row 0 has 2 counts for 4 column labels"
    );
}
