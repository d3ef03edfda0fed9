//! Independent computations spread over the machine's cores (each trial's bootstrap
//! intervals, each paired comparison): plain scoped threads, results in input order.

/// `f` applied to every item, on up to as many threads as there are cores; the results in
/// the items' order.
pub fn map<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads <= 1 || items.len() <= 1 {
        return items.into_iter().map(f).collect();
    }
    // Items are dealt out in turn, so that a few large ones (trials in grid order) do not
    // all land on one thread.
    let (n, n_shares) = (items.len(), threads.min(items.len()));
    let mut shares: Vec<Vec<(usize, T)>> = (0..n_shares).map(|_| Vec::new()).collect();
    for (i, item) in items.into_iter().enumerate() {
        shares[i % n_shares].push((i, item));
    }
    let f = &f;
    let mut out: Vec<Option<R>> = (0..n).map(|_| None).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .into_iter()
            .map(|share| {
                scope.spawn(move || {
                    share
                        .into_iter()
                        .map(|(i, item)| (i, f(item)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for handle in handles {
            for (i, r) in handle.join().expect("a worker thread panicked") {
                out[i] = Some(r);
            }
        }
    });
    out.into_iter()
        .map(|r| r.expect("every item mapped"))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_keep_the_items_order() {
        let squares = super::map((0..100u64).collect(), |x| x * x);
        assert_eq!(squares, (0..100u64).map(|x| x * x).collect::<Vec<_>>());
        assert!(super::map(Vec::<u8>::new(), |x| x).is_empty());
    }
}
