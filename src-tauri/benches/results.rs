//! Benchmark: how fast a stored run opens in the app's results view, and in how much memory.
//!
//! It stores a real experiment (4 trials × `--items N` LLMBar-shaped items, 25,000 unless
//! told, judged through the engine by a scripted judge) in a fresh SQLite file, then times
//! what the Results screen asks for, the way the app asks, in a process of its own (so
//! that its peak memory is the opening's alone): it reads the run and shows the view with
//! its 1,000-resample intervals (trials table, fronts, recommendation, both Pareto SVGs),
//! which opens the screen. At the default 1,000 resamples the screen asks for the
//! intervals at once (`ui/src/lib/intervals.ts`): drawn by kinds of items, they add a
//! fraction of the point estimates' time, and a view without them first would only
//! delay them. `--with-points-first` times the way the screen asks for more resamples:
//! the view without intervals, then the one with them, from the same reading. `--json`
//! ends with one JSON line: the verdicts, the milliseconds until the screen opens, the
//! milliseconds until the intervals are in, and the peak resident memory. Run it with
//! `cargo xtask bench results`.

mod scripted;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use judgelab_core::metrics::{BootstrapSpec, Quality};
use judgelab_store::Store;

use scripted::{store, NAME};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// What the command line asks: items per trial, JSON, or (the child) the database to open.
struct Args {
    items: usize,
    json: bool,
    points_first: bool,
    open: Option<PathBuf>,
}

fn args() -> anyhow::Result<Args> {
    let mut args = Args {
        items: 25_000,
        json: false,
        points_first: false,
        open: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--items" => {
                let v = it.next().unwrap_or_default();
                args.items =
                    v.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                        anyhow::anyhow!("--items takes a positive count, not {v:?}")
                    })?;
            }
            "--json" => args.json = true,
            "--with-points-first" => args.points_first = true,
            "--open" => args.open = it.next().map(PathBuf::from),
            // What cargo passes to every bench.
            "--bench" => {}
            other => anyhow::bail!(
                "unknown argument {other:?}: expected --items N, --json or --with-points-first"
            ),
        }
    }
    Ok(args)
}

fn main() -> anyhow::Result<()> {
    let args = args()?;
    if let Some(db) = &args.open {
        return open(db, args.points_first);
    }
    let tmp = tempfile::tempdir()?;
    // `JUDGELAB_BENCH_DB` keeps the stored run between benchmark runs (it takes a while).
    let db = std::env::var_os("JUDGELAB_BENCH_DB").map_or_else(
        || tmp.path().join("bench.sqlite"),
        |d| PathBuf::from(d).join(format!("bench-{}.sqlite", args.items)),
    );
    let t = Instant::now();
    let stored = store(&db, args.items, tmp.path())?;
    eprintln!(
        "{} verdicts of {} trials stored ({} now) in {:.1} s",
        stored.total,
        stored.n_trials,
        stored.judged_now,
        t.elapsed().as_secs_f64()
    );
    let mut child = Command::new(std::env::current_exe()?);
    if args.points_first {
        child.arg("--with-points-first");
    }
    let out = child
        .arg("--open")
        .arg(&db)
        .stderr(Stdio::inherit())
        .output()?;
    anyhow::ensure!(out.status.success(), "opening the stored run failed");
    let opened: Opened = serde_json::from_slice(&out.stdout)?;
    println!(
        "results view of {} verdicts: open in {:.0} ms, 1,000-resample intervals in {:.0} ms after the start; peak memory {:.0} MiB",
        stored.total,
        opened.open_ms,
        opened.intervals_ms,
        opened.peak_rss_bytes as f64 / (1 << 20) as f64
    );
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "verdicts": stored.total,
                "trials": stored.n_trials,
                "items": args.items,
                "open_ms": opened.open_ms.round(),
                "intervals_ms": opened.intervals_ms.round(),
                "peak_rss_bytes": opened.peak_rss_bytes,
            })
        );
    }
    Ok(())
}

/// What the child reports: medians over a few openings, and its peak memory.
#[derive(serde::Serialize, serde::Deserialize)]
struct Opened {
    open_ms: f64,
    intervals_ms: f64,
    peak_rss_bytes: u64,
}

/// The child: opens the run as the Results screen does, a few times, each on a fresh
/// connection (nothing cached): reads it, then shows the view with intervals; with
/// `points_first`, the view without them first, held meanwhile as the app holds it.
fn open(db: &Path, points_first: bool) -> anyhow::Result<()> {
    let rt = tokio::runtime::Runtime::new()?;
    let read = || -> anyhow::Result<judgelab_engine::Opened> {
        rt.block_on(async {
            let store = Store::open(db).await?;
            let opened = judgelab_engine::open(&store, NAME).await?;
            store.close().await;
            anyhow::Ok(opened)
        })
    };
    let view = |opened: &judgelab_engine::Opened, resamples: u32| {
        let t = Instant::now();
        let spec = BootstrapSpec {
            resamples,
            ..BootstrapSpec::default()
        };
        let summary = opened.summarize(&spec, &Default::default(), None)?;
        let summarized = t.elapsed().as_secs_f64() * 1000.0;
        let results = judgelab_app::view::results(&summary, Quality::Kappa)
            .map_err(|e| anyhow::anyhow!("{}", e.message))?;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        eprintln!(
            "  {resamples} resamples: summary {summarized:.0} ms, view {:.0} ms",
            ms - summarized
        );
        assert_eq!(results.trials.len(), 4);
        assert_eq!(results.pareto_cost.hotspots.len(), 4);
        anyhow::Ok((summary, ms))
    };
    let (mut opens, mut ins) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let t = Instant::now();
        let opened = read()?;
        let read_ms = t.elapsed().as_secs_f64() * 1000.0;
        eprintln!("  read in {read_ms:.0} ms");
        let points = points_first.then(|| view(&opened, 0)).transpose()?;
        let (_, with_intervals) = view(&opened, 1000)?;
        let points_ms = points.map(|(_, ms)| ms);
        opens.push(read_ms + points_ms.unwrap_or(with_intervals));
        ins.push(read_ms + points_ms.unwrap_or(0.0) + with_intervals);
    }
    let opened = Opened {
        open_ms: median(opens),
        intervals_ms: median(ins),
        peak_rss_bytes: peak_rss()?,
    };
    println!("{}", serde_json::to_string(&opened)?);
    Ok(())
}

/// This process's peak resident memory (`VmHWM`), in bytes.
fn peak_rss() -> anyhow::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .ok_or_else(|| anyhow::anyhow!("/proc/self/status has no VmHWM line"))?;
    Ok(kb * 1024)
}
