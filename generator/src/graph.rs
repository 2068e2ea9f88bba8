//! Graph algorithms the loader's checks and the emitters share: strongly connected components, and reachability
//! over the types of a model by index along whichever edges a question needs (the references, or only the ones
//! the Rust output holds without indirection).

use std::collections::BTreeSet;

/// The strongly connected components of a graph (Tarjan's algorithm without recursion): a component id per vertex.
pub(crate) fn components(adjacent: &[Vec<usize>]) -> Vec<usize> {
    let n = adjacent.len();
    let (mut index, mut low, mut comp) = (vec![usize::MAX; n], vec![0; n], vec![usize::MAX; n]);
    let (mut on_stack, mut stack, mut next, mut count) = (vec![false; n], Vec::new(), 0, 0);
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0usize)];
        index[start] = next;
        low[start] = next;
        next += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&mut (v, ref mut k)) = work.last_mut() {
            if let Some(&w) = adjacent[v].get(*k) {
                *k += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp[w] = count;
                    if w == v {
                        break;
                    }
                }
                count += 1;
            }
        }
    }
    comp
}

/// Every node a walk along `edges` from `start` meets; `start` itself only when an edge leads back to it.
pub(crate) fn reachable<I: IntoIterator<Item = usize>>(start: usize, edges: impl Fn(usize) -> I) -> BTreeSet<usize> {
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
pub(crate) fn reaches<I: IntoIterator<Item = usize>>(
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
