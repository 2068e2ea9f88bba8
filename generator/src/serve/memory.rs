//! What the service asks of the C allocator so that its memory follows its limits (README, *Peak memory*).
//!
//! glibc's `malloc` gives a thread that allocates while another holds the main arena an arena of its own (up to
//! eight per core), and an arena keeps what is freed in it for its next allocations. The runtime runs each large
//! check on whichever thread it hands the work to (`block_in_place`), so requests one after another each grew
//! another arena to one request's size: 40 requests of a 1 MiB line took the peak to 310 MiB where the bound
//! said ~112, and it stayed there idle (helper 103). Worse, glibc raises its mmap threshold to the size of each
//! large block freed (up to 32 MiB), so the trees and answers of later requests came from the arenas, not from
//! `mmap`, and were kept too.
//!
//! A fixed threshold ends both: every block of 128 KiB or more (glibc's starting threshold: a line, its tree's
//! arrays, an answer) is mapped on its own and unmapped when freed, and fixing it also fixes the trim threshold,
//! so an arena gives back the free memory at its top once it passes that much. Small blocks stay in the arenas.

/// Fixes the allocator's mmap threshold for the process (glibc on Linux; elsewhere nothing is done). Called once
/// by [`super::run`] before its runtime starts.
pub(super) fn give_back_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        /// `M_MMAP_THRESHOLD` of glibc's `<malloc.h>`.
        const M_MMAP_THRESHOLD: i32 = -3;
        /// Blocks from this size up are mapped apart and given back when freed: glibc's own starting threshold.
        const MMAP_THRESHOLD: i32 = 128 << 10;
        extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        // SAFETY: `mallopt` takes two integers and changes only the allocator's tuning; it is called before the
        // runtime's threads start.
        let _ = unsafe { mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) };
    }
}
