//! Reachability over the types of a model by index, along whichever edges a question needs (the references, or
//! only the ones the Rust output holds without indirection): one walk for every output that asks.

use std::collections::BTreeSet;

/// Every node a walk along `edges` from `start` meets; `start` itself only when an edge leads back to it.
pub fn reachable<I: IntoIterator<Item = usize>>(start: usize, edges: impl Fn(usize) -> I) -> BTreeSet<usize> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<usize> = edges(start).into_iter().collect();
    while let Some(j) = stack.pop() {
        if seen.insert(j) {
            stack.extend(edges(j));
        }
    }
    seen
}

/// Whether a walk along `edges` from `start` meets a node for which `hit` holds (`start` itself only when an edge
/// leads back to it); it stops at the first.
pub fn reaches<I: IntoIterator<Item = usize>>(
    start: usize,
    edges: impl Fn(usize) -> I,
    hit: impl Fn(usize) -> bool,
) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<usize> = edges(start).into_iter().collect();
    while let Some(j) = stack.pop() {
        if hit(j) {
            return true;
        }
        if seen.insert(j) {
            stack.extend(edges(j));
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_meet_what_the_edges_lead_to() {
        // 0 -> 1 -> 2 -> 1, 3 alone.
        let edges = |i: usize| -> Vec<usize> { [vec![1], vec![2], vec![1], vec![]][i].clone() };
        assert_eq!(reachable(0, edges), BTreeSet::from([1, 2]));
        assert_eq!(reachable(3, edges), BTreeSet::new());
        assert!(!reaches(0, edges, |j| j == 0), "0 is on no cycle");
        assert!(reaches(1, edges, |j| j == 1) && reaches(2, edges, |j| j == 2));
        assert!(reaches(0, edges, |j| j == 2) && !reaches(3, edges, |_| true));
    }
}
